#pragma once
/*
 * The Redis source's connection (redis_conn.c, with redis_secure.c for credentials and TLS
 * and redis_replica.c for the store's URL list and failover, sharing redis_conn_priv.h):
 * the main hiredis 0.14 connection on the event loop (name lookup → TLS bridge →
 * connect → AUTH → SELECT / CONFIG GET / INFO → ready; on failure: stale, then reconnect
 * with backoff 1 s → 30 s, or the next URL of the list at once) and the keyspace
 * notification subscription (a second connection, PSUBSCRIBEd, its own backoff).
 *
 * The connection writes the facts about itself to the model (server version, keyspace
 * notifications, replication role and lag, failover, TLS) and reports the rest through
 * callbacks. Commands are sent with rs_conn_command; every reply callback is bracketed
 * by rs_conn_reply_begin / rs_conn_reply_end (pending count, progress, deferred teardown).
 */
#include <stdbool.h>
#include <stddef.h>

#include "source.h"

struct redisAsyncContext;
typedef struct rs_conn rs_conn;
typedef void rs_reply_fn(struct redisAsyncContext *ac, void *reply, void *priv);

typedef struct rs_conn_cbs {
    /* Connected and authenticated, the first commands sent (inside a reply callback). */
    void (*ready)(void *ud);
    /* The source fails with msg ("redis host:port: why", redacted); connected: the
     * connection was ready when it happened. Not called while another URL of the list is
     * tried at once, nor once rs_conn_free has begun. */
    void (*failed)(const char *msg, bool connected, void *ud);
    /* The main connection is being torn down: the replies in flight come back NULL. */
    void (*lost)(void *ud);
    void (*answered)(void *ud);                 /* the poll's PING (or INFO) answered */
    void (*missed)(void *ud);                   /* keyspace events may have been missed */
    /* A key named by a keyspace event; key NULL: the subscription is confirmed. */
    void (*notified)(const char *key, size_t len, void *ud);
    void *ud;
} rs_conn_cbs;

/* match: the SCAN MATCH pattern of our keys (PSUBSCRIBEd in our database); copied. */
rs_conn *rs_conn_new(const rd_source_ctx *ctx, const char *match, const rs_conn_cbs *cbs);
/* Frees the contexts (replies in flight come back NULL first), then the rest. */
void rs_conn_free(rs_conn *c);
void rs_conn_start(rs_conn *c);             /* connect (resolving what is needed first) */
void rs_conn_start_soon(rs_conn *c);        /* the same, from the loop */
/* Down and idle: connect now, backoff reset (an operator's refresh); false otherwise. */
bool rs_conn_retry_now(rs_conn *c);
bool rs_conn_ready(const rs_conn *c);       /* commands can be sent */
bool rs_conn_down(const rs_conn *c);        /* not connecting either */
bool rs_conn_notified(const rs_conn *c);    /* keyspace events arrive */
/* Periodic: ping (PING, or INFO replication now and then) when ping and no command is
 * pending; subscribe again when the subscription is gone. */
void rs_conn_poll(rs_conn *c, bool ping);
/* Sends a command on the main connection; false (cb not registered) when not usable. */
bool rs_conn_command(rs_conn *c, rs_reply_fn *cb, void *priv, int argc, const char **argv,
                     const size_t *argvlen);
void rs_conn_reply_begin(rs_conn *c);       /* bracket every reply callback */
void rs_conn_reply_end(rs_conn *c);
void rs_conn_fail(rs_conn *c, const char *why);  /* the source fails (keeps its data) */
/* A server error as the operator should read it (names the user, never the password). */
void rs_conn_error_text(const rs_conn *c, const char *cmd, const char *err, char *out,
                        size_t cap);
bool rs_access_error(const char *err);      /* NOAUTH, WRONGPASS, NOPERM */
/* RD_REDIS_DEBUG: the costliest read event, thread CPU s (unpreempted: of those the
 * scheduler did not preempt; every event where it cannot be told). */
double rs_conn_cb_max(const rs_conn *c, bool unpreempted);
