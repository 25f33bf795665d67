/*
 * The PostgreSQL store source: profile SQL over one asynchronous connection (pg_conn.c).
 * A refresh is one pipelined round trip: counts, the executions page (keyset), workers,
 * queues, DLQ size — plus the chain / DLQ page / id lookup when the UI asked for them.
 * On any failure the connection is dropped, the model keeps its data and shows the
 * source stale (or down) with the error, and we reconnect with backoff 1 s → 30 s.
 *
 * Before each connect the secret references are resolved on the loop (io/secret.h): a
 * `store = env:DATABASE_URL` (the whole conninfo, credentials included) and
 * `store_password`; the password goes to libpq as a keyword parameter, never into a
 * conninfo string. The connection's setup batch sets the search_path to the system's
 * schema (config `schema`, else the profile's), then runs the variant (era) query, which
 * looks at the columns present in that schema.
 *
 * A query the profile marks [query NAME optional] that fails empties its panel and leaves
 * a note on the source ("queues: relation ... does not exist"); the source stays ok. Each
 * query has its own sync in the pipeline, so one failure does not abort the others.
 *
 * This file: connection lifecycle, secrets, building batches, settling after a batch, the
 * rd_source ops. Applying results to the model (variant loading, rows, notes) is in
 * pg_apply.c; the shared struct is in pg_priv.h.
 */
#include "pg_priv.h"

#include <event2/event.h>
#include <stdint.h>
#include <unistd.h>

#include "../core/redact.h"
#include "../core/xalloc.h"

static const double CONNECT_DEADLINE_S = 5.0, QUERY_DEADLINE_S = 10.0;
static const double BACKOFF_MIN_S = 1.0, BACKOFF_MAX_S = 30.0, SECRET_TIMEOUT_S = 30.0;

const char *const pg_qnames[Q_N] = {
    [Q_SEARCH_PATH] = "search_path",
    [Q_VARIANT] = "variant", [Q_EXTENSIONS] = "extensions", [Q_COUNTS] = "counts",
    [Q_EXECS] = "executions", [Q_WORKERS] = "workers", [Q_QUEUES] = "queues",
    [Q_DLQ_COUNT] = "dlq_count", [Q_FAILING] = "failing", [Q_CHAIN] = "chain",
    [Q_DLQ] = "dlq", [Q_LOOKUP] = "execution", [Q_INDEXES] = "indexes",
    [Q_CHANGES] = "changes", [Q_PREPARE] = "prepare", [Q_SETTING] = "setting",
    [Q_REPLICA] = "replica", [Q_RUNNING] = "worker_running",
    [Q_DETAIL] = "execution_detail",
};

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

static void cursor_take(cursor *dst, cursor *src)
{
    cursor_free(dst);
    *dst = *src;
    src->key = src->id = NULL;
    src->budget = 0;
}

static void changed(pg_src *s)
{
    if (s->pub.ctx.on_change)
        s->pub.ctx.on_change(s->pub.ctx.ud);
}

/* The one-shot requests of the batch that was in flight are answered (or wanted again). */
static void inflight_clear(pg_src *s)
{
    free(s->chain_inflight);
    free(s->jump_inflight);
    free(s->detail_inflight);
    s->chain_inflight = s->jump_inflight = s->detail_inflight = NULL;
}

/* ---- connection lifecycle ---- */

static void kick(pg_src *s);
static void lost(pg_src *s, const char *err);

static void open_conn(pg_src *s)
{
    if (!pg_conn_open(s->conn, CONNECT_DEADLINE_S))
        lost(s, pg_conn_error(s->conn));
}

static void secret_done(pg_src *s)
{
    if (--s->sec_pending > 0)
        return;
    if (s->sec_err[0])
        lost(s, s->sec_err);
    else
        open_conn(s);
}

void pg_redact(const pg_src *s, const char *msg, char *out, size_t cap)
{
    if (s->store_value)
        redact_ref(msg, s->store_value, s->pub.ctx.cfg->store.url, out, cap);
    else
        snprintf(out, cap, "%s", msg ? msg : "");
}

static void on_store_secret(bool ok, const char *value, const char *why, void *ud)
{
    pg_src *s = ud;
    s->sec_store = NULL;
    secret_free(s->store_value);
    s->store_value = ok ? xstrdup(value) : NULL;
    if (ok)
        pg_conn_set_conninfo(s->conn, value, true);
    else if (!s->sec_err[0]) {
        char at[160];
        config_key_where(s->pub.ctx.cfg, "store", at, sizeof at);
        snprintf(s->sec_err, sizeof s->sec_err, "%s: %s", at, why);
    }
    secret_done(s);
}

static void on_password_secret(bool ok, const char *value, const char *why, void *ud)
{
    pg_src *s = ud;
    s->sec_password = NULL;
    if (ok)
        pg_conn_set_param(s->conn, "password", value);
    else if (!s->sec_err[0]) {
        char at[160];
        config_key_where(s->pub.ctx.cfg, "store_password", at, sizeof at);
        snprintf(s->sec_err, sizeof s->sec_err, "%s: %s", at, why);
    }
    secret_done(s);
}

/* Resolves the references again at every connect (a cmd: may hand out short-lived
 * tokens), then connects; the source shows "connecting" meanwhile. */
static void connect_now(pg_src *s)
{
    s->setup_done = false;
    /* a new session: no skip list in it yet, indexes checked again */
    s->indexes_checked = s->chg_broken = false;
    memset(s->prepared, 0, sizeof s->prepared);
    memset(s->prep_tried, 0, sizeof s->prep_tried);
    s->chg_force = true;
    s->chg_split = s->chg_grouped = false;
    s->chg_group[0] = '\0';
    free(s->chg_skip);
    s->chg_skip = NULL;
    model_source(model(s), SRC_NAME);
    if (s->sec_pending)
        return;                       /* still resolving: connects when done */
    const rd_system_cfg *cfg = s->pub.ctx.cfg;
    bool store_ref = secret_is_ref(cfg->store.url);
    bool password = cfg->store.password && *cfg->store.password;
    if (!store_ref && !password) {
        open_conn(s);
        return;
    }
    s->sec_err[0] = '\0';
    s->sec_pending = (int)store_ref + (int)password;
    struct event_base *base = s->pub.ctx.base;
    if (store_ref)
        s->sec_store = secret_resolve(base, cfg->store.url, 0, SECRET_TIMEOUT_S, on_store_secret, s);
    if (password)
        s->sec_password = secret_resolve(base, cfg->store.password, 0, SECRET_TIMEOUT_S,
                                         on_password_secret, s);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd; (void)what;
    connect_now(arg);
}

/* The connection is gone (or never came up): keep the data, show the error, retry. */
static void lost(pg_src *s, const char *err)
{
    char msg[300];
    pg_redact(s, err && *err ? err : "connection lost", msg, sizeof msg);
    model_source_fail(model(s), SRC_NAME, msg, now_s());
    s->settled = true;
    s->failing = true;
    pg_replica_lost(s, msg);
    /* what was in flight is wanted again after the reconnect */
    for (size_t i = 0; i < s->n_inflight; i++) {
        qkind k = s->inflight[i];
        if (k == Q_EXECS) s->want_page = true;
        else if (k == Q_CHAIN && s->chain_inflight && !s->want_chain) {
            s->want_chain = s->chain_inflight;
            s->chain_inflight = NULL;
        } else if (k == Q_LOOKUP && s->jump_inflight && !s->want_jump) {
            s->want_jump = s->jump_inflight;
            s->jump_inflight = NULL;
        } else if (k == Q_DETAIL && s->detail_inflight && !s->want_detail) {
            s->want_detail = s->detail_inflight;
            s->detail_inflight = NULL;
        } else if (k == Q_DLQ) s->want_dlq = true;
        else if (k != Q_SEARCH_PATH && k != Q_VARIANT && k != Q_EXTENSIONS)
            s->want_main = true;
    }
    s->n_inflight = 0;
    inflight_clear(s);
    pg_conn_close(s->conn);
    struct timeval tv = { (time_t)s->backoff_s, 0 };
    evtimer_add(s->retry_ev, &tv);
    s->backoff_s = s->backoff_s * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : s->backoff_s * 2;
    changed(s);
}

static void on_failed(const char *err, void *ud) { lost(ud, err); }

static void on_ready(void *ud)
{
    pg_src *s = ud;
    pg_replica_connected(s);
    s->want_main = s->want_page = true;
    kick(s);
}

static void on_poll(evutil_socket_t fd, short what, void *arg)
{
    (void)fd; (void)what;
    pg_src *s = arg;
    s->want_main = s->want_page = true;
    kick(s);
}

/* ---- building a batch ---- */

typedef struct batch {
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
} batch;

static void batch_free(batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->own[i]);
    free(b->idx_param);
}

static void add6(batch *b, const char *sql, qkind k, int np, const char *const *p)
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

static void add(batch *b, const char *sql, qkind k, int np, const char *p0, const char *p1,
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
static void add_main(batch *b, pg_src *s, qkind k, bool guard, int np, const char *const *p,
                     bool generic)
{
    const char *sql = query(s, k);
    if (!sql || b->n + 2 > MAX_Q)
        return;
    /* prepared on this connection: the name alone, nothing built (a generic page's
     * values are fixed: the page size) */
    if ((np == 0 || generic) && !s->no_named && s->prepared[k][guard]) {
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
    const char *name = np == 0 && !s->no_named ? stmt_name(k, guard) : NULL;
    char *own = inl;
    if (guard) {
        own = pg_changes_guard(s, k, sql);
        free(inl);
    }
    add6(b, own ? own : sql, k, np, p);
    b->own[b->n - 1] = own;
    b->guarded[b->n - 1] = guard;
    if (name && !s->prep_tried[k][guard]) {
        s->prep_tried[k][guard] = true;
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
    const char *v = s->pub.ctx.cfg->store.schema;
    if (!v || !*v)
        v = profile_get(s->pub.ctx.prof, "schema");
    return v && *v ? v : NULL;
}

static void build_setup(pg_src *s, batch *b)
{
    const rd_profile *top = s->pub.ctx.prof;
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
static void build_indexes(pg_src *s, batch *b)
{
    if (s->indexes_checked)
        return;
    s->indexes_checked = true;
    const char *sql = pg_indexes_sql(s, &b->idx_param);
    if (sql)
        add(b, sql, Q_INDEXES, 1, b->idx_param, NULL, NULL, NULL, NULL);
}

/* The change probe first (when the profile has one); true when the batch is guarded. */
static bool build_probe(pg_src *s, batch *b)
{
    if (!query(s, Q_CHANGES) || s->chg_broken)
        return false;
    double max_age = 30;
    const char *v = profile_get(s->prof, "changes_max_age");
    if (v && !(parse_duration(v, &max_age) && max_age > 0))
        max_age = 30;
    bool force = s->chg_force || !s->chg_states || now_s() - s->chg_full_at >= max_age;
    s->chg_force = false;
    /* $4, the queries sharing the probe's sync: filled in by group_probe() */
    s->chg_group[0] = '\0';
    b->probe_at = b->n;
    b->probe_forced = force;
    const char *p[6] = { s->chg_states, force ? "on" : "off", s->chg_nonce, s->chg_group,
                         NULL, NULL };
    /* named once prepared: its plan is cached (the parameters only feed the comparison) */
    if (s->no_named)
        s->prep_tried[Q_CHANGES][0] = true;
    if (s->prepared[Q_CHANGES][0] && !s->no_named) {
        add6(b, "", Q_CHANGES, 4, p);
        b->q[b->n - 1].name = "rd_probe";
        return true;
    }
    char *sql = pg_changes_sql(s);
    add6(b, sql, Q_CHANGES, 4, p);
    b->own[b->n - 1] = sql;
    if (!s->prep_tried[Q_CHANGES][0]) {
        s->prep_tried[Q_CHANGES][0] = true;
        add6(b, sql, Q_PREPARE, 0, p);
        b->q[b->n - 1].name = "rd_probe";
        b->q[b->n - 1].prepare = true;
        b->prep_of[b->n - 1] = Q_CHANGES;
        b->prep_guarded[b->n - 1] = false;
    }
    return true;
}

/* The steady state: when every guarded query of the batch follows the probe, they share
 * its sync, so when none of them changed the probe's deliberate error makes the server skip
 * them unbound (pg_changes.c). Not for a forced run (everything runs: each query its own
 * sync, one failure does not abort the others), nor on a connection where a query of a
 * group failed. */
static void group_probe(pg_src *s, batch *b)
{
    s->chg_grouped = false;
    if (b->probe_at >= b->n || b->probe_forced || s->chg_split)
        return;
    size_t end = b->probe_at + 1;
    while (end < b->n && b->guarded[end])
        end++;
    for (size_t i = end; i < b->n; i++)
        if (b->guarded[i])
            return;                   /* a guarded query apart: no group */
    size_t len = 0;
    for (size_t i = b->probe_at + 1; i < end; i++) {
        const char *name = pg_qnames[b->k[i]];
        if (len + strlen(name) + 2 > sizeof s->chg_group) {
            s->chg_group[0] = '\0';
            return;
        }
        len += (size_t)snprintf(s->chg_group + len, sizeof s->chg_group - len, "%s%s",
                                len ? "," : "", name);
    }
    if (!len)
        return;
    for (size_t i = b->probe_at; i + 1 < end; i++)
        b->q[i].no_sync = true;
    s->chg_grouped = true;
}

static void build_main(pg_src *s, batch *b)
{
    b->probe_at = MAX_Q;
    bool guard = false;
    memset(s->chg_left, 0, sizeof s->chg_left);
    if (s->want_main) {
        build_indexes(s, b);
        guard = build_probe(s, b);
        if (!guard)                   /* no probe to carry a standby's lag */
            add(b, pg_replica_sql(s), Q_REPLICA, 0, NULL, NULL, NULL, NULL, NULL);
        static const qkind main_q[] = { Q_COUNTS, Q_WORKERS, Q_QUEUES, Q_DLQ_COUNT, Q_FAILING };
        for (size_t i = 0; i < sizeof main_q / sizeof *main_q; i++) {
            if (main_q[i] == Q_WORKERS && !(s->interest & RD_PANEL_WORKERS)) {
                s->chg_left[Q_WORKERS] = true;
                continue;
            }
            add_main(b, s, main_q[i], guard, 0, (const char *const[6]){ NULL }, false);
        }
    }
    /* the page on a poll only while the list is on screen; one the operator asked for
     * (filter, paging, jump: page_gen moved) always */
    bool page_shown = (s->interest & RD_PANEL_EXECS) || s->page_gen != s->page_gen_applied;
    bool page_due = s->want_main || s->want_page;
    s->chg_left[Q_EXECS] = page_due && !page_shown;
    if (page_due && page_shown) {
        int page = s->pub.ctx.cfg && s->pub.ctx.cfg->ui.page_size > 0 ? s->pub.ctx.cfg->ui.page_size
                                                                   : 100;
        snprintf(b->limit, sizeof b->limit, "%d", page + 1);
        /* $6, the rows searched: a filter searches a bounded window per request */
        bool filtered = s->filter.text || s->filter.status || s->filter.worker;
        snprintf(b->budget, sizeof b->budget, "%ld", filtered ? scan_budget(s) : (long)page + 1);
        const char *sql = query(s, Q_EXECS);
        const char *p[7] = { s->start.key, s->start.id, s->filter.status, s->filter.text,
                             b->limit, b->budget, s->filter.worker };
        /* a page the operator just asked for is never skipped */
        bool six = sql && strstr(sql, "$6");
        bool seven = six && strstr(sql, "$7");   /* the worker filter (else on the page: pg_apply) */
        /* a cached generic plan for the first page only where the profile says it is
         * fast for those parameters (first_page_plan = cached; checked at scale) */
        const char *fp = profile_get(s->prof, "first_page_plan");
        bool cached = six && fp && strcmp(fp, "cached") == 0 && !s->start.key && !filtered;
        add_main(b, s, Q_EXECS, guard && s->page_gen_applied == s->page_gen, seven ? 7 : six ? 6 : 5, p,
                 cached);
        s->page_gen_inflight = s->page_gen;
    }
    group_probe(s, b);
    if (s->want_chain)
        add(b, query(s, Q_CHAIN), Q_CHAIN, 1, s->want_chain, NULL, NULL, NULL, NULL);
    if (s->want_jump)
        add(b, query(s, Q_LOOKUP), Q_LOOKUP, 1, s->want_jump, NULL, NULL, NULL, NULL);
    if (s->want_detail)
        add(b, query(s, Q_DETAIL), Q_DETAIL, 1, s->want_detail, NULL, NULL, NULL, NULL);
    if (s->want_worker && query(s, Q_RUNNING)) {
        add(b, query(s, Q_RUNNING), Q_RUNNING, 1, s->want_worker, NULL, NULL, NULL, NULL);
        free(s->worker_inflight);
        s->worker_inflight = xstrdup(s->want_worker);
    }
    if (s->want_dlq) {
        snprintf(b->dlq_limit, sizeof b->dlq_limit, "%d", DLQ_PAGE + 1);
        const char *p[6] = { NULL };
        int np = pg_dlq_params(s, query(s, Q_DLQ), b->dlq_limit, p);
        add(b, query(s, Q_DLQ), Q_DLQ, np, p[0], p[1], p[2], p[3], p[4]);
    }
}

/* Requests the profile cannot answer are answered empty at once (the UI must not wait). */
static void drop_unanswerable(pg_src *s)
{
    if (s->want_chain && !query(s, Q_CHAIN)) {
        model_set_chain(model(s), s->want_chain, NULL, 0);
        free(s->want_chain);
        s->want_chain = NULL;
    }
    if (s->want_jump && !query(s, Q_LOOKUP)) {
        free(s->want_jump);
        s->want_jump = NULL;
    }
    if (s->want_dlq && !query(s, Q_DLQ))
        s->want_dlq = false;
    if (s->want_detail && !query(s, Q_DETAIL)) {
        model_set_detail(model(s), s->want_detail, NULL, "the profile has no [query execution_detail]");
        free(s->want_detail);
        s->want_detail = NULL;
    }
    rd_model *m = model(s);
    if (s->want_worker && !query(s, Q_RUNNING) &&
        (m->running_known || !m->running_worker || strcmp(m->running_worker, s->want_worker) != 0))
        model_set_running(m, s->want_worker, NULL, 0, false);   /* the profile cannot say */
}

static void kick(pg_src *s)
{
    if (!pg_conn_is_ready(s->conn))
        return;
    batch b = { .n = 0 };
    if (!s->setup_done) {
        build_setup(s, &b);
    } else {
        drop_unanswerable(s);
        build_main(s, &b);
    }
    if (b.n == 0)
        return;
    if (!pg_conn_send(s->conn, b.q, b.n, QUERY_DEADLINE_S)) {
        batch_free(&b);
        lost(s, pg_conn_error(s->conn));
        return;
    }
    memcpy(s->inflight, b.k, b.n * sizeof *b.k);
    memcpy(s->chg_guarded, b.guarded, b.n * sizeof *b.guarded);
    memcpy(s->prep_of, b.prep_of, b.n * sizeof *b.prep_of);
    memcpy(s->prep_guarded, b.prep_guarded, b.n * sizeof *b.prep_guarded);
    s->n_inflight = b.n;
    batch_free(&b);
    if (s->setup_done) {
        s->want_main = s->want_page = s->want_dlq = false;
        inflight_clear(s);
        s->chain_inflight = s->want_chain;
        s->jump_inflight = s->want_jump;
        s->detail_inflight = s->want_detail;
        s->want_chain = s->want_jump = s->want_detail = NULL;
    }
}

/* ---- a batch came back: pg_apply.c applies it, we settle the source ---- */

static void on_batch(PGresult **res, size_t n, void *ud)
{
    pg_src *s = ud;
    char err[300] = "";
    bool setup = !s->setup_done;
    if (setup)
        pg_apply_setup(s, res, n, err, sizeof err);
    else
        pg_apply_results(s, res, n, err, sizeof err);
    if (setup && *err) {
        /* no schema or era: nothing can be read right; connect again later */
        s->n_inflight = 0;
        lost(s, err);
        return;
    }
    s->n_inflight = 0;
    inflight_clear(s);
    if (*err) {
        char msg[300];
        pg_redact(s, err, msg, sizeof msg);
        model_source_fail(model(s), SRC_NAME, msg, now_s());
    } else if (!setup) {
        model_source_ok(model(s), SRC_NAME, now_s());
        s->backoff_s = BACKOFF_MIN_S;
        s->failing = false;
    }
    if (!setup || *err)
        s->settled = true;
    changed(s);
    kick(s);
}

/* ---- rd_source ops ---- */

static void op_start(rd_source *src)
{
    pg_src *s = src->impl;
    double poll = src->ctx.cfg && src->ctx.cfg->poll_s > 0 ? src->ctx.cfg->poll_s : 2.0;
    struct timeval tv = { (time_t)poll, (suseconds_t)((poll - (double)(time_t)poll) * 1e6) };
    evtimer_add(s->poll_ev, &tv);
    model_source_every(model(s), SRC_NAME, poll);   /* its freshness window (a steady poll repaints nothing) */
    connect_now(s);
}

static void op_refresh(rd_source *src)
{
    pg_src *s = src->impl;
    s->want_main = s->want_page = true;
    s->chg_force = true;          /* the operator asked: everything, not the probe's word */
    if (!pg_conn_is_open(s->conn)) {
        evtimer_del(s->retry_ev);
        connect_now(s);
    } else {
        kick(s);
    }
}

static void on_soon(evutil_socket_t fd, short what, void *arg)
{
    (void)fd; (void)what;
    kick(arg);
}

/* A list coming back on screen is asked for at once (the probe lets the server skip it
 * only if its tables did not change since it last ran), in a loop iteration of its own:
 * the key that switched the view paints first. One leaving it is left out of the next
 * polls. */
static void op_set_interest(rd_source *src, unsigned panels)
{
    pg_src *s = src->impl;
    unsigned gained = panels & ~s->interest;
    s->interest = panels;
    if (gained & RD_PANEL_WORKERS)
        s->want_main = true;
    if (gained & RD_PANEL_EXECS)
        s->want_page = true;
    if (gained) {
        struct timeval now = {0, 0};
        evtimer_add(s->soon_ev, &now);
    }
}

static void stack_clear(pg_src *s)
{
    for (size_t i = 0; i < s->depth; i++)
        cursor_free(&s->stack[i]);
    s->depth = 0;
    cursor_free(&s->start);
    cursor_free(&s->next);
}

static char *dup_nonempty(const char *v) { return v && *v ? xstrdup(v) : NULL; }

static void op_set_filter(rd_source *src, const rd_exec_filter *f)
{
    pg_src *s = src->impl;
    free(s->filter.status);
    free(s->filter.text);
    free(s->filter.fingerprint);
    free(s->filter.worker);
    s->filter.worker = dup_nonempty(f ? f->worker : NULL);
    s->filter.status = dup_nonempty(f ? f->status : NULL);
    s->filter.text = dup_nonempty(f ? f->text : NULL);
    s->filter.fingerprint = dup_nonempty(f ? f->fingerprint : NULL);
    stack_clear(s);
    s->page_gen++;
    s->want_page = true;
    kick(s);
}

static void op_page(rd_source *src, int dir)
{
    pg_src *s = src->impl;
    if (dir == 0) {
        stack_clear(s);
    } else if (dir > 0) {
        if (!s->next.key)
            return;
        if (s->depth == s->stack_cap)
            xgrow(&s->stack, &s->stack_cap, s->depth + 1, sizeof *s->stack);
        s->stack[s->depth] = s->start;
        s->depth++;
        s->start.key = s->start.id = NULL;
        cursor_take(&s->start, &s->next);
    } else {
        if (s->depth == 0)
            return;
        cursor_free(&s->start);
        s->start = s->stack[--s->depth];
    }
    s->page_gen++;
    s->want_page = true;
    kick(s);
}

static void op_jump(rd_source *src, const char *id)
{
    pg_src *s = src->impl;
    if (!id || !*id)
        return;
    free(s->want_jump);
    s->want_jump = xstrdup(id);
    kick(s);
}

static void op_worker(rd_source *src, const char *id)
{
    pg_src *s = src->impl;
    free(s->want_worker);
    s->want_worker = id && *id ? xstrdup(id) : NULL;
    model_set_running(model(s), s->want_worker, NULL, 0, false);   /* not this worker's yet */
    if (s->want_worker)
        kick(s);
}

static void op_chain(rd_source *src, const char *id)
{
    pg_src *s = src->impl;
    if (!id || !*id)
        return;
    free(s->want_chain);
    s->want_chain = xstrdup(id);
    kick(s);
}

static void op_detail(rd_source *src, const char *id)
{
    pg_src *s = src->impl;
    if (!id || !*id)
        return;
    free(s->want_detail);
    s->want_detail = xstrdup(id);
    kick(s);
}

static void op_peek_dlq(rd_source *src, bool more)
{
    pg_src *s = src->impl;
    if (more)
        pg_dlq_page(s, +1);
    else
        pg_dlq_order(s, s->dlq_oldest, s->dlq_text);
    s->want_dlq = true;
    kick(s);
}

static void op_dlq_page(rd_source *src, int dir)
{
    pg_src *s = src->impl;
    pg_dlq_page(s, dir);
    s->want_dlq = true;
    kick(s);
}

static void op_dlq_order(rd_source *src, bool oldest, const char *text)
{
    pg_src *s = src->impl;
    pg_dlq_order(s, oldest, text);
    s->want_dlq = true;
    kick(s);
}

static bool op_settled(const rd_source *src)
{
    const pg_src *s = src->impl;
    return s->settled;
}

static bool op_idle(const rd_source *src)
{
    const pg_src *s = src->impl;
    if (s->failing)
        return true;     /* answered by the failure; retried after the reconnect */
    for (size_t i = 0; i < s->n_inflight; i++)
        if (s->inflight[i] == Q_CHAIN || s->inflight[i] == Q_DLQ || s->inflight[i] == Q_LOOKUP ||
            s->inflight[i] == Q_DETAIL)
            return false;
    return !s->want_chain && !s->want_jump && !s->want_detail && !s->want_dlq && s->page_gen_applied == s->page_gen;
}

static void op_free(rd_source *src)
{
    pg_src *s = src->impl;
    secret_cancel(s->sec_store);
    secret_cancel(s->sec_password);
    secret_free(s->store_value);
    for (size_t i = 0; i < Q_N; i++)
        free(s->notes[i]);
    pg_conn_free(s->conn);
    event_free(s->poll_ev);
    event_free(s->retry_ev);
    event_free(s->soon_ev);
    if (s->variant) {
        profile_free(s->variant);
        free(s->variant);
    }
    free(s->extensions);
    free(s->chg_states);
    free(s->chg_skip);
    free(s->want_chain);
    free(s->want_jump);
    free(s->want_detail);
    inflight_clear(s);
    free(s->want_worker);
    free(s->worker_inflight);
    free(s->filter.status);
    free(s->filter.text);
    free(s->filter.fingerprint);
    free(s->filter.worker);
    stack_clear(s);
    free(s->stack);
    pg_dlq_free(s);
    free(s);
}

static const rd_profile *op_profile(const rd_source *src)
{
    return ((const pg_src *)src->impl)->prof;
}

/* A new poll interval (the fleet slows systems not on screen): re-arms the running tick. */
static void op_set_poll(rd_source *src, double every)
{
    pg_src *s = src->impl;
    source_rearm(s->poll_ev, every > 0 ? every : 2.0);
}

static const rd_source_ops pg_ops = {
    .kind = SRC_NAME, .start = op_start, .refresh = op_refresh, .set_filter = op_set_filter,
    .page = op_page, .jump = op_jump, .chain = op_chain, .detail = op_detail, .worker = op_worker, .peek_dlq = op_peek_dlq,
    .dlq_page = op_dlq_page, .dlq_order = op_dlq_order,
    .settled = op_settled, .idle = op_idle, .free = op_free, .set_poll = op_set_poll, .profile = op_profile,
    .set_interest = op_set_interest,
};

rd_source *pg_source_new(const rd_source_ctx *ctx)
{
    if (!ctx->prof || !ctx->prof->store || strcmp(ctx->prof->store, "postgresql") != 0 ||
        !ctx->cfg || !ctx->cfg->store.url)
        return NULL;
    pg_src *s = xcalloc(1, sizeof *s);
    s->pub.ops = &pg_ops;
    s->pub.ctx = *ctx;
    s->pub.impl = s;
    s->prof = ctx->prof;
    s->backoff_s = BACKOFF_MIN_S;
    s->interest = RD_PANEL_ALL;
    /* this console's mark on its skip list in the session (pg_changes.c) */
    snprintf(s->chg_nonce, sizeof s->chg_nonce, "%08lx%06lx",
             (unsigned long)((uintptr_t)s ^ (uintptr_t)now_s() * 2654435761u) & 0xffffffffUL,
             (unsigned long)getpid() & 0xffffffUL);
    pg_conn_cbs cbs = { .ready = on_ready, .failed = on_failed, .batch_done = on_batch,
                        .ud = s };
    const rd_system_cfg *cfg = ctx->cfg;
    s->conn = pg_conn_new(ctx->base, secret_is_ref(cfg->store.url) ? "" : cfg->store.url, &cbs);
    pg_conn_set_param(s->conn, "user", cfg->store.user);
    pg_conn_set_param(s->conn, "sslmode", cfg->store.ssl.mode);
    pg_conn_set_param(s->conn, "sslrootcert", cfg->store.ssl.rootcert);
    pg_conn_set_param(s->conn, "sslcert", cfg->store.ssl.cert);
    pg_conn_set_param(s->conn, "sslkey", cfg->store.ssl.key);
    s->poll_ev = event_new(ctx->base, -1, EV_PERSIST, on_poll, s);
    s->retry_ev = evtimer_new(ctx->base, on_retry, s);
    s->soon_ev = evtimer_new(ctx->base, on_soon, s);
    return &s->pub;
}
