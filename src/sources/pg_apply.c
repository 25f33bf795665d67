/*
 * Applying a PostgreSQL batch to the model (pg_batch.c builds and sends it). The setup
 * batch picks the schema-era variant profile (a sibling of the top profile, named by
 * variant_query) and records the extensions; a refresh batch sets counts, workers, queues,
 * the DLQ size and failure rate, and hands the executions page, chain, lookup, cockpit and
 * DLQ page to pg_view.c. A query the profile marks optional that fails empties its panel
 * and leaves a note on the source; a bad id typed by the operator is not a failure.
 */
#include "pg_priv.h"

#include "../core/health.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "pg_rows.h"

static void result_error(const PGresult *r, qkind k, char *out, size_t cap)
{
    const char *m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    if (!m || !*m)
        m = PQresultErrorMessage(r);
    snprintf(out, cap, "query %s: %s", pg_qnames[k], m && *m ? m : PQresStatus(PQresultStatus(r)));
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
    bool ok = profile_load_near(name, s->base.ctx.prof->path, p, &d);
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
        qkind k = pg_batch_kind(s->batch, i);
        if (!pg_result_ok(res[i])) {
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
            s->prof = s->base.ctx.prof;
        }
    }
    note_server(s);
    s->setup_done = true;
}

static pg_row_ctx row_ctx(const pg_src *s)
{
    pg_row_ctx x = { .now = clock_wall() };
    x.sem = pg_semantics_parse(s->prof->semantics);
    if (s->base.ctx.cfg)
        x.health = s->base.ctx.cfg->health;
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

/* The failing query's whole-store figures (docs/profiles.md, "failing"): columns
 * retry_eligible (+ retry_eligible_capped, retry_eligible_upper) and oldest_queued_at
 * (epoch s, NULL: none queued), each optional: a profile without them leaves the figure
 * unknown (the fleet falls back to the page). */
static void apply_store_figures(pg_src *s, const PGresult *r)
{
    long elig = -1;
    bool capped = false, upper = false;
    double oldest = -1;
    if (r && PQntuples(r) > 0) {
        if (PQfnumber(r, "retry_eligible") >= 0 &&
            pg_parse_long(pg_text(r, 0, "retry_eligible"), 0, 1L << 50, &elig)) {
            capped = pg_parse_bool(pg_text(r, 0, "retry_eligible_capped")) == 1;
            upper = pg_parse_bool(pg_text(r, 0, "retry_eligible_upper")) == 1;
        } else {
            elig = -1;
        }
        if (PQfnumber(r, "oldest_queued_at") >= 0) {
            const char *v = pg_text(r, 0, "oldest_queued_at");
            double d;
            oldest = !v ? 0 : pg_parse_double(v, &d) && d > 0 && d < 1e11 ? d : -1;
        }
    }
    model_set_store_figures(model(s), elig, capped, upper, oldest);
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
    case Q_EXECS: pg_view_got_execs(s->view, r, x); break;
    case Q_CHAIN: pg_view_got_chain(s->view, r, x); break;
    case Q_LOOKUP: pg_view_got_lookup(s->view, r); break;
    case Q_DETAIL: pg_view_got_detail(s->view, r); break;
    case Q_RUNNING: pg_view_got_running(s->view, r, x); break;
    case Q_DLQ: pg_view_got_dlq(s->view, r); break;
    case Q_DLQ_GROUPS: pg_dlq_got_groups(m, r); break;
    case Q_GROUPS: pg_view_got_groups(s->view, r, x); break;
    case Q_GROUPS_WINDOW: pg_view_got_groups_window(s->view, r); break;
    case Q_DLQ_COUNT: apply_scalar(s, k, r); break;
    case Q_FAILING: apply_scalar(s, k, r), apply_store_figures(s, r); break;
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
static void apply_empty(pg_src *s, qkind k, const pg_row_ctx *x)
{
    rd_model *m = model(s);
    switch (k) {
    case Q_COUNTS: model_set_counts(m, NULL, 0); break;
    case Q_WORKERS: model_set_workers(m, NULL, 0); break;
    case Q_QUEUES: model_set_queues(m, SRC_NAME, NULL, 0); break;
    case Q_EXECS: pg_view_got_execs(s->view, NULL, x); break;
    case Q_CHAIN: pg_view_got_chain(s->view, NULL, x); break;
    case Q_RUNNING: pg_view_got_running(s->view, NULL, x); break;
    case Q_DLQ: model_dlq_set(m, SRC_NAME, NULL, 0); break;
    case Q_DLQ_GROUPS: model_set_dlq_sgroups(m, NULL); break;
    case Q_GROUPS: pg_view_got_groups(s->view, NULL, x); break;
    case Q_GROUPS_WINDOW: pg_view_got_groups_window(s->view, NULL); break;
    case Q_DETAIL: pg_view_got_detail(s->view, NULL); break;
    case Q_DLQ_COUNT: model_dlq_total(m, SRC_NAME, -1); break;
    case Q_FAILING: model_set_failing_rate(m, -1), apply_store_figures(s, NULL); break;
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
    for (size_t i = 0; i < n && i < pg_batch_n(s->batch); i++) {
        qkind k = pg_batch_kind(s->batch, i);
        if (k == Q_SETTING)
            continue;
        if (k == Q_LISTEN) {          /* push: a failure is its state, never the source's */
            pg_push_listened(s->push, res[i]);
            continue;
        }
        if (k == Q_REPLICA) {         /* the lag: shown when read, never a failure */
            pg_replica_apply(s->replica, res[i]);
            continue;
        }
        if (pg_batch_result(s->batch, i, res[i]))
            continue;                 /* a statement prepared */
        if (k == Q_CHANGES) {
            bool ok = pg_result_ok(res[i]);
            pg_changes_apply(s->changes, s->replica, res[i], ok);
            note_set(s, k, ok || pg_changes_unchanged(res[i]) ? NULL : res[i]);
            continue;
        }
        if (pg_batch_guarded(s->batch, i) && pg_changes_skipped(s->changes, k)) {
            if (k == Q_EXECS)
                pg_view_got_unchanged(s->view);
            if (k == Q_WORKERS)
                workers_reclassify(s, &x);
            continue;                 /* unchanged: the model keeps what it has */
        }
        if (PQresultStatus(res[i]) == PGRES_PIPELINE_ABORTED) {
            /* another query of its sync group failed: wanted again, a sync each */
            pg_changes_query_failed(s->changes, true);
            pg_view_again(s->view, k);
            continue;
        }
        if (!pg_result_ok(res[i]))
            pg_changes_query_failed(s->changes, false);
        if (k == Q_INDEXES) {         /* advice: a catalog it cannot read is no failure */
            if (pg_result_ok(res[i])) {
                free(s->notes[Q_INDEXES]);
                s->notes[Q_INDEXES] = pg_indexes_note(res[i]);
            }
            continue;
        }
        if (pg_result_ok(res[i])) {
            apply_one(s, k, res[i], &x);
            note_set(s, k, NULL);
        } else if (profile_query_optional(s->prof, pg_qnames[k])) {
            apply_empty(s, k, &x);
            note_set(s, k, res[i]);
        } else {
            if (k == Q_CHAIN)
                pg_view_got_chain(s->view, NULL, &x);
            if (k == Q_DETAIL)
                pg_view_got_detail(s->view, NULL);
            if (!(is_data_error(res[i]) && (k == Q_CHAIN || k == Q_LOOKUP || k == Q_DETAIL)) && !*err)
                result_error(res[i], k, err, cap);
        }
    }
    notes_publish(s);
}
