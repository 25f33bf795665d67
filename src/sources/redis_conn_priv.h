#pragma once
/*
 * Private to redis_conn.c, redis_secure.c and redis_replica.c: the connection's state, and
 * the functions the three call across. redis_conn.c holds the connections' life (lookup,
 * connect, AUTH, deadlines, backoff, teardown, the subscription); redis_secure.c the
 * credentials and the TLS bridge (the `sec` group); redis_replica.c the store's URL list,
 * failover and replication role (the `urls` group). They read downward: redis_conn.c
 * calls the other two, redis_secure.c calls redis_replica.c, and neither calls back up
 * (redis_secure.c answers through sec.resolved; tests/house/layering.py checks it).
 */
#include <stdbool.h>
#include <stddef.h>

#include "redis_conn.h"
#include "redis_reply.h"
#include "redis_url.h"
#include "../io/loop.h"

struct rd_resolver;
struct rd_lookup;
struct rd_secret;
struct tlsb;

enum { RS_CONNECT_TIMEOUT = 3 };    /* s: name lookup, connect, TLS handshake, AUTH */

/* RC_SECRET: resolving secret references (no deadline of ours: cmd: has its own);
 * RC_AUTH: connected, AUTH sent (the connect deadline still runs). */
typedef enum { RC_NONE = 0, RC_SECRET, RC_RESOLVING, RC_CONNECTING, RC_AUTH, RC_READY }
    rs_conn_state;

typedef struct rs_secure {          /* credentials and TLS (redis_secure.c) */
    bool store_is_ref;              /* store = env:/file:/cmd: giving the URL */
    bool url_ready;                 /* url parsed (after resolving a store reference) */
    bool creds_ready;               /* password resolved, or none configured */
    bool auth_failed;               /* resolve the references again before reconnecting */
    struct rd_secret *secret;       /* the reference being resolved */
    char *password;                 /* AUTH password (wiped when freed); NULL = no AUTH */
    char *store_value;              /* the resolved store reference (wiped): rs_redact */
    struct tlsb *tls;               /* rediss://: the bridge hiredis connects through */
    char tls_ip[80];                /* the address the bridge was made for: "ip|port" */
    /* redis_conn.c's answer when the references are resolved (why NULL: connect) or a
     * setting failed (a secret, the URL it gave: the source fails with why, retried with
     * backoff unless setup, then only on an explicit refresh). A callback: redis_secure.c
     * calls nothing of redis_conn.c. */
    void (*resolved)(struct rs_conn *c, const char *why, bool setup);
} rs_secure;

typedef struct rs_urls {            /* the URL list, failover, role (redis_replica.c) */
    char *text;                     /* the store as written or resolved (wiped when freed) */
    size_t n, i, tries;             /* how many; the one in c->url; tried since connected */
    char ok[96];                    /* where the connection answered, "" while down */
    char lost[96], why[120];        /* the one lost before, and why, until another answers */
    char fail_why[160];             /* rs_conn_fail's last reason */
    bool is_replica;                /* INFO: role:slave */
    double repl_at;                 /* last INFO replication (clock_mono) */
} rs_urls;

struct rs_conn {
    rd_loop *evb;
    rd_model *model;
    const rd_system_cfg *cfg;
    rs_conn_cbs cbs;
    char *match;                    /* our keys' pattern: the subscription's channel */
    bool debug;                     /* RD_REDIS_DEBUG: read events timed */
    bool freeing;
    bool unusable;                  /* bad store URL: reported, never connects */
    char unusable_why[256];
    bool setup_error;               /* settings that cannot work: no automatic retry */

    rd_redis_url url;
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
    rs_reader reader;               /* ac's reply constructors (redis_reply.h) */
    double cb_max, cb_max_run;      /* costliest read event, CPU s (debug only); of those
                                       not preempted */

    struct redisAsyncContext *sub;  /* keyspace notifications (second connection) */
    rs_conn_state sub_state;
    double sub_started, sub_backoff;
    bool notify_on;                 /* server has K + hash events enabled */
    bool sub_ever;                  /* subscribed before (a re-subscription resyncs) */

    rd_event *ev_watch, *ev_retry, *ev_sub_retry;
    rd_event *ev_drop;          /* the teardown conn_drop deferred, out of callbacks */

    rs_secure sec;
    rs_urls urls;
};

/* redis_conn.c */
void rs_sub_close(rs_conn *c);               /* drop the subscription (not from its callback) */

/* redis_secure.c */
/* true when the URL and credentials are known; else resolves them (state RC_SECRET) and
 * calls rs_conn_start when done. */
bool rs_secure_ready(rs_conn *c);
/* Sends AUTH on ac (first command of a connection); false when no password is set. */
bool rs_auth_send(rs_conn *c, struct redisAsyncContext *ac, rs_reply_fn *cb);
/* rediss://: the bridge for the current address (remade when it changed). */
bool rs_bridge_ready(rs_conn *c, char *err, size_t cap);
/* The bridge is made for the current address (else the caller closes the contexts first). */
bool rs_bridge_current(const rs_conn *c);
const char *rs_bridge_path(const rs_conn *c);    /* NULL without TLS */
void rs_bridge_clear_error(rs_conn *c);
/* The bridge's reason for the last failure when there is one, else fallback. */
const char *rs_bridge_error(const rs_conn *c, const char *fallback);
/* msg with no part of a referenced store value in it (core/redact.h); a copy otherwise. */
void rs_redact(const rs_conn *c, const char *msg, char *out, size_t cap);
void rs_secure_free(rs_conn *c);             /* after the contexts are freed */

/* redis_replica.c */
/* The store's URL list (one or more, redis_url_split): checks every item, keeps the text and
 * parses the current one into c->url. secret: the text came from a reference. */
bool rs_urls_set(rs_conn *c, const char *text, bool secret, char *err, size_t cap);
/* A connection failed: the next URL of the list. Returns the delay before connecting: 0
 * while some URL of the list has not been tried since the last success, else -1 (the
 * caller's backoff). */
double rs_urls_next(rs_conn *c);
void rs_urls_connected(rs_conn *c);          /* answered: host shown, failover said */
/* A connection failing now moves on to another URL at once (no failure to show yet). */
bool rs_urls_more(const rs_conn *c);
void rs_urls_free(rs_conn *c);
/* The current URL's "host:port" or socket path; the reference's name ("env:REDIS_URL",
 * "URL 2 of env:REDIS_URL") when the store is one. */
void rs_where(const rs_conn *c, char *out, size_t cap);
/* INFO text (any sections): role, link, lag → the model. */
void rs_replica_info(rs_conn *c, const char *info);
/* Time for the poll's INFO replication (instead of PING, same command count): the server
 * is a replica or the store lists several URLs; true once every RS_REPL_EVERY_S. */
bool rs_replica_poll_due(rs_conn *c);
/* Keyspace notifications off on this server: a note saying so (each server has its own). */
void rs_notify_note(rs_conn *c);
