#pragma once
/* Private to the PostgreSQL source: the source's wiring (pg_source.c: the connection's
 * lifecycle, the rd_source ops), shared with pg_batch.c (building a batch from what is
 * wanted) and pg_apply.c (applying a batch's results to the model). The connection, its
 * secrets, the change probe, the replica, the batch in flight and the view (what is asked
 * for and shown), push and the source's own timers are each owned by one file behind its
 * own header or, for the timers, opaque here (pg_source.c); pg_src holds their handles and
 * the schema era the setup batch reads. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg_batch.h"
#include "pg_changes.h"
#include "pg_conn.h"
#include "pg_push.h"
#include "pg_qkind.h"
#include "pg_replica.h"
#include "pg_secret.h"
#include "pg_view.h"
#include "source.h"

typedef struct pg_timing pg_timing;

typedef struct pg_src {
    rd_source base;
    pg_conn *conn;                /* the connection (pg_conn.c) */
    pg_secrets *secrets;          /* its secret references (pg_secret.c) */
    pg_batch *batch;              /* the batch in flight, prepared statements (pg_batch.c) */
    pg_changes *changes;          /* the change probe, the index check (pg_changes.c) */
    pg_replica *replica;          /* standby, lag, failover (pg_replica.c) */
    pg_view *view;                /* what is asked for, what is shown (pg_view.c) */
    pg_push *push;                /* LISTEN, notifications, why push is off (pg_push.c) */
    /* the schema era, read by the setup batch (pg_apply.c) */
    rd_profile *variant;          /* owned: the era profile chosen by variant_query */
    const rd_profile *prof;       /* effective profile (top or variant) */
    char *extensions;             /* ",pgmq,plpgsql," of the connected database */
    bool setup_done;              /* variant/extension check done on this connection */
    char *notes[Q_N];             /* optional queries that failed: "queues: ..." */
    pg_timing *t;                 /* timers, poll interval, backoff, settled (pg_source.c) */
} pg_src;

static inline rd_model *model(pg_src *s) { return s->base.ctx.model; }

static inline const char *query(const pg_src *s, qkind k)
{
    const char *sql = profile_query(s->prof, pg_qnames[k]);
    if (!sql || !*sql)
        return NULL;
    /* a query may require an extension: requires_<query> = pgmq */
    char key[64];
    snprintf(key, sizeof key, "requires_%s", pg_qnames[k]);
    const char *ext = profile_get(s->prof, key);
    if (ext && *ext) {
        char pat[80];
        snprintf(pat, sizeof pat, ",%s,", ext);
        if (!s->extensions || !strstr(s->extensions, pat))
            return NULL;
    }
    return sql;
}

/* pg_apply.c: the results of the setup batch (variant, extensions), then of a refresh. */
void pg_apply_setup(pg_src *s, PGresult **res, size_t n, char *err, size_t cap);
void pg_apply_results(pg_src *s, PGresult **res, size_t n, char *err, size_t cap);
