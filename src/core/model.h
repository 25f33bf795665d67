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
    long ttl_ms;                  /* x-message-ttl, -1 none */
    /* SQS (0/-1 elsewhere): ready = visible, unacked = in flight */
    long delayed;                 /* 0 none or unknown */
    long max_receive;             /* RedrivePolicy maxReceiveCount, 0 none */
    long retention_s;             /* MessageRetentionPeriod, 0 unknown */
    bool not_draining;            /* visible grew across polls while nothing in flight */
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
} rd_dlq_entry;

typedef enum {
    RD_SRC_CONNECTING = 0,
    RD_SRC_OK,
    RD_SRC_STALE,           /* answered before, failing now: data kept */
    RD_SRC_DOWN,            /* never answered / gave up */
} rd_src_state;

enum { RD_SRC_NOTES = 6, RD_SRC_NOTE_LEN = 200 };

typedef struct rd_source_status {
    char name[32];          /* "postgresql", "redis", "rabbitmq", "workers-http" */
    rd_src_state state;
    char error[256];        /* raw last error, "" when none */
    /* optional parts that failed while the source stays ok, raw:
     * "queues: relation \"job_tags\" does not exist" */
    char notes[RD_SRC_NOTES][RD_SRC_NOTE_LEN];
    size_t n_notes;
    double last_ok;         /* epoch of the last good answer, 0 never */
    double since;           /* epoch when the current state began */
    /* what the source learned about its server, for `redrive check` (raw text) */
    char version[48];       /* the server's version as it reports it; "" unknown */
    unsigned facts_known;   /* RD_FACT_* the source has found out */
    unsigned facts;         /* those of facts_known that hold */
    char tls[160];          /* TLS state of the last handshake ("" = no TLS), raw */
    bool tls_unverified;    /* certificate not verified (insecure): show it */
} rd_source_status;

/* Facts a source may learn about its server (rd_source_status.facts). */
enum {
    RD_FACT_READ_ONLY = 1u << 0,   /* PostgreSQL: the session's transactions are read-only */
    RD_FACT_PGMQ      = 1u << 1,   /* PostgreSQL: the pgmq extension is installed */
    RD_FACT_KEYSPACE  = 1u << 2,   /* Redis: keyspace notifications cover hashes (K + h/A) */
    RD_FACT_TLS       = 1u << 3,   /* the connection is encrypted */
    RD_FACT_TLS_VERIFIED = 1u << 4, /* ... and the server's certificate and name are checked */
    RD_FACT_VERSION   = 1u << 5,   /* the server was asked its version (may stay "") */
};

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
    long execs_searched;            /* > 0: a filtered page stopped at this many rows
                                     * searched (the next page searches further back) */
    RD_VEC(rd_execution) chain;     /* current chain, oldest first */
    char *chain_id;                 /* which execution the chain was asked for */
    RD_VEC(rd_worker) workers;
    RD_VEC(rd_queue) queues;
    RD_VEC(rd_dlq_entry) dlq;
    bool dlq_loaded;                /* a peek has been done */
    long dlq_total;                 /* total DLQ size, -1 unknown */
    RD_VEC(rd_count) counts;
    RD_VEC(rd_source_status) sources;
    long orphan_suspects;           /* alakai; -1 n/a */
    double failing_rate;            /* failures per minute in the last window, -1 unknown */
} rd_model;

rd_model *model_new(void);
void model_free(rd_model *m);
void model_changed(rd_model *m);

void execution_clear(rd_execution *e);   /* frees members, zeroes */
void worker_clear(rd_worker *w);
void queue_clear(rd_queue *q);
void dlq_entry_clear(rd_dlq_entry *d);

/* Replace a list wholesale; the model takes ownership of items (array and members). */
void model_set_execs(rd_model *m, rd_execution *items, size_t n, bool more);
void model_set_chain(rd_model *m, const char *id, rd_execution *items, size_t n);
void model_set_workers(rd_model *m, rd_worker *items, size_t n);
void model_set_queues(rd_model *m, rd_queue *items, size_t n);
void model_set_dlq(rd_model *m, rd_dlq_entry *items, size_t n, long total);
void model_set_counts(rd_model *m, rd_count *items, size_t n);

/* Source freshness; returns the entry (created on first use). */
rd_source_status *model_source(rd_model *m, const char *name);
void model_source_ok(rd_model *m, const char *name, double now);
void model_source_fail(rd_model *m, const char *name, const char *error, double now);
/* What the source learned about its server: its version (copied, capped; NULL = the
 * server would not say; either way RD_FACT_VERSION becomes known) and a fact. */
void model_source_version(rd_model *m, const char *name, const char *version);
void model_source_fact(rd_model *m, const char *name, unsigned fact, bool holds);
/* The TLS state of a source's connection (protocol, cipher, verification). */
void model_source_tls(rd_model *m, const char *name, const char *info, bool unverified);
/* Replaces the source's notes (at most RD_SRC_NOTES, each cut to RD_SRC_NOTE_LEN - 1 bytes);
 * the generation moves only when they changed. */
void model_source_notes(rd_model *m, const char *name, const char *const *notes, size_t n);

const char *elig_name(rd_elig e);        /* "yes" "no" "config-error" "unknown" */
const char *health_name(rd_health h);    /* "healthy" ... */
const char *src_state_name(rd_src_state s);
