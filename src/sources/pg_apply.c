/*
 * Applying a PostgreSQL batch to the model (pg_source.c sends it). The setup batch picks
 * the schema-era variant profile (a sibling of the top profile, named by variant_query)
 * and records the extensions; a refresh batch sets counts, the executions page, workers,
 * queues, DLQ and chain. A query the profile marks optional that fails empties its panel
 * and leaves a note on the source; a bad id typed by the operator is not a failure.
 */
#include "pg_priv.h"

#include "../core/detail.h"
#include "../core/health.h"
#include "../core/xalloc.h"
#include "pg_rows.h"

static bool result_ok(const PGresult *r)
{
    ExecStatusType st = PQresultStatus(r);
    return st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK;
}

static void result_error(const PGresult *r, qkind k, char *out, size_t cap)
{
    const char *m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    if (!m || !*m)
        m = PQresultErrorMessage(r);
    snprintf(out, cap, "query %s: %s", pg_qnames[k], m && *m ? m : PQresStatus(PQresultStatus(r)));
}

static bool sqlstate_is(const PGresult *r, const char *code)
{
    const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    return st && strcmp(st, code) == 0;
}

/* A bad id typed by the operator (SQLSTATE class 22) is not a source failure. */
static bool is_data_error(const PGresult *r)
{
    const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    return st && strncmp(st, "22", 2) == 0;
}

static bool variant_name_ok(const char *v)
{
    if (!v || !*v || strlen(v) > 64)
        return false;
    for (const char *p = v; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.'))
            return false;
    return true;
}

/* Loads the sibling profile named by the variant query (next to the top profile). */
static bool load_variant(pg_src *s, const char *name, char *err, size_t cap)
{
    if (s->variant && s->variant->name && strcmp(s->variant->name, name) == 0)
        return true;
    if (!variant_name_ok(name)) {
        snprintf(err, cap, "variant query returned an invalid profile name");
        return false;
    }
    rd_profile *p = xcalloc(1, sizeof *p);
    rd_diags d = {0};
    bool ok = profile_load_near(name, s->pub.ctx.prof->path, p, &d);
    if (!ok) {
        snprintf(err, cap, "profile %s: %s", name, d.n ? d.msgs[0] : "cannot load");
        diags_free(&d);
        profile_free(p);
        free(p);
        return false;
    }
    diags_free(&d);
    if (s->variant) {
        profile_free(s->variant);
        free(s->variant);
    }
    s->variant = p;
    s->prof = p;
    return true;
}

/* What `redrive check` reports: the server's version, read-only session, pgmq. */
static void note_server(pg_src *s)
{
    model_source_version(model(s), SRC_NAME, pg_conn_param(s->conn, "server_version"));
    const char *ro = pg_conn_param(s->conn, "default_transaction_read_only");
    if (ro)
        model_source_fact(model(s), SRC_NAME, RD_FACT_READ_ONLY, strcmp(ro, "on") == 0);
    bool verified;
    bool tls = pg_conn_tls(s->conn, &verified);
    model_source_fact(model(s), SRC_NAME, RD_FACT_TLS, tls);
    model_source_fact(model(s), SRC_NAME, RD_FACT_TLS_VERIFIED, verified);
    if (s->extensions)
        model_source_fact(model(s), SRC_NAME, RD_FACT_PGMQ,
                          strstr(s->extensions, ",pgmq,") != NULL);
}

void pg_apply_setup(pg_src *s, PGresult **res, size_t n, char *err, size_t cap)
{
    for (size_t i = 0; i < n; i++) {
        qkind k = s->inflight[i];
        if (!result_ok(res[i])) {
            if (!*err)
                result_error(res[i], k, err, cap);
            continue;
        }
        const char *v = PQntuples(res[i]) > 0 && !PQgetisnull(res[i], 0, 0)
                            ? PQgetvalue(res[i], 0, 0) : NULL;
        if (k == Q_EXTENSIONS) {
            free(s->extensions);
            s->extensions = xstrdup(v ? v : ",");
        } else if (k == Q_VARIANT && !load_variant(s, v ? v : "", err, cap)) {
            s->prof = s->pub.ctx.prof;
        }
    }
    note_server(s);
    s->setup_done = true;
}

static pg_row_ctx row_ctx(const pg_src *s)
{
    pg_row_ctx x = { .now = now_s() };
    x.sem = pg_semantics_parse(s->prof->semantics);
    if (s->pub.ctx.cfg)
        x.health = s->pub.ctx.cfg->health;
    else
        health_defaults(&x.health);
    /* the profile's heartbeat_max_age (e.g. OpenAgents beats every 60 s) applies unless the
     * config chose a value other than the default */
    rd_health_cfg def;
    health_defaults(&def);
    double hb;
    const char *v = profile_get(s->prof, "heartbeat_max_age");
    if (v && parse_duration(v, &hb) && hb > 0 && x.health.heartbeat_max_age == def.heartbeat_max_age)
        x.health.heartbeat_max_age = hb;
    attune_backoff_defaults(&x.backoff);
    return x;
}

static bool same(const char *want, const char *have)
{
    return !want || !*want || (have && strcmp(have, want) == 0);
}

/* The filters applied to the page's rows: the fingerprint (computed here), and the
 * worker for a profile whose query has no $7. */
static void filter_fingerprint(const pg_src *s, rd_execution *v, size_t *n)
{
    if ((!s->filter.fingerprint || !*s->filter.fingerprint) && (!s->filter.worker || !*s->filter.worker))
        return;
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        if (same(s->filter.fingerprint, v[i].fingerprint) && same(s->filter.worker, v[i].worker))
            v[k++] = v[i];
        else
            execution_clear(&v[i]);
    }
    *n = k;
}

static void apply_execs(pg_src *s, const PGresult *r, const pg_row_ctx *x)
{
    if (s->page_gen_inflight != s->page_gen)
        return;                       /* the page changed meanwhile; a new one is wanted */
    s->page_gen_applied = s->page_gen;
    int page = s->pub.ctx.cfg && s->pub.ctx.cfg->ui.page_size > 0 ? s->pub.ctx.cfg->ui.page_size
                                                               : 100;
    rd_execution *v;
    size_t n = pg_rows_execs(r, x, &v);
    int rows = PQntuples(r);
    /* the row that ended the searched window (scan_end, $6): not a match, but where the
     * next request goes on from */
    const char *end = rows > 0 ? pg_text(r, rows - 1, "scan_end") : NULL;
    bool at_end = end && (strcmp(end, "t") == 0 || strcmp(end, "true") == 0);
    int matches = at_end ? rows - 1 : rows;
    if (at_end && n == (size_t)rows)
        execution_clear(&v[--n]);
    int next_row = matches > page ? page : at_end ? rows - 1 : -1;
    bool more = next_row >= 0;
    cursor_free(&s->next);
    bool filtered = s->filter.text || s->filter.status || s->filter.worker;
    if (more) {
        s->next.key = xstrdup(pg_text(r, next_row, "sort_key"));
        s->next.id = xstrdup(pg_text(r, next_row, "id"));
        more = s->next.key && s->next.id;
        /* the search stopped short of a page: going on searches SCAN_GROWTH times more */
        long b = scan_budget(s);
        s->next.budget = filtered && matches <= page
                             ? (b > SCAN_BUDGET_MAX / SCAN_GROWTH ? SCAN_BUDGET_MAX : b * SCAN_GROWTH)
                             : 0;
    }
    while (n > (size_t)page)
        execution_clear(&v[--n]);
    filter_fingerprint(s, v, &n);
    /* fewer matches than a page in the window: say how far the search went */
    model(s)->execs_searched = more && matches <= page && filtered ? scan_budget(s) : 0;
    model(s)->execs_newer = s->start.key != NULL;   /* a later page, or a jump's */
    model_set_execs(model(s), n ? v : NULL, n, more);
    if (!n)
        free(v);
}

static void apply_jump(pg_src *s, const PGresult *r)
{
    const char *key = pg_text(r, 0, "sort_key"), *id = pg_text(r, 0, "id");
    if (!key || !id)
        return;
    if (s->depth == s->stack_cap)
        xgrow(&s->stack, &s->stack_cap, s->depth + 1, sizeof *s->stack);
    s->stack[s->depth++] = s->start;
    s->start.key = xstrdup(key);
    s->start.id = xstrdup(id);
    s->start.budget = 0;
    s->page_gen++;
    s->want_page = true;
}

/* One execution in full: the row's columns by name (core/detail.h), none: no record. */
static void apply_detail(pg_src *s, const PGresult *r)
{
    if (!s->detail_inflight)
        return;
    if (PQntuples(r) < 1) {
        model_set_detail(model(s), s->detail_inflight, NULL, "no such execution in the store");
        return;
    }
    int nf = PQnfields(r);
    const char **names = xcalloc((size_t)nf + 1, sizeof *names), **vals = xcalloc((size_t)nf + 1, sizeof *vals);
    for (int i = 0; i < nf; i++) {
        names[i] = PQfname(r, i);
        vals[i] = PQgetisnull(r, 0, i) ? NULL : PQgetvalue(r, 0, i);
    }
    model_set_detail(model(s), s->detail_inflight, detail_from_row(names, vals, (size_t)nf), NULL);
    free(names);
    free(vals);
}

static void apply_scalar(pg_src *s, qkind k, const PGresult *r)
{
    double d;
    const char *v = PQntuples(r) > 0 && PQnfields(r) > 0 && !PQgetisnull(r, 0, 0)
                        ? PQgetvalue(r, 0, 0) : NULL;
    bool ok = pg_parse_double(v, &d) && d >= 0 && d < 1e15;
    if (k == Q_DLQ_COUNT)
        model_dlq_total(model(s), SRC_NAME, ok ? (long)d : -1);
    else
        model_set_failing_rate(model(s), ok ? d : -1);
}

static void apply_one(pg_src *s, qkind k, const PGresult *r, const pg_row_ctx *x)
{
    rd_model *m = model(s);
    switch (k) {
    case Q_COUNTS: {
        rd_count *v;
        size_t n = pg_rows_counts(r, &v);
        model_set_counts(m, v, n);
        break;
    }
    case Q_WORKERS: {
        rd_worker *v;
        size_t n = pg_rows_workers(r, x, &v);
        model_set_workers(m, v, n);
        break;
    }
    case Q_QUEUES: {
        rd_queue *v;
        size_t n = pg_rows_queues(r, &v);
        model_set_queues(m, SRC_NAME, v, n);
        break;
    }
    case Q_EXECS: apply_execs(s, r, x); break;
    case Q_CHAIN: {
        rd_execution *v;
        size_t n = pg_rows_execs(r, x, &v);
        model_set_chain(m, s->chain_inflight, v, n);
        break;
    }
    case Q_LOOKUP: apply_jump(s, r); break;
    case Q_DETAIL: apply_detail(s, r); break;
    case Q_RUNNING: {
        rd_execution *v;
        size_t n = pg_rows_execs(r, x, &v);
        if (s->want_worker && s->worker_inflight && strcmp(s->want_worker, s->worker_inflight) == 0)
            model_set_running(m, s->worker_inflight, v, n, true);
        else {                        /* the cockpit moved to another worker meanwhile */
            for (size_t i = 0; i < n; i++)
                execution_clear(&v[i]);
            free(v);
        }
        break;
    }
    case Q_DLQ: pg_dlq_apply(s, r); break;
    case Q_DLQ_COUNT: case Q_FAILING: apply_scalar(s, k, r); break;
    default: break;
    }
}

/* The probe let the server skip the workers query: their data stands, but their health
 * depends on the clock (heartbeat age), so it is judged again now. */
static void workers_reclassify(pg_src *s, const pg_row_ctx *x)
{
    rd_model *m = model(s);
    bool any = false;
    for (size_t i = 0; i < m->workers.n; i++)
        any |= health_reclassify(&x->health, &m->workers.items[i], x->now);
    if (any)
        model_changed(m);
}

/* An optional query failed: its panel is emptied (the note says why). */
static void apply_empty(pg_src *s, qkind k)
{
    rd_model *m = model(s);
    switch (k) {
    case Q_COUNTS: model_set_counts(m, NULL, 0); break;
    case Q_WORKERS: model_set_workers(m, NULL, 0); break;
    case Q_QUEUES: model_set_queues(m, SRC_NAME, NULL, 0); break;
    case Q_EXECS:
        if (s->page_gen_inflight == s->page_gen) {
            s->page_gen_applied = s->page_gen;
            model_set_execs(m, NULL, 0, false);
        }
        break;
    case Q_CHAIN: model_set_chain(m, s->chain_inflight, NULL, 0); break;
    case Q_DETAIL: model_set_detail(m, s->detail_inflight, NULL, "the store could not read it"); break;
    case Q_RUNNING: model_set_running(m, s->want_worker, NULL, 0, false); break;
    case Q_DLQ: model_dlq_set(m, SRC_NAME, NULL, 0); break;
    case Q_DLQ_COUNT: model_dlq_total(m, SRC_NAME, -1); break;
    case Q_FAILING: model_set_failing_rate(m, -1); break;
    default: break;
    }
}

static void note_set(pg_src *s, qkind k, const PGresult *r)
{
    free(s->notes[k]);
    s->notes[k] = NULL;
    if (r) {
        char msg[300];
        const char *m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
        snprintf(msg, sizeof msg, "%s: %s", pg_qnames[k], m && *m ? m : "query failed");
        s->notes[k] = xstrdup(msg);
    }
}

/* The notes of the queries the effective profile still has, in query order. */
static void notes_publish(pg_src *s)
{
    const char *v[Q_N];
    size_t n = 0;
    for (size_t k = 0; k < Q_N; k++)
        if (s->notes[k] && (k == Q_INDEXES || query(s, (qkind)k)))
            v[n++] = s->notes[k];
    model_source_notes(model(s), SRC_NAME, v, n);
}

void pg_apply_results(pg_src *s, PGresult **res, size_t n, char *err, size_t cap)
{
    pg_row_ctx x = row_ctx(s);
    for (size_t i = 0; i < n && i < s->n_inflight; i++) {
        qkind k = s->inflight[i];
        if (k == Q_SETTING)
            continue;
        if (k == Q_REPLICA) {         /* the lag: shown when read, never a failure */
            pg_replica_apply(s, res[i]);
            continue;
        }
        if (k == Q_PREPARE) {         /* named from now on; unnamed if it would not prepare */
            s->prepared[s->prep_of[i]][s->prep_guarded[i]] = result_ok(res[i]);
            continue;
        }
        if (!result_ok(res[i]) && sqlstate_is(res[i], "26000")) {
            /* "prepared statement does not exist": a pooler hands out other sessions */
            s->no_named = true;
            memset(s->prepared, 0, sizeof s->prepared);
        }
        if (k == Q_CHANGES) {
            bool ok = result_ok(res[i]);
            pg_changes_apply(s, res[i], ok);
            note_set(s, k, ok || pg_changes_unchanged(res[i]) ? NULL : res[i]);
            continue;
        }
        if (s->chg_guarded[i] && pg_changes_skipped(s, k)) {
            s->chg_skipped++;
            if (k == Q_EXECS && s->page_gen_inflight == s->page_gen)
                s->page_gen_applied = s->page_gen;
            if (k == Q_WORKERS)
                workers_reclassify(s, &x);
            continue;                 /* unchanged: the model keeps what it has */
        }
        if (PQresultStatus(res[i]) == PGRES_PIPELINE_ABORTED) {
            /* another query of its sync group failed: wanted again, a sync each */
            s->chg_split = true;
            if (k == Q_EXECS)
                s->want_page = true;
            else
                s->want_main = true;
            continue;
        }
        if (s->chg_grouped && !result_ok(res[i]))
            s->chg_split = true;
        if (k == Q_INDEXES) {         /* advice: a catalog it cannot read is no failure */
            if (result_ok(res[i]))
                pg_indexes_apply(s, res[i]);
            continue;
        }
        if (result_ok(res[i])) {
            apply_one(s, k, res[i], &x);
            note_set(s, k, NULL);
        } else if (profile_query_optional(s->prof, pg_qnames[k])) {
            apply_empty(s, k);
            note_set(s, k, res[i]);
        } else {
            if (k == Q_CHAIN)
                model_set_chain(model(s), s->chain_inflight, NULL, 0);
            if (k == Q_DETAIL)
                apply_empty(s, k);
            if (!(is_data_error(res[i]) && (k == Q_CHAIN || k == Q_LOOKUP || k == Q_DETAIL)) && !*err)
                result_error(res[i], k, err, cap);
        }
    }
    notes_publish(s);
}
