#pragma once
/* Private to the Redis (Alakai) source: redis_source.c (timers, ops), redis_conn.c
 * (connections, deadlines, backoff, the notification subscription), redis_view.c
 * (publishing), redis_secure.c (credentials and TLS), redis_sweep.c (key discovery: SCAN
 * sweeps, notified keys, a chain's key) and redis_fetch.c (the batches those keys become:
 * one pipelined HGETALL per key, or the sized per-key path for a chain). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hiredis/read.h>

#include "redis_index.h"
#include "redis_url.h"
#include "source.h"

struct redisAsyncContext;
struct redisReply;
struct event;
struct rd_resolver;
struct rd_lookup;
struct rd_secret;
struct tlsb;

enum {
    RS_SCAN_COUNT = 250,            /* SCAN COUNT hint per call: ~250 HGETALLs sent at once */
    RS_SWEEP_INFLIGHT = 8,          /* SCAN steps being fetched at once: ≤ ~2000 HGETALLs */
    RS_MAX_FIELDS = 64,             /* attempt fields read per task in a sweep */
    RS_CHAIN_MAX_FIELDS = 1000,     /* attempt fields read for a chain */
    RS_RECORD_CAP = 1 << 20,        /* records above 1 MiB: dropped unread (sweeps), never
                                       fetched (chains) */
    RS_REPLY_ELEMENTS = 2 * RS_CHAIN_MAX_FIELDS, /* elements built per array reply (the
                                       rest are read past: redis_reply.c) */
    RS_SWEEP_ALL_CAP = 256 << 10,   /* fetch all attempts (overlap) below this total */
    RS_MAX_TASKS = 400000,          /* index cap; beyond it counts are marked ≈ */
    RS_DIRTY_CAP = 8192,            /* notified keys waiting; overflow → full resync */
    RS_DIRTY_BATCH = 500,
    RS_PAGE_MAX = 500,
    RS_DLQ_PAGE = 100,
    RS_CONNECT_TIMEOUT = 3,         /* s: name lookup, connect, TLS handshake, AUTH */
};

/* RC_SECRET: resolving secret references (no deadline of ours: cmd: has its own);
 * RC_AUTH: connected, AUTH sent (the connect deadline still runs). */
typedef enum { RC_NONE = 0, RC_SECRET, RC_RESOLVING, RC_CONNECTING, RC_AUTH, RC_READY }
    rs_conn_state;

typedef enum { RS_BATCH_SWEEP, RS_BATCH_DIRTY, RS_BATCH_CHAIN } rs_batch_kind;

typedef struct rs_dirty {           /* keys named by keyspace notifications */
    char **keys;
    size_t n, cap;
    bool overflow;
} rs_dirty;

typedef struct rs_src {
    rd_source base;
    rd_redis_url url;
    char *prefix;                   /* "alakai-executions" */
    char *match;                    /* SCAN MATCH pattern: escaped prefix + ":*" */
    struct event_base *evb;

    struct rd_resolver *dns;        /* io/resolve.h: names looked up without blocking */
    struct rd_lookup *dns_req;
    char ip[64];                    /* resolved address when url.needs_dns */

    struct redisAsyncContext *ac;   /* commands */
    rs_conn_state state;
    unsigned pending;               /* replies outstanding on ac */
    double progress_at;             /* last reply seen / connect start (deadlines) */
    unsigned long replies, replies_seen;   /* replies counted / as on_watch last saw them */
    double backoff;
    int in_cb;                      /* depth inside our hiredis callbacks */
    bool drop_pending;              /* teardown requested from inside a callback */
    char drop_why[160];

    struct redisAsyncContext *sub;  /* keyspace notifications (second connection) */
    rs_conn_state sub_state;
    double sub_started, sub_backoff;
    bool notify_on;                 /* server has K + hash events enabled */
    bool sub_ever;                  /* subscribed before (a re-subscription resyncs) */
    bool debug;                     /* RD_REDIS_DEBUG: sweep figures on stderr */
    /* ac's reader: the defaults, and ours (redis_reply.c: the string and array caps) */
    const redisReplyObjectFunctions *reply_default;
    redisReplyObjectFunctions reply_fns;
    double cb_max;                  /* costliest fetch callback, CPU s (debug only) */

    /* credentials and TLS (redis_secure.c) */
    bool store_is_ref;              /* store = env:/file:/cmd: giving the URL */
    bool url_ready;                 /* url parsed (after resolving a store reference) */
    bool creds_ready;               /* password resolved, or none configured */
    bool auth_failed;               /* resolve the references again before reconnecting */
    bool setup_error;               /* settings that cannot work: no automatic retry */
    struct rd_secret *secret;       /* the reference being resolved */
    char *password;                 /* AUTH password (wiped when freed); NULL = no AUTH */
    char *store_value;              /* the resolved store reference (wiped): rs_redact */
    struct tlsb *tls;               /* rediss://: the bridge hiredis connects through */
    char tls_ip[80];                /* the address the bridge was made for: "ip|port" */

    struct event *ev_tick, *ev_watch, *ev_retry, *ev_sub_retry, *ev_kick;
    struct event *ev_sweep_done;    /* rs_sweep_finish, out of the last reply's callback */
    bool publish_due;               /* rs_sweep_finish's second step (the publish) is next */

    /* sweeps */
    rix *ix;
    bool sweeping, swept_once, resync_wanted;
    bool sized;                      /* DBSIZE sent ahead of the first sweep */
    char cursor[32];
    bool scan_inflight, cursor_done;
    double sweep_started, sweep_last, sweep_secs;
    unsigned sweep_keys;
    int batches;                    /* batches in flight */
    rs_dirty dirty;

    /* view state */
    rd_exec_filter filter;
    uint32_t filter_fp;
    rix_cursor page_from;
    char *chain_id;                 /* requested chain, pending until answered */
    bool chain_wanted, chain_busy;
    bool dlq_wanted, dlq_sent;
    int dlq_pages;
    uint64_t published_version;
    long published_orphans;
    bool view_dirty;

    /* the store's URL list and failover, the server's replication role (redis_replica.c) */
    char *urls;                     /* the store as written or resolved (wiped when freed) */
    size_t n_urls, url_i, url_tries; /* how many; the one in s->url; tried since connected */
    char url_ok[96];                /* where the connection answered, "" while down */
    char url_lost[96], url_why[120];/* the one lost before, and why, until another answers */
    char fail_why[160];             /* rs_fail's last reason */
    bool is_replica;                /* INFO: role:slave */
    double repl_at;                 /* last INFO replication (clock_mono) */

    bool settled;
    bool freeing;
    bool unusable;                  /* bad store URL: reported, never connects */
    char unusable_why[256];
} rs_src;

double rs_now(void);                /* clock_wall() (io/clock.h) */
/* Send a command on the main connection; false (callback not registered) when the
 * connection is not usable. */
bool rs_command(rs_src *s, void (*cb)(struct redisAsyncContext *, void *, void *),
                void *priv, int argc, const char **argv, const size_t *argvlen);
/* redis_reply.c: the main reader's constructors keep strings to RS_RECORD_CAP and arrays
 * to RS_REPLY_ELEMENTS; rs_reply_count is an array's true element count. */
void rs_reply_hook(rs_src *s, redisReader *rd);
size_t rs_reply_count(const struct redisReply *r);
void rs_reply_begin(rs_src *s);     /* bracket every reply callback */
void rs_reply_end(rs_src *s);
bool rs_ready(const rs_src *s);
/* msg with no part of a referenced store value in it (core/redact.h); a copy otherwise. */
void rs_redact(const rs_src *s, const char *msg, char *out, size_t cap);
/* The current URL's "host:port" or socket path; the reference's name ("env:REDIS_URL",
 * "URL 2 of env:REDIS_URL") when the store is one. */
void rs_where(const rs_src *s, char *out, size_t cap);
void rs_fail(rs_src *s, const char *why);    /* source stale/down, keeps data */
void rs_drop(rs_src *s, const char *why);    /* tear the connection down (deferred-safe) */
void rs_publish(rs_src *s, bool force);
/* Previous page: the n matching tasks just newer than c become the page. */
void rs_publish_prev(rs_src *s, const rix_cursor *c, size_t n, uint32_t *idx);
void rs_kick(rs_src *s);                     /* run rs_step soon from the loop */
void rs_conn_start(rs_src *s);               /* connect (resolving what is needed first) */
void rs_sub_close(rs_src *s);                /* drop the subscription (not from its callback) */
/* A setting failed (a secret, the URL it gave, the TLS files): the source fails with why;
 * retried with backoff unless setup (then only on an explicit refresh). */
void rs_secret_failed(rs_src *s, const char *why, bool setup);

/* redis_secure.c */
/* true when the URL and credentials are known; else resolves them (state RC_SECRET) and
 * calls rs_conn_start when done. */
bool rs_secure_ready(rs_src *s);
const char *rs_auth_user(const rs_src *s);   /* the ACL user, NULL = the default user */
/* Sends AUTH on ac (first command of a connection); false when no password is set. */
bool rs_auth_send(rs_src *s, struct redisAsyncContext *ac,
                  void (*cb)(struct redisAsyncContext *, void *, void *));
bool rs_access_error(const char *err);       /* NOAUTH, WRONGPASS, NOPERM */
/* A server error as the operator should read it (names the user, never the password). */
void rs_error_text(const rs_src *s, const char *cmd, const char *err, char *out, size_t cap);
/* rediss://: the bridge for the current address (remade when it changed). */
bool rs_bridge_ready(rs_src *s, char *err, size_t cap);
const char *rs_bridge_path(const rs_src *s);     /* NULL without TLS */
void rs_bridge_clear_error(rs_src *s);
/* The bridge's reason for the last failure when there is one, else fallback. */
const char *rs_conn_error(const rs_src *s, const char *fallback);
void rs_secure_free(rs_src *s);              /* after the contexts are freed */

/* redis_replica.c */
/* The store's URL list (one or more, redis_url_split): checks every item, keeps the text and
 * parses the current one into s->url. secret: the text came from a reference. */
bool rs_urls_set(rs_src *s, const char *text, bool secret, char *err, size_t cap);
/* A connection failed: the next URL of the list. Returns the delay before connecting: 0
 * while some URL of the list has not been tried since the last success, else -1 (the
 * caller's backoff). */
double rs_urls_next(rs_src *s);
void rs_urls_connected(rs_src *s);           /* answered: host shown, failover said */
/* A connection failing now moves on to another URL at once (no failure to show yet). */
bool rs_urls_more(const rs_src *s);
void rs_urls_free(rs_src *s);
/* INFO text (any sections): role, link, lag → the model. */
void rs_replica_info(rs_src *s, const char *info);
/* The poll's PING is an INFO replication now and then (same command count) when the
 * server is a replica or the store lists several URLs; true when it sent it. */
bool rs_replica_poll(rs_src *s);
/* Keyspace notifications off on this server: a note saying so (each server has its own). */
void rs_notify_note(rs_src *s);

/* redis_conn.c */
/* Answer a waiting chain / DLQ request with msg (the source cannot serve it now). */
void rs_answer_pending(rs_src *s, const char *msg);
void rs_sub_start(rs_src *s);                /* subscribe to keyspace events when possible */
void rs_drop_deferred(rs_src *s);            /* the teardown rs_drop deferred, once allowed */
void rs_conn_events(rs_src *s);              /* make ev_watch, ev_retry, ev_sub_retry */

/* On the main connection a string reply over RS_RECORD_CAP arrives empty (len 0, str "")
 * with its true length in ->integer (redis_conn.c's reader never copies it). */

/* redis_fetch.c */
/* Fetch batches (redis_fetch.c): one job per key, run with bounded commands in flight. */
typedef struct rs_batch rs_batch;
rs_batch *rs_batch_new(rs_src *s, rs_batch_kind kind, size_t n);
size_t rs_batch_size(const rs_batch *b);
const char *rs_batch_last_key(const rs_batch *b);     /* NULL when empty */
void rs_batch_add(rs_batch *b, const char *key, size_t len);
void rs_batch_run(rs_batch *b);
void rs_sweep_finish(rs_src *s);             /* from ev_sweep_done */

void rs_sweep_start(rs_src *s);
void rs_sweep_continue(rs_src *s);           /* issue the next SCAN (from the loop) */
void rs_dirty_add(rs_src *s, const char *key, size_t len);
void rs_dirty_flush(rs_src *s);              /* fetch notified keys */
void rs_dirty_free(rs_dirty *d);
void rs_chain_fetch(rs_src *s);              /* fetch s->chain_id */
/* "taskId" from a key "{prefix}:{taskId}"; NULL when the key is not ours. */
const char *rs_task_id(const rs_src *s, const char *key, size_t len, size_t *idlen);
