/*
 * Building the PostgreSQL source's batches (pg_source.c decides when): the setup batch of
 * a new connection (search_path, the variant query, the extensions), then each refresh:
 * the index check once, the change probe and the queries it guards (pg_changes.c), the
 * replica's lag (pg_replica.c), the executions page, and the chain, lookup, cockpit and
 * DLQ page the UI asked for. This file owns what a batch in flight carries (which query
 * each result answers) and which statements are prepared on the connection.
 */
#include "pg_batch.h"

#include "../core/xalloc.h"
#include "pg_priv.h"
#include "pg_rows.h"

static const double QUERY_DEADLINE_S = 10.0;
/* A status's or a group's executions read as a set by the status's own index (pg_view.c) */
#define SET_QUERY "by_status"

const char *const pg_qnames[Q_N] = {
    [Q_SEARCH_PATH] = "search_path",
    [Q_VARIANT] = "variant", [Q_EXTENSIONS] = "extensions", [Q_COUNTS] = "counts",
    [Q_EXECS] = "executions", [Q_WORKERS] = "workers", [Q_QUEUES] = "queues",
    [Q_DLQ_COUNT] = "dlq_count", [Q_FAILING] = "failing", [Q_CHAIN] = "chain",
    [Q_DLQ] = "dlq", [Q_LOOKUP] = "execution", [Q_INDEXES] = "indexes",
    [Q_CHANGES] = "changes", [Q_PREPARE] = "prepare", [Q_SETTING] = "setting",
    [Q_REPLICA] = "replica", [Q_RUNNING] = "worker_running", [Q_LISTEN] = "listen",
    [Q_GROUPS] = "groups", [Q_DETAIL] = "execution_detail", [Q_DLQ_GROUPS] = "dlq_groups",
    [Q_GROUPS_WINDOW] = "groups_window",
};

struct pg_batch {
    /* the batch in flight */
    qkind kind[MAX_Q];
    size_t n;
    bool guarded[MAX_Q];          /* query i carries the change probe's guard */
    qkind prep_of[MAX_Q];         /* the batch's Q_PREPARE i prepares this query */
    bool prep_guarded[MAX_Q];
    /* the parameterless refresh queries run as named statements once prepared on this
     * connection (a cached plan: a skipped query costs no planning); [k][guarded] */
    bool prepared[Q_N][2], prep_tried[Q_N][2];
    bool no_named;                /* a prepared statement vanished (a transaction pooler):
                                   * unnamed statements only, for this source's life */
};

pg_batch *pg_batch_new(void) { return xcalloc(1, sizeof(pg_batch)); }

void pg_batch_free(pg_batch *b) { free(b); }

void pg_batch_reconnect(pg_batch *b)
{
    memset(b->prepared, 0, sizeof b->prepared);
    memset(b->prep_tried, 0, sizeof b->prep_tried);
}

size_t pg_batch_n(const pg_batch *b) { return b->n; }

qkind pg_batch_kind(const pg_batch *b, size_t i) { return b->kind[i]; }

bool pg_batch_guarded(const pg_batch *b, size_t i) { return b->guarded[i]; }

bool pg_batch_carries(const pg_batch *b, qkind k)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->kind[i] == k)
            return true;
    return false;
}

void pg_batch_answered(pg_batch *b) { b->n = 0; }

bool pg_batch_pooled(const pg_batch *b) { return b->no_named; }

bool pg_batch_result(pg_batch *b, size_t i, const PGresult *r)
{
    bool ok = pg_result_ok(r);
    if (b->kind[i] == Q_PREPARE) {    /* named from now on; unnamed if it would not prepare */
        b->prepared[b->prep_of[i]][b->prep_guarded[i]] = ok;
        return true;
    }
    const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    if (!ok && st && strcmp(st, "26000") == 0) {
        /* "prepared statement does not exist": a pooler hands out other sessions */
        b->no_named = true;
        memset(b->prepared, 0, sizeof b->prepared);
    }
    return false;
}


/* Statement names of the prepared refresh queries: [kind][guarded]. */
static const char *stmt_name(qkind k, bool guarded)
{
    static const char *const names[][2] = {
        [Q_COUNTS] = { "rd_counts", "rd_g_counts" },
        [Q_WORKERS] = { "rd_workers", "rd_g_workers" },
        [Q_QUEUES] = { "rd_queues", "rd_g_queues" },
        [Q_DLQ_COUNT] = { "rd_dlq_count", "rd_g_dlq_count" },
        [Q_FAILING] = { "rd_failing", "rd_g_failing" },
        [Q_EXECS] = { "rd_execs1", "rd_g_execs1" },     /* the first page, no filter */
    };
    return (size_t)k < sizeof names / sizeof *names ? names[k][guarded] : NULL;
}

/* The schema first, public after it (era-1 Attune and extensions live there); the server
 * quotes the name. */
static const char SQL_SEARCH_PATH[] =
    "SELECT set_config('search_path', CASE WHEN $1 = 'public' THEN 'public' "
    "ELSE quote_ident($1) || ', public' END, false)";

/* ---- a batch being built ---- */

typedef struct draft {
    pg_query q[MAX_Q];
    qkind k[MAX_Q];
    char *own[MAX_Q];             /* SQL built for this batch (probe, guarded queries) */
    bool guarded[MAX_Q];
    qkind prep_of[MAX_Q];
    bool prep_guarded[MAX_Q];
    size_t n;
    size_t probe_at;              /* the probe's index (n when none) */
    bool probe_forced;
    char limit[24], dlq_limit[24], budget[24];
    char *idx_param;
    bool page_sent, running_sent; /* the executions page, the cockpit's running ones */
    bool groups_sent;             /* the error groups */
} draft;

static void draft_free(draft *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->own[i]);
    free(b->idx_param);
}

static void add6(draft *b, const char *sql, qkind k, int np, const char *const *p)
{
    if (!sql || b->n >= MAX_Q)
        return;
    pg_query *q = &b->q[b->n];
    memset(q, 0, sizeof *q);
    q->sql = sql;
    q->nparams = np;
    for (int i = 0; i < np && i < PG_MAX_PARAMS; i++)
        q->params[i] = p[i];
    b->own[b->n] = NULL;
    b->guarded[b->n] = false;
    b->k[b->n++] = k;
}

static void add(draft *b, const char *sql, qkind k, int np, const char *p0, const char *p1,
                const char *p2, const char *p3, const char *p4)
{
    const char *p[6] = { p0, p1, p2, p3, p4, NULL };
    add6(b, sql, k, np, p);
}

/* A query of the refresh, wrapped in the change probe's guard when the batch has one. A
 * parameterless one runs as a named statement once prepared on this connection, and is
 * prepared (in the same batch, after running unnamed) the first time. So does the first
 * executions page without a filter (`generic`): its parameters are written into its SQL
 * (pg_sql_inline), so its one plan is kept and is exactly the plan for those values; a
 * deeper or filtered page stays unnamed, planned for its parameters. */
static void add_main(draft *b, pg_src *s, qkind k, bool guard, int np, const char *const *p,
                     bool generic)
{
    const char *sql = query(s, k);
    if (!sql || b->n + 2 > MAX_Q)
        return;
    /* prepared on this connection: the name alone, nothing built (a generic page's
     * values are fixed: the page size) */
    pg_batch *fl = s->batch;
    if ((np == 0 || generic) && !fl->no_named && fl->prepared[k][guard]) {
        add6(b, "", k, 0, p);          /* the SQL is the prepared statement's */
        b->q[b->n - 1].name = stmt_name(k, guard);
        b->guarded[b->n - 1] = guard;
        return;
    }
    char *inl = generic ? pg_sql_inline(sql, np, p) : NULL;
    if (inl) {
        sql = inl;
        np = 0;
    }
    const char *name = np == 0 && !fl->no_named ? stmt_name(k, guard) : NULL;
    char *own = inl;
    if (guard) {
        own = pg_changes_guard(s->changes, k, sql);
        free(inl);
    }
    add6(b, own ? own : sql, k, np, p);
    b->own[b->n - 1] = own;
    b->guarded[b->n - 1] = guard;
    if (name && !fl->prep_tried[k][guard]) {
        fl->prep_tried[k][guard] = true;
        add6(b, own ? own : sql, Q_PREPARE, 0, p);
        b->q[b->n - 1].name = name;
        b->q[b->n - 1].prepare = true;
        b->prep_of[b->n - 1] = k;
        b->prep_guarded[b->n - 1] = guard;
    }
}

/* The system's schema: the config's, else the profile's `schema` setting, else none. */
static const char *schema(const pg_src *s)
{
    const char *v = s->base.ctx.cfg->store.schema;
    if (!v || !*v)
        v = profile_get(s->base.ctx.prof, "schema");
    return v && *v ? v : NULL;
}

static void build_setup(pg_src *s, draft *b)
{
    const rd_profile *top = s->base.ctx.prof;
    if (schema(s))
        add(b, SQL_SEARCH_PATH, Q_SEARCH_PATH, 1, schema(s), NULL, NULL, NULL, NULL);
    const char *vq = profile_get(top, "variant_query");
    if (vq && *vq) {
        const char *named = profile_query(top, vq);
        add(b, named ? named : vq, Q_VARIANT, 0, NULL, NULL, NULL, NULL, NULL);
    }
    add(b, "SELECT ',' || string_agg(extname::text, ',') || ',' FROM pg_extension",
        Q_EXTENSIONS, 0, NULL, NULL, NULL, NULL, NULL);
}

/* Once per connection: which of the indexes the profile's queries rely on are missing. */
static void build_indexes(pg_src *s, draft *b)
{
    if (!pg_changes_index_due(s->changes))
        return;
    const char *sqls[Q_N] = { NULL };
    for (int k = 0; k < Q_N; k++)
        if (k != Q_INDEXES && k != Q_CHANGES)
            sqls[k] = query(s, (qkind)k);
    const char *sql = pg_indexes_sql(sqls, &b->idx_param);
    if (sql)
        add(b, sql, Q_INDEXES, 1, b->idx_param, NULL, NULL, NULL, NULL);
}

/* The change probe first (when the profile has one); true when the batch is guarded. */
static bool build_probe(pg_src *s, draft *b)
{
    const char *body = query(s, Q_CHANGES);
    const char *p[4];             /* pg_changes' own: live until the batch is answered */
    if (!pg_changes_begin(s->changes, body, profile_get(s->prof, "changes_max_age"), p,
                          &b->probe_forced))
        return false;
    b->probe_at = b->n;
    const char *p6[6] = { p[0], p[1], p[2], p[3], NULL, NULL };
    /* named once prepared: its plan is cached (the parameters only feed the comparison) */
    pg_batch *fl = s->batch;
    if (fl->no_named)
        fl->prep_tried[Q_CHANGES][0] = true;
    if (fl->prepared[Q_CHANGES][0] && !fl->no_named) {
        add6(b, "", Q_CHANGES, 4, p6);
        b->q[b->n - 1].name = "rd_probe";
        return true;
    }
    char *sql = pg_changes_sql(body);
    add6(b, sql, Q_CHANGES, 4, p6);
    b->own[b->n - 1] = sql;
    if (!fl->prep_tried[Q_CHANGES][0]) {
        fl->prep_tried[Q_CHANGES][0] = true;
        add6(b, sql, Q_PREPARE, 0, p6);
        b->q[b->n - 1].name = "rd_probe";
        b->q[b->n - 1].prepare = true;
        b->prep_of[b->n - 1] = Q_CHANGES;
        b->prep_guarded[b->n - 1] = false;
    }
    return true;
}

/* The steady state: when every guarded query of the batch follows the probe, they share
 * its sync (pg_changes_group says whether they may), so when none of them changed the
 * probe's deliberate error makes the server skip them unbound (pg_changes.c). */
static void group_probe(pg_src *s, draft *b)
{
    size_t end = b->probe_at + 1;
    while (end < b->n && b->guarded[end])
        end++;
    bool apart = false;           /* a guarded query apart: no group */
    for (size_t i = end; i < b->n; i++)
        apart |= b->guarded[i];
    bool probe = b->probe_at < b->n;
    if (!probe || apart) {
        pg_changes_group(s->changes, true, NULL, 0);
        return;
    }
    if (!pg_changes_group(s->changes, b->probe_forced, b->k + b->probe_at + 1,
                          end - b->probe_at - 1))
        return;
    for (size_t i = b->probe_at; i + 1 < end; i++)
        b->q[i].no_sync = true;
}

/* The executions page: on a poll only while the list is on screen; one the operator asked
 * for (filter, paging, jump) always, and never skipped. */
static void build_page(pg_src *s, draft *b, const pg_wants *w, bool guard)
{
    bool page_shown = w->execs_shown || w->page_asked;
    bool page_due = w->main || w->page;
    pg_changes_leave_out(s->changes, Q_EXECS, page_due && !page_shown);
    if (!page_due || !page_shown)
        return;
    int page = w->page_size;
    if (w->set) {                     /* a store's set: the status's own index, no guard */
        snprintf(b->limit, sizeof b->limit, "%ld", (w->set_budget > 0 ? w->set_budget : page) + 1L);
        const char *p[5] = { w->key, w->id, w->status, b->limit, w->window };
        add6(b, profile_query(s->prof, SET_QUERY), Q_EXECS, 5, p);
        b->page_sent = true;
        return;
    }
    snprintf(b->limit, sizeof b->limit, "%d", page + 1);
    /* $6, the rows searched: a filter searches a bounded window per request */
    snprintf(b->budget, sizeof b->budget, "%ld", w->filtered ? w->budget : (long)page + 1);
    const char *sql = query(s, Q_EXECS);
    const char *p[7] = { w->key, w->id, w->status, w->text, b->limit, b->budget, w->worker };
    bool six = sql && strstr(sql, "$6");
    bool seven = six && strstr(sql, "$7");   /* the worker filter (else on the page: pg_view) */
    /* a cached generic plan for the first page only where the profile says it is
     * fast for those parameters (first_page_plan = cached; checked at scale) */
    const char *fp = profile_get(s->prof, "first_page_plan");
    bool cached = six && fp && strcmp(fp, "cached") == 0 && !w->key && !w->filtered;
    add_main(b, s, Q_EXECS, guard && !w->page_asked, seven ? 7 : six ? 6 : 5, p, cached);
    b->page_sent = true;
}

static void build_main(pg_src *s, draft *b)
{
    pg_wants w;
    const char *set_sql = profile_query(s->prof, SET_QUERY);
    pg_view_set_query(s->view, set_sql && *set_sql);
    pg_view_wants(s->view, &w);
    b->probe_at = MAX_Q;
    bool guard = false;
    if (w.main) {
        build_indexes(s, b);
        guard = build_probe(s, b);
        if (!guard)                   /* no probe to carry a standby's lag */
            add(b, pg_replica_sql(s->replica), Q_REPLICA, 0, NULL, NULL, NULL, NULL, NULL);
        static const qkind main_q[] = { Q_COUNTS, Q_WORKERS, Q_QUEUES, Q_DLQ_COUNT, Q_FAILING };
        for (size_t i = 0; i < sizeof main_q / sizeof *main_q; i++) {
            if (main_q[i] == Q_WORKERS && !w.workers_shown)
                continue;
            add_main(b, s, main_q[i], guard, 0, (const char *const[6]){ NULL }, false);
        }
    }
    pg_changes_leave_out(s->changes, Q_WORKERS, w.main && !w.workers_shown);
    build_page(s, b, &w, guard);
    group_probe(s, b);
    if (w.chain)
        add(b, query(s, Q_CHAIN), Q_CHAIN, 1, w.chain, NULL, NULL, NULL, NULL);
    if (w.jump)
        add(b, query(s, Q_LOOKUP), Q_LOOKUP, 1, w.jump, NULL, NULL, NULL, NULL);
    /* one execution in full: on demand only (the pane opens, ^r), never on a poll */
    if (w.detail)
        add(b, query(s, Q_DETAIL), Q_DETAIL, 1, w.detail, NULL, NULL, NULL, NULL);
    if (w.running && query(s, Q_RUNNING)) {
        add(b, query(s, Q_RUNNING), Q_RUNNING, 1, w.running, NULL, NULL, NULL, NULL);
        b->running_sent = true;
    }
    if (w.dlq) {
        snprintf(b->dlq_limit, sizeof b->dlq_limit, "%d", DLQ_PAGE + 1);
        const char *p[5] = { NULL };
        int np = pg_dlq_params(w.dlq_at, query(s, Q_DLQ), b->dlq_limit, p);
        add(b, query(s, Q_DLQ), Q_DLQ, np, p[0], p[1], p[2], p[3], p[4]);
        /* the whole store's DLQ by reason and by queue, with each page read ($1: the
         * text searched, when the SQL names it) */
        const char *dg = query(s, Q_DLQ_GROUPS);
        if (dg && b->n < MAX_Q)
            add(b, dg, Q_DLQ_GROUPS, strstr(dg, "$1") ? 1 : 0, p[4], NULL, NULL, NULL, NULL);
    }
    /* the error groups: on demand only (the view opens, ^r), never on a poll */
    if (w.groups_window && query(s, Q_GROUPS) && b->n < MAX_Q) {
        /* the window's baseline for what stands out: one grouped read of the window,
         * before the groups (a sync each: its failure leaves the groups whole) */
        if (query(s, Q_GROUPS_WINDOW) && b->n + 1 < MAX_Q)
            add(b, query(s, Q_GROUPS_WINDOW), Q_GROUPS_WINDOW, 2, w.groups_window, w.groups_cap,
                NULL, NULL, NULL);
        add(b, query(s, Q_GROUPS), Q_GROUPS, 2, w.groups_window, w.groups_cap, NULL, NULL, NULL);
        b->groups_sent = true;
    }
    /* LISTEN, once per connection, last and a sync each: its failure aborts nothing */
    size_t nl = 0;
    const char *const *listen = pg_push_listen_due(s->push, &nl);
    for (size_t i = 0; listen && i < nl; i++)
        add(b, listen[i], Q_LISTEN, 0, NULL, NULL, NULL, NULL, NULL);
}

bool pg_batch_send(pg_src *s)
{
    draft b = { .n = 0 };
    if (!s->setup_done) {
        build_setup(s, &b);
    } else {
        /* requests the profile cannot answer are answered empty at once (the UI must not
         * wait) */
        pg_view_drop(s->view, query(s, Q_CHAIN) != NULL, query(s, Q_LOOKUP) != NULL,
                     query(s, Q_DLQ) != NULL, query(s, Q_RUNNING) != NULL,
                     query(s, Q_GROUPS) != NULL, query(s, Q_DETAIL) != NULL);
        build_main(s, &b);
    }
    if (b.n == 0)
        return true;
    if (!pg_conn_send(s->conn, b.q, b.n, QUERY_DEADLINE_S)) {
        draft_free(&b);
        return false;
    }
    pg_batch *fl = s->batch;
    memcpy(fl->kind, b.k, b.n * sizeof *b.k);
    memcpy(fl->guarded, b.guarded, b.n * sizeof *b.guarded);
    memcpy(fl->prep_of, b.prep_of, b.n * sizeof *b.prep_of);
    memcpy(fl->prep_guarded, b.prep_guarded, b.n * sizeof *b.prep_guarded);
    fl->n = b.n;
    draft_free(&b);
    if (s->setup_done)
        pg_view_sent(s->view, b.page_sent, b.running_sent, b.groups_sent);
    return true;
}
