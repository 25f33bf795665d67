#pragma once
/* Private to the PostgreSQL source: pg_source.c (connection lifecycle, secrets, building
 * batches, ops) and pg_apply.c (applying a batch's results to the model). */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "../io/clock.h"
#include "../io/secret.h"
#include "pg_conn.h"
#include "source.h"

struct event;

#define SRC_NAME "postgresql"
/* Rows an executions page with a filter searches per request (its $6): SCAN_BUDGET for a
 * new search, SCAN_GROWTH times more each time the operator goes on further back from
 * where a search stopped without a page of matches, at most SCAN_BUDGET_MAX. */
enum { DLQ_PAGE = 50, MAX_Q = 24, SCAN_BUDGET = 2000, SCAN_GROWTH = 10,
       SCAN_BUDGET_MAX = 200000 };

typedef enum {
    Q_SEARCH_PATH, Q_VARIANT, Q_EXTENSIONS, Q_COUNTS, Q_EXECS, Q_WORKERS, Q_QUEUES,
    Q_DLQ_COUNT, Q_FAILING, Q_CHAIN, Q_DLQ, Q_LOOKUP, Q_INDEXES, Q_CHANGES, Q_PREPARE,
    Q_SETTING, Q_REPLICA, Q_RUNNING, Q_DETAIL, Q_N
} qkind;

extern const char *const pg_qnames[Q_N];

/* A page start; budget: the rows a filtered page from there searches (0: SCAN_BUDGET). */
typedef struct cursor { char *key, *id; long budget; } cursor;

typedef struct pg_src {
    rd_source pub;
    pg_conn *conn;
    rd_profile *variant;          /* owned: the era profile chosen by variant_query */
    const rd_profile *prof;       /* effective profile (top or variant) */
    char *extensions;             /* ",pgmq,plpgsql," of the connected database */
    bool setup_done;              /* variant/extension check done on this connection */
    /* secret references being resolved before a connect */
    rd_secret *sec_store, *sec_password;
    char *store_value;            /* the resolved `store = env:...` (wiped): see pg_redact */
    int sec_pending;
    char sec_err[300];
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
    qkind inflight[MAX_Q];
    size_t n_inflight;
    char *chain_inflight, *jump_inflight;
    char *want_detail, *detail_inflight;   /* one execution in full: asked, in flight */
    unsigned page_gen, page_gen_inflight, page_gen_applied;
    /* executions page */
    rd_exec_filter filter;
    cursor start, next;
    cursor *stack;
    size_t depth, stack_cap;
    cursor dlq_after, dlq_next;
    /* the store's DLQ pages (pg_dlq.c): the starts of the pages before this one, the order
     * (oldest first after G) and the text searched ($4, $5 of [query dlq]) */
    cursor *dlq_stack;
    size_t dlq_depth, dlq_stack_cap;
    bool dlq_oldest;
    char *dlq_text;
    /* indexes the profile's queries rely on (`-- uses index:`): checked once per connection */
    bool indexes_checked;
    /* change probe ([query changes], pg_changes.c): the states it returned last time, the
     * queries it let the server skip in the batch in flight, when all last ran */
    char *chg_states;
    char *chg_skip;               /* ",counts,workers," — guarded results to ignore */
    bool chg_left[Q_N];           /* left out of the batch in flight (not on screen): it
                                   * keeps the state of its last run (pg_changes.c) */
    bool chg_guarded[MAX_Q];      /* the batch's query i carries the guard */
    /* the parameterless refresh queries run as named statements once prepared on this
     * connection (a cached plan: a skipped query costs no planning); [k][guarded] */
    bool prepared[Q_N][2], prep_tried[Q_N][2];
    bool no_named;                /* a prepared statement vanished (a transaction pooler):
                                   * unnamed statements only, for this source's life */
    qkind prep_of[MAX_Q];         /* the batch's Q_PREPARE i prepares this query */
    bool prep_guarded[MAX_Q];
    bool chg_broken;              /* the probe failed on this connection: no guards */
    bool chg_force;               /* next batch runs everything (user refresh, reconnect) */
    double chg_full_at;
    char chg_nonce[20];           /* marks this console's skip list in the session */
    char chg_group[160];          /* the probe's $4: queries sharing its sync ("counts,...") */
    bool chg_split;               /* a grouped query failed on this connection: a sync each */
    bool chg_grouped;             /* the batch in flight has a group */
    unsigned long chg_skipped, chg_batches;   /* counters (debug/bench) */
    /* reading from standbys (pg_replica.c): the host that answered on this connection,
     * the one lost before (and why) until another answers, when the lag was last read */
    char rep_host[96], rep_lost[96], rep_why[120];
    int rep_hosts;                /* hosts the conninfo names */
    bool rep_standby;
    double rep_read_at;
} pg_src;

static inline double now_s(void) { return clock_wall(); }

static inline void cursor_free(cursor *c)
{
    free(c->key);
    free(c->id);
    c->key = c->id = NULL;
    c->budget = 0;
}

static inline rd_model *model(pg_src *s) { return s->pub.ctx.model; }

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

/* pg_changes.c: the change probe and the index check (built into a refresh batch). */
/* The probe statement (params $1 last states, $2 force, $3 nonce), malloc'd; NULL without
 * a probe (or after it failed on this connection). */
char *pg_changes_sql(const pg_src *s);
/* SQL of query k wrapped so the server skips it when the probe found its data unchanged;
 * malloc'd. */
char *pg_changes_guard(const pg_src *s, qkind k, const char *sql);
bool pg_changes_guardable(qkind k);
/* sql with its parameters $1..$np written in as literals (NULL or a quoted string), so a
 * statement for fixed values needs no parameters (its one plan is kept); malloc'd, NULL
 * when the SQL cannot be read that far (an unterminated quote or comment). */
char *pg_sql_inline(const char *sql, int np, const char *const p[]);
/* Applies the probe's answer (before the other results of the batch). */
void pg_changes_apply(pg_src *s, const PGresult *r, bool ok);
bool pg_changes_skipped(const pg_src *s, qkind k);
/* r is the probe's "every query of the group unchanged" answer. */
bool pg_changes_unchanged(const PGresult *r);
/* The index check statement ($1: "query\ttable\tcol,col\n..."); NULL when the profile
 * documents no index. *param is malloc'd. */
const char *pg_indexes_sql(const pg_src *s, char **param);
void pg_indexes_apply(pg_src *s, const PGresult *r);

/* pg_replica.c: which host answered, standby or primary, its replication lag, failover. */
/* Columns the change probe adds (standby, lag_s): the lag read in the same statement. */
extern const char PG_REPLICA_COLUMNS[];
/* msg with no part of a referenced store value in it (core/redact.h); a copy otherwise. */
void pg_redact(const pg_src *s, const char *msg, char *out, size_t cap);
void pg_replica_connected(pg_src *s);           /* connected: host, role, failover note */
void pg_replica_lost(pg_src *s, const char *err);
/* The lag statement when this batch has no probe to carry it and it is due (standby,
 * every PG_REPLICA_EVERY_S); NULL otherwise. */
const char *pg_replica_sql(pg_src *s);
/* The probe's row or the lag statement's: standby (bool), lag_s (seconds or NULL). */
void pg_replica_apply(pg_src *s, const PGresult *r);

/* pg_dlq.c: the store's DLQ read a page at a time, either order, searched. */
/* The parameters of [query dlq] for the page wanted (p: 5 slots, limit the page size + 1
 * as text); returns how many the profile's SQL takes (3, 4 or 5). */
int pg_dlq_params(const pg_src *s, const char *sql, const char *limit, const char **p);
void pg_dlq_page(pg_src *s, int dir);        /* +1 the next (older) page, -1 the one before */
void pg_dlq_order(pg_src *s, bool oldest, const char *text);   /* from the first page */
void pg_dlq_apply(pg_src *s, const PGresult *r);
void pg_dlq_free(pg_src *s);

/* pg_apply.c: the results of the setup batch (variant, extensions), then of a refresh. */
void pg_apply_setup(pg_src *s, PGresult **res, size_t n, char *err, size_t cap);
void pg_apply_results(pg_src *s, PGresult **res, size_t n, char *err, size_t cap);
