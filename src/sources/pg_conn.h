#pragma once
/*
 * One asynchronous PostgreSQL connection on the event loop (pg_source.c's transport).
 * Host names are resolved first with io/resolve.h (libpq would block in getaddrinfo); unix
 * sockets and IP literals go straight to PQconnectStartParams. A batch of queries is sent
 * in pipeline mode with a sync after each query, so one round trip answers them all and
 * an error in one query does not abort the others. Every phase has our own deadline; a
 * conninfo naming several hosts (host=a,b port=p,q, or a URI's h1:p1,h2:p2) gets one per
 * host for the connect, and a host whose name lookup fails is left out of the list.
 */
#include <stdbool.h>
#include <stddef.h>
#include <libpq-fe.h>
#include "../io/loop.h"

typedef struct pg_conn pg_conn;

enum { PG_MAX_PARAMS = 8 };

typedef struct pg_query {
    const char *sql;                    /* borrowed until the batch callback returns */
    /* name set: prepare = false runs the statement prepared under that name (sql unused);
     * prepare = true prepares sql under that name (types inferred, no parameters sent) */
    const char *name;
    bool prepare;
    /* no sync after this query: it and the next run in one transaction, and when it fails
     * the server skips the rest of that group (their results: PGRES_PIPELINE_ABORTED) */
    bool no_sync;
    int nparams;
    const char *params[PG_MAX_PARAMS];  /* NULL = SQL NULL; borrowed likewise */
} pg_query;

typedef struct pg_conn_cbs {
    void (*ready)(void *ud);                     /* connected and idle */
    void (*failed)(const char *err, void *ud);   /* connection closed: connect failure,
                                                  * lost connection or deadline */
    /* Batch answered: res[i] is query i's result (never NULL; error results included).
     * The results are freed after the callback returns. */
    void (*batch_done)(PGresult **res, size_t n, void *ud);
    /* A notification (LISTEN) arrived on channel; optional. Never called while a batch
     * callback runs; the callee must not close the connection. */
    void (*notify)(const char *channel, void *ud);
    void *ud;
} pg_conn_cbs;

/* Session settings the source always adds (read-only, statement timeout, name). No JIT:
 * the console's statements are small index walks whose plan cost can still pass
 * jit_above_cost (a LIMIT 100001 count; the store-wide groups query once the statistics know
 * an incident): compiling them cost ~50 ms quiet and over a second on a loaded server, for
 * queries that run in 1-20 ms. */
#define PG_SESSION_OPTIONS \
    "-c default_transaction_read_only=on -c statement_timeout=5000 " \
    "-c max_parallel_workers_per_gather=0 -c jit=off"

pg_conn *pg_conn_new(rd_loop *base, const char *conninfo, const pg_conn_cbs *cbs);
void pg_conn_free(pg_conn *c);
/* Replaces the conninfo (for the next open). secret: it came from a secret reference and
 * may hold credentials: it is wiped when replaced or freed, and a parse error does not
 * quote it. */
void pg_conn_set_conninfo(pg_conn *c, const char *conninfo, bool secret);
/* A keyword parameter given besides the conninfo ("user", "password", "sslmode", ...); it
 * wins over the conninfo's and is never written into a conninfo string. Copied; every
 * value is wiped when replaced or freed. NULL or "" removes it. */
void pg_conn_set_param(pg_conn *c, const char *keyword, const char *value);
/* Starts connecting (callbacks later). False with pg_conn_error() when it could not start
 * (bad conninfo, ...): no callback follows. */
bool pg_conn_open(pg_conn *c, double deadline_s);
void pg_conn_close(pg_conn *c);                  /* no callback */
bool pg_conn_is_ready(const pg_conn *c);         /* connected, no batch in flight */
bool pg_conn_is_open(const pg_conn *c);          /* resolving, connecting, ready or busy */
/* Sends n queries; false (with pg_conn_error) when not ready or the send failed: the
 * connection is then closed and no callback follows. */
bool pg_conn_send(pg_conn *c, const pg_query *q, size_t n, double deadline_s);
const char *pg_conn_error(const pg_conn *c);
/* Server version (e.g. 150004), 0 when not connected. */
int pg_conn_server_version(const pg_conn *c);
/* A parameter the server reports (server_version, default_transaction_read_only, ...);
 * NULL when unknown or not connected. */
const char *pg_conn_param(const pg_conn *c, const char *name);
/* The host that answered ("host:port", "[v6]:port", or the socket directory) and how many
 * hosts the connection's conninfo names (libpq tries them in order, target_session_attrs
 * picking among them); false when not connected. */
bool pg_conn_peer(const pg_conn *c, char *out, size_t cap, int *n_hosts);
/* TLS in use on the connection; *verified when sslmode is verify-full (CA and host). */
bool pg_conn_tls(const pg_conn *c, bool *verified);
