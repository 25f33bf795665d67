#pragma once
/* Private to the PostgreSQL source: the source's wiring (pg_source.c: the connection's
 * lifecycle, the rd_source ops), shared with pg_batch.c (building a batch from what is
 * wanted) and pg_apply.c (applying a batch's results to the model). The connection, its
 * secrets, the change probe, the replica and the batch in flight are each owned by one
 * file behind its own header; pg_src holds their handles. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg_batch.h"
#include "pg_changes.h"
#include "pg_conn.h"
#include "pg_qkind.h"
#include "pg_replica.h"
#include "pg_secret.h"
#include "source.h"

struct event;

/* Rows an executions page with a filter searches per request (its $6): SCAN_BUDGET for a
 * new search, SCAN_GROWTH times more each time the operator goes on further back from
 * where a search stopped without a page of matches, at most SCAN_BUDGET_MAX. */
enum { DLQ_PAGE = 50, SCAN_BUDGET = 2000, SCAN_GROWTH = 10, SCAN_BUDGET_MAX = 200000 };

/* A page start; budget: the rows a filtered page from there searches (0: SCAN_BUDGET). */
typedef struct cursor { char *key, *id; long budget; } cursor;

typedef struct pg_src {
    rd_source base;
    pg_conn *conn;                /* the connection (pg_conn.c) */
    pg_secrets *secrets;          /* its secret references (pg_secret.c) */
    pg_batch *batch;              /* the batch in flight, prepared statements (pg_batch.c) */
    pg_changes *changes;          /* the change probe, the index check (pg_changes.c) */
    pg_replica *replica;          /* standby, lag, failover (pg_replica.c) */
    /* the schema era, read by the setup batch (pg_apply.c) */
    rd_profile *variant;          /* owned: the era profile chosen by variant_query */
    const rd_profile *prof;       /* effective profile (top or variant) */
    char *extensions;             /* ",pgmq,plpgsql," of the connected database */
    bool setup_done;              /* variant/extension check done on this connection */
    char *notes[Q_N];             /* optional queries that failed: "queues: ..." */
    struct event *poll_ev, *retry_ev, *soon_ev;
    double backoff_s;
    bool settled, failing;
    /* what is wanted next */
    bool want_main, want_page, want_dlq;
    unsigned interest;            /* RD_PANEL_*: the lists on screen (sources.h) */
    char *want_chain, *want_jump;
    char *want_worker;            /* the drain cockpit's worker: its running executions are
                                   * read on every poll while it is set */
    char *worker_inflight;
    /* what is in flight */
    char *chain_inflight, *jump_inflight;
    unsigned page_gen, page_gen_inflight, page_gen_applied;
    /* executions page */
    rd_exec_filter filter;
    cursor start, next;
    cursor *stack;
    size_t depth, stack_cap;
    cursor dlq_after, dlq_next;
} pg_src;

static inline void cursor_free(cursor *c)
{
    free(c->key);
    free(c->id);
    c->key = c->id = NULL;
    c->budget = 0;
}

static inline rd_model *model(pg_src *s) { return s->base.ctx.model; }

/* The rows the current filtered page searches (its $6). */
static inline long scan_budget(const pg_src *s)
{
    return s->start.budget > 0 ? s->start.budget : SCAN_BUDGET;
}

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
