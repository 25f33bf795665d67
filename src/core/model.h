#pragma once
/*
 * The model: what the sources have read, in one shape for every profile.
 * No I/O here. Strings are owned by the struct that holds them and are RAW
 * (unsanitized, but capped in length by the source); the UI and the snapshot
 * printer sanitize at output time.
 *
 * Times are epoch seconds as double; 0 means unknown. Integers use -1 for
 * unknown unless stated.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    RD_ELIG_UNKNOWN = 0,
    RD_ELIG_YES,
    RD_ELIG_NO,
    RD_ELIG_CONFIG_ERROR,   /* e.g. tasker max_attempts = 0 */
} rd_elig;

typedef struct rd_verdict {
    rd_elig verdict;
    bool flagged;           /* suspicious but legal config (retryable=false, max>1) */
    char why[112];          /* short human reason: "budget exhausted (3/3)" */
} rd_verdict;

enum {
    RD_EXEC_ORPHAN    = 1u << 0,  /* alakai: running longer than orphan_after */
    RD_EXEC_OVERLAP   = 1u << 1,  /* alakai: older attempt still running */
    RD_EXEC_MALFORMED = 1u << 2,  /* record could not be decoded; error says why */
    RD_EXEC_OVERSIZED = 1u << 3,  /* record larger than the cap; not fetched */
};

typedef struct rd_execution {
    char *id;               /* execution id / step uuid / task id / job id */
    char *parent_id;        /* tasker: task uuid of the step; else NULL */
    char *name;             /* action_ref / step name / job name */
    char *status;           /* lower-case, as the system names it */
    int attempt;            /* system numbering (attune retry_count+1, alakai attempt) */
    int max_attempts;       /* total attempts allowed, -1 unknown */
    rd_verdict elig;
    char *chain_root;       /* root of the retry chain; NULL = itself */
    char *retry_of;         /* immediate predecessor; NULL = none */
    char *reason;           /* retry reason / transition reason / error code */
    char *error;            /* one error message, raw */
    char *fingerprint;      /* normalised error (fingerprint.h) */
    char *worker;           /* worker id or name */
    double created_at, updated_at, finished_at;
    double started_at;      /* when the attempt started, where the store records it; 0 unknown */
    double next_retry_min, next_retry_max;   /* ETA range, 0 = none */
    unsigned flags;         /* RD_EXEC_* */
} rd_execution;

typedef enum {
    RD_HEALTH_UNKNOWN = 0,
    RD_HEALTH_HEALTHY,
    RD_HEALTH_DEGRADED,
    RD_HEALTH_UNHEALTHY,
} rd_health;

typedef struct rd_worker {
    char *id;
    char *name;
    char *status;           /* active / inactive / draining / busy / error / offline ... */
    char *reported_health;  /* what the store says, NULL when absent */
    char *tags;             /* tags / runtime, free text */
    rd_health health;       /* computed */
    char health_reason[96]; /* "heartbeat 5m old", "12 consecutive failures" */
    double health_until;    /* health and reason stand until this time (health.c) */
    double heartbeat_at;    /* 0 = never */
    long queue_depth;       /* -1 unknown */
    int in_flight;          /* -1 unknown */
    int capacity;           /* -1 unknown */
    double failure_rate;    /* 0..1, -1 unknown */
    int consecutive_failures; /* -1 unknown */
    bool has_metrics;       /* any of depth/rate/failures known */
} rd_worker;

typedef struct rd_queue {
    char *name;
    long depth, ready, unacked;   /* -1 unknown */
    int consumers;                /* -1 unknown */
    double publish_rate, deliver_rate; /* msgs/s, -1 unknown */
    bool is_dlq;
    char *dead_letter_exchange;   /* from arguments, NULL when none */
    long ttl_ms;                  /* message TTL: the lower of x-message-ttl and the policy's
                                     message-ttl (RabbitMQ applies the lower), -1 none */
    /* SQS (0/-1 elsewhere): ready = visible, unacked = in flight */
    long delayed;                 /* 0 none or unknown */
    long max_receive;             /* RedrivePolicy maxReceiveCount, 0 none */
    long retention_s;             /* MessageRetentionPeriod, 0 unknown */
    bool not_draining;            /* visible grew across polls while nothing in flight */
    const char *source;           /* owner (model_set_queues), set by the merge; borrowed */
    /* RabbitMQ: the other limits that delete a DLQ's messages (core/dlqhorizon.h), each the
     * lower of the queue's argument and its effective policy's; <= 0 none */
    long max_length;              /* x-max-length / max-length (messages) */
    bool overflow_rejects;        /* overflow reject-publish(-dlx): the head is never dropped */
    long expires_ms;              /* x-expires / expires: the queue itself, once unused */
    char *ttl_from;               /* "policy NAME" when the policy set the TTL, NULL argument */
    char *limits_note;            /* why the limits cannot be known (hidden, malformed), NULL */
} rd_queue;

typedef struct rd_dlq_entry {
    char *id;               /* message id / dlq_entry_uuid */
    char *queue;            /* source DLQ (queue name or "tasks_dlq") */
    char *execution_id;     /* execution/task it refers to, NULL unknown */
    char *reason;           /* x-death reason / dlq_reason */
    long count;             /* x-death count, -1 unknown */
    char *origin_queue;     /* x-death queue / original_state */
    double first_death_at, last_death_at;
    char *payload;          /* raw, capped */
    bool redelivered;
    /* SQS dead letters (alakai): parsed from the body; 0/NULL unknown */
    int attempt;
    char *task_type;
    double sent_at;
    const char *source;     /* owner of the entry (model_dlq_set), set by the merge; borrowed */
    char *step_id;          /* tasker: the task's failed step (the retry's target), NULL none */
    char *expiration;       /* RabbitMQ: the message's own TTL (expiration property), raw; NULL none */
} rd_dlq_entry;

/* One source's share of the DLQ (a system may have several: Tasker's broker queues and its
 * tasks_dlq table; Alakai's store and its SQS DLQ). Each source replaces only its own part. */
typedef struct rd_dlq_part {
    char *owner;            /* the source's name: "postgresql", "rabbitmq", "redis", "sqs" */
    rd_dlq_entry *items;    /* owned */
    size_t n;
    long total;             /* this source's DLQ size, -1 unknown */
    bool loaded;            /* this source has delivered entries */
    double cached_at;       /* > 0: total read from the last-known snapshot written then,
                               not yet replaced by this source's live answer */
} rd_dlq_part;

/* One source's queues (Tasker lists its PGMQ queues from PostgreSQL and its broker's from
 * RabbitMQ; Alakai its SQS queues). Same shape as rd_dlq_part: the owner comes first. */
typedef struct rd_queue_part {
    char *owner;
    rd_queue *items;        /* owned */
    size_t n;
} rd_queue_part;

typedef enum {
    RD_SRC_CONNECTING = 0,
    RD_SRC_OK,
    RD_SRC_STALE,           /* answered before, failing now: data kept */
    RD_SRC_DOWN,            /* never answered / gave up */
} rd_src_state;

enum { RD_SRC_NOTES = 6, RD_SRC_NOTE_LEN = 200 };

/* A source's long first read (the Redis source's first sweep of the task hashes): while
 * `active`, the views that need the whole index (counts, DLQ, groups) are partial. */
typedef struct rd_progress {
    bool active;
    long done;              /* items read so far */
    long total;             /* estimated total (DBSIZE or a sample), -1 unknown */
    double share;           /* measured share of one server core, -1 unknown */
} rd_progress;

typedef struct rd_source_status {
    char name[32];          /* "postgresql", "redis", "rabbitmq", "workers-http" */
    rd_src_state state;
    char error[256];        /* raw last error, "" when none */
    /* optional parts that failed while the source stays ok, raw:
     * "queues: relation \"job_tags\" does not exist" */
    char notes[RD_SRC_NOTES][RD_SRC_NOTE_LEN];
    size_t n_notes;
    double last_ok;         /* epoch of the last good answer, 0 never */
    double every_s;         /* the source's own poll interval when longer than the
                               system's poll (RabbitMQ: 5 s), 0 = the system's */
    double since;           /* epoch when the current state began */
    /* what the source learned about its server, for `redrive check` (raw text) */
    char version[48];       /* the server's version as it reports it; "" unknown */
    unsigned facts_known;   /* RD_FACT_* the source has found out */
    unsigned facts;         /* those of facts_known that hold */
    char tls[160];          /* TLS state of the last handshake ("" = no TLS), raw */
    bool tls_unverified;    /* certificate not verified (insecure): show it */
    /* SQS: which AWS credentials provider supplied the keys ("environment",
     * "shared-file:PROFILE", "credential-process:PROFILE", "ecs", "imds"; never a secret),
     * "" none yet; when they expire (epoch, 0 never) */
    char creds[48];
    double creds_expires;
    /* Reading from replicas (docs/sources.md "Reading from standbys"): the host that
     * answered when the store lists more than one ("host:port", raw; "" = one host), its
     * role ("standby", "primary"; "" unknown), its replication lag (lag_known), and the
     * last failover ("from HOST (why)", raw; "" none) and when it happened */
    char host[96];
    char role[12];
    bool lag_known;
    double lag_s;
    char failover[200];
    double failover_at;
    /* Push (docs/sources.md "Push"): "on — LISTEN a, b" while the store's notifications
     * drive the refresh, "off — standby" (or another reason) when they cannot; "" = the
     * store does not notify (raw) */
    char push[160];
    rd_progress progress;   /* a long first read under way (the Redis sweep) */
} rd_source_status;

/* Facts a source may learn about its server (rd_source_status.facts). */
enum {
    RD_FACT_READ_ONLY = 1u << 0,   /* PostgreSQL: the session's transactions are read-only */
    RD_FACT_PGMQ      = 1u << 1,   /* PostgreSQL: the pgmq extension is installed */
    RD_FACT_KEYSPACE  = 1u << 2,   /* Redis: keyspace notifications cover hashes (K + h/A) */
    RD_FACT_TLS       = 1u << 3,   /* the connection is encrypted */
    RD_FACT_TLS_VERIFIED = 1u << 4, /* ... and the server's certificate and name are checked */
    RD_FACT_VERSION   = 1u << 5,   /* the server was asked its version (may stay "") */
    RD_FACT_REPLICA   = 1u << 6,   /* Redis: the server read from is a replica (INFO role) */
};

/* The core API as the last probe (GET /auth/me, at a low rate and after each action) and
 * the last action saw it. Raw strings; never a token. */
typedef enum {
    RD_CORE_NONE = 0,       /* no core configured, or not probed by this process */
    RD_CORE_CHECKING,       /* the first probe has not answered yet */
    RD_CORE_OK,             /* answered, naming the operator's identity */
    RD_CORE_ERROR,          /* answered (or credentials failed) but did not accept us */
    RD_CORE_DOWN,           /* no answer: connection refused, timeout, DNS */
} rd_core_state;

typedef struct rd_core_status {
    rd_core_state state;
    char identity[128];     /* who the core says the operator is, "" unknown (ok but not
                               logged in yet: a jwt-login that will prompt) */
    char error[256];        /* why not ok, "" when ok */
    double checked_at;      /* epoch of the last probe answer, 0 never */
    double since;           /* epoch when the current state began */
    char last_action[200];  /* "retry: 2 of 2 succeeded", "" none yet */
    bool last_action_failed;
    double last_action_at;
} rd_core_status;

/* Longest status name kept whole (Tasker's enqueued_as_error_for_orchestration is 35). */
enum { RD_STATUS_MAX = 64 };

typedef struct rd_count {
    char status[RD_STATUS_MAX];
    long count;
    bool estimated;         /* "≈" */
    bool capped;            /* "10000+" */
} rd_count;

/* Generic owned array. */
#define RD_VEC(T) struct { T *items; size_t n, cap; }

typedef struct rd_model {
    uint64_t generation;            /* bumped on every change; UI repaints on change */
    RD_VEC(rd_execution) execs;     /* current page, newest first */
    bool execs_more;                /* another page exists after this one */
    bool execs_newer;               /* the page does not start at the newest execution
                                     * (a later page, or where a jump to an id landed) */
    long execs_searched;            /* > 0: a filtered page stopped at this many rows
                                     * searched (the next page searches further back) */
    RD_VEC(rd_execution) chain;     /* current chain, oldest first */
    char *chain_id;                 /* which execution the chain was asked for */
    /* One execution in full (detail.h), read only when asked (the detail pane, snapshot
     * --view execution): the id asked for, its record as JSON (NULL: none) and why there
     * is none ("no such execution", the profile has no query for it) */
    char *detail_id, *detail, *detail_why;
    /* The drain cockpit's worker: its running executions as the store says (a query by
     * that worker, not the page on screen); running_known false: not asked, not answered
     * or the profile cannot say */
    RD_VEC(rd_execution) running;
    char *running_worker;
    bool running_known;
    RD_VEC(rd_worker) workers;
    /* Queues are owned per source too (queue_parts, sorted by owner) and merged into
     * `queues` (shallow copies, in owner order) by model_set_queues; read, never write. */
    RD_VEC(rd_queue_part) queue_parts;
    RD_VEC(rd_queue) queues;
    /* The DLQ is owned per source (dlq_parts, sorted by owner) and merged into the three
     * fields below by model_dlq_set/model_dlq_total; read those, never write them.
     * dlq.items are shallow copies: their strings belong to the parts. */
    RD_VEC(rd_dlq_part) dlq_parts;
    RD_VEC(rd_dlq_entry) dlq;       /* union of the parts' entries, in owner order */
    bool dlq_loaded;                /* some source has delivered entries (a peek was done) */
    long dlq_total;                 /* sum of the known parts' totals, -1 when none known */
    /* read-only: a peek with side effects (a RabbitMQ get, an SQS receive) was asked for
     * and not done (model_dlq_peek_off) */
    bool dlq_peek_off;
    /* the store's DLQ share is read a page at a time (model_dlq_page): the position of
     * its page's first entry (1-based, 0: not paged), whether a page follows, and the
     * order (oldest first after G) */
    long dlq_first;
    bool dlq_more, dlq_oldest;
    double dlq_cached_at;           /* > 0: some of dlq_total is cached (the oldest such
                                     * part's time); 0: every known part is live */
    RD_VEC(rd_count) counts;
    RD_VEC(rd_source_status) sources;
    rd_core_status core;            /* the core API's reachability (model_core_*) */
    long orphan_suspects;           /* alakai; -1 n/a */
    double failing_rate;            /* failures per minute in the last window, -1 unknown */
    /* Whole-store figures read in the same round trip as the failing rate (the profile's
     * failing query, docs/profiles.md): the retry-eligible executions (-1 unknown: the
     * fleet falls back to the page, a bound), eligible_capped: the count stopped at its
     * cap (a lower bound), eligible_upper: some counted may be superseded by a later
     * attempt (an upper bound); the oldest queued execution's created time (epoch s; 0 none
     * queued, -1 unknown) */
    long store_eligible;
    bool store_eligible_capped, store_eligible_upper;
    double oldest_queued_at;
    /* error groups across the store in a window (storegroups.h), as a store's source last
     * computed them on demand; NULL: never asked or the source cannot */
    struct rd_sgroups *sgroups;
    bool sgroups_pending;           /* asked for, not answered yet */
    /* the store's whole DLQ grouped by reason and by queue (dlqgroup.h), read with its DLQ
     * page; NULL: not read or the profile cannot */
    struct rd_dlq_sgroups *dlq_sgroups;
} rd_model;

rd_model *model_new(void);
void model_free(rd_model *m);
void model_changed(rd_model *m);
/* A copy that owns everything the last-known snapshot writes (model_to_json_at's "cache"
 * view: counts, the executions page, workers, queues, the DLQ parts' totals, the sources'
 * plain state) and nothing else (model_copy.c): handed to a writer thread. */
rd_model *model_copy_cache(const rd_model *m);

void execution_clear(rd_execution *e);   /* frees members, zeroes */
void worker_clear(rd_worker *w);
void queue_clear(rd_queue *q);
void dlq_entry_clear(rd_dlq_entry *d);

/* Replace a list wholesale; the model takes ownership of items (array and members). */
void model_set_execs(rd_model *m, rd_execution *items, size_t n, bool more);
void model_set_chain(rd_model *m, const char *id, rd_execution *items, size_t n);
/* The record of execution id: json (taken; NULL none, `why` says why). */
void model_set_detail(rd_model *m, const char *id, char *json, const char *why);
void model_set_workers(rd_model *m, rd_worker *items, size_t n);
/* The running executions of `worker` (the model takes items; known false: unknown). */
void model_set_running(rd_model *m, const char *worker, rd_execution *items, size_t n, bool known);
/* A source's queues: replace its share (the model takes ownership; NULL/0 = none); the
 * other sources' queues are kept and the merged `queues` rebuilt. */
void model_set_queues(rd_model *m, const char *owner, rd_queue *items, size_t n);
void model_queues_reset(rd_model *m);    /* every source's queues dropped */
/* A source's DLQ share: replace its entries (the model takes ownership; NULL/0 = none,
 * still "loaded") or its total (-1 unknown). Other sources' shares are kept; the merged
 * view (dlq, dlq_total, dlq_loaded) is rebuilt. `owner` is the source's name. */
void model_dlq_set(rd_model *m, const char *owner, rd_dlq_entry *items, size_t n);
void model_dlq_total(rd_model *m, const char *owner, long total);
/* The store's DLQ groups (the model takes ownership; NULL: none known). */
void model_set_dlq_sgroups(rd_model *m, struct rd_dlq_sgroups *g);
/* Entry id of owner's part is gone from the store (resolved through the core): dropped from
 * the list at once and the part's known total lowered by one, until the source's next read
 * replaces both; false when the part has no such entry. */
bool model_dlq_remove(rd_model *m, const char *owner, const char *id);
void model_dlq_peek_off(rd_model *m, bool off);
/* The store's DLQ page just read: its first entry's position, a page follows, the order. */
void model_dlq_page(rd_model *m, long first, bool more, bool oldest);
/* failures per minute (< 0: unknown); the generation moves only when it changed */
void model_set_failing_rate(rd_model *m, double per_min);
/* The whole-store figures (model.h above; eligible < 0 / oldest_queued_at < 0: unknown);
 * the generation moves only when one changed. */
void model_set_store_figures(rd_model *m, long eligible, bool capped, bool upper,
                             double oldest_queued_at);
/* Alakai's orphan suspects (< 0: n/a); the generation moves only when it changed. */
void model_set_orphan_suspects(rd_model *m, long n);
/* Where the page of executions stands: `searched` > 0 when a filtered page stopped after
 * that many rows (0 otherwise), `newer` when it does not start at the newest one. */
void model_set_execs_window(rd_model *m, long searched, bool newer);
/* The store-wide error groups (the model takes g; NULL drops them). */
void model_set_sgroups(rd_model *m, struct rd_sgroups *g);
/* A source is computing them (asked, not answered yet). */
void model_sgroups_pending(rd_model *m, bool pending);
/* " (redis 2 + sqs 0)": each DLQ source's known total when more than one source has one
 * (the overview's DLQ size is their sum), "" otherwise. */
void model_dlq_breakdown(const rd_model *m, char *out, size_t cap);
/* Forget every share (a model replaced by a loaded snapshot). */
void model_dlq_reset(rd_model *m);
/* The DLQ totals just loaded from a last-known snapshot written at `at`: each part is marked
 * cached until its source answers (model_dlq_set/_total replace it, never add to it); a
 * total that names no source (an older cache file) is dropped: it could only be added. */
void model_dlq_mark_cached(rd_model *m, double at);
/* Cached parts of owners that are not among `live` (n names) are dropped: no source will
 * ever replace them. */
void model_dlq_drop_cached(rd_model *m, const char *const *live, size_t n);
void model_set_counts(rd_model *m, rd_count *items, size_t n);
/* Replace every source's status (a loaded snapshot's; the model takes items). */
void model_set_sources(rd_model *m, rd_source_status *items, size_t n);

/* Source freshness; returns the entry (created on first use). */
rd_source_status *model_source(rd_model *m, const char *name);
void model_source_ok(rd_model *m, const char *name, double now);
void model_source_fail(rd_model *m, const char *name, const char *error, double now);
/* What the source learned about its server: its version (copied, capped; NULL = the
 * server would not say; either way RD_FACT_VERSION becomes known) and a fact. */
void model_source_version(rd_model *m, const char *name, const char *version);
void model_source_fact(rd_model *m, const char *name, unsigned fact, bool holds);
/* The source's first read: progress (NULL or !active: none runs, the views are whole). */
void model_source_progress(rd_model *m, const char *name, const rd_progress *p);
/* Some source's first read is under way: counts, the DLQ and the groups are partial. */
bool model_partial(const rd_model *m);
/* "partial: reading tasks: ..." of the first source reading (out ""; false when none). */
bool model_partial_text(const rd_model *m, char *out, size_t cap);
/* "reading tasks: 420,000 of ~1,000,000 (42 %), 25 % of one Redis core"; "" when none. */
void source_progress_text(const rd_source_status *s, char *out, size_t cap);
/* The source polls every `every_s` seconds, not at the system's poll (model_source_fresh). */
void model_source_every(rd_model *m, const char *name, double every_s);
/* Whether the source's data is fresh at `now`: answered within one missed poll of ITS
 * cadence (2 × max(poll_s, every_s) + 1 s), so a steady poll never shows an age; the age
 * shown grows only once an answer is really late. */
double source_fresh_s(const rd_source_status *s, double poll_s);
bool source_is_fresh(const rd_source_status *s, double poll_s, double now);

/* The TLS state of a source's connection (protocol, cipher, verification). */
void model_source_tls(rd_model *m, const char *name, const char *info, bool unverified);
/* Which credentials provider supplied the source's keys, and their expiry (0 = never). */
void model_source_creds(rd_model *m, const char *name, const char *provider, double expires);
/* Whether the source's refresh is pushed by the store's notifications (NULL/"" = n/a). */
void model_source_push(rd_model *m, const char *name, const char *state);
/* The host that answered (NULL/"" when the store names one), its role (NULL unknown) and
 * lag (< 0 unknown); the generation moves only when the shown text changes (lag in whole
 * seconds). */
void model_source_replica(rd_model *m, const char *name, const char *host, const char *role,
                          double lag_s);
/* The source moved to another host of its list: "from HOST (why)". */
void model_source_failover(rd_model *m, const char *name, const char *what, double now);
/* Replaces the source's notes (at most RD_SRC_NOTES, each cut to RD_SRC_NOTE_LEN - 1 bytes);
 * the generation moves only when they changed. */
void model_source_notes(rd_model *m, const char *name, const char *const *notes, size_t n);

/* The core API: a probe's outcome (identity when ok, why otherwise; copied, capped) and
 * the outcome of the last action. The generation moves only when something shown changed. */
void model_core_probe(rd_model *m, rd_core_state st, const char *identity, const char *why,
                      double now);
void model_core_action(rd_model *m, const char *outcome, bool failed, double now);
const char *core_state_name(rd_core_state s);   /* "ok" "error" "down" "checking" "none" */
/* The SQS backlog for the Overview and `snapshot` (queues with retention_s > 0). */
typedef struct rd_backlog {
    size_t queues, dlqs;                /* SQS main queues and DLQs in the model */
    long visible, in_flight, delayed;   /* summed over the main queues */
    long dead;                          /* visible in the DLQs */
    size_t not_draining;                /* main queues flagged not draining */
    const char *stuck;                  /* first flagged queue's name (model-owned), or NULL */
} rd_backlog;
void model_backlog(const rd_model *m, rd_backlog *b);

const char *elig_name(rd_elig e);        /* "yes" "no" "config-error" "unknown" */
const char *health_name(rd_health h);    /* "healthy" ... */
const char *src_state_name(rd_src_state s);
