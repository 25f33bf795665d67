/*
 * The PostgreSQL store source: profile SQL over one asynchronous connection (pg_conn.c).
 * A refresh is one pipelined round trip: counts, the executions page (keyset), workers,
 * queues, DLQ size — plus the chain / DLQ page / id lookup when the UI asked for them.
 * On any failure the connection is dropped, the model keeps its data and shows the
 * source stale (or down) with the error, and we reconnect with backoff 1 s → 30 s.
 *
 * Before each connect the secret references are resolved on the loop (pg_secret.c): a
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
 * This file: the wiring of the parts, the connection's lifecycle, settling after a batch,
 * the rd_source ops. Building and sending a batch is pg_batch.c; applying its results
 * (variant loading, rows, notes) pg_apply.c; what the UI asks for and its answers
 * pg_view.c; the change probe pg_changes.c; the replica pg_replica.c. pg_priv.h holds
 * their handles.
 */
#include "pg_priv.h"


#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"

static const double CONNECT_DEADLINE_S = 5.0;
static const double BACKOFF_MIN_S = 1.0, BACKOFF_MAX_S = 30.0;

/* The source's timers and pacing: only the wiring here reads them. */
struct pg_timing {
    rd_event *poll_ev, *retry_ev, *soon_ev;
    rd_event *push_ev;        /* the coalesced push refresh */
    double poll_s;                /* the poll interval asked for (config or the fleet's pace);
                                   * PG_PUSH_SLOW times it while push works */
    bool push_was_on;             /* the poll timer is armed for push */
    bool polled;                  /* the poll timer asked for the batch in flight */
    double backoff_s;
    bool settled, failing;
};


/* The push state to the model; the poll slows to a safety net while push works and
 * covers the executions (Tasker's pgmq channels do not: its steps stay on the poll). */
static void push_sync(pg_src *s)
{
    model_source_push(model(s), SRC_NAME, pg_push_state(s->push));
    bool on = pg_push_slows_poll(s->push);
    if (on == s->t->push_was_on)
        return;
    s->t->push_was_on = on;
    double every = s->t->poll_s * (on ? PG_PUSH_SLOW : 1);
    source_rearm(s->t->poll_ev, every);
    model_source_every(model(s), SRC_NAME, every);
}

static void changed(pg_src *s)
{
    if (s->base.ctx.on_change)
        s->base.ctx.on_change(s->base.ctx.ud);
}

/* ---- connection lifecycle ---- */

static void kick(pg_src *s);
static void lost(pg_src *s, const char *err);

static void open_conn(pg_src *s)
{
    if (!pg_conn_open(s->conn, CONNECT_DEADLINE_S))
        lost(s, pg_conn_error(s->conn));
}

static void on_secrets(const char *err, void *ud)
{
    pg_src *s = ud;
    if (err)
        lost(s, err);
    else
        open_conn(s);
}

/* Resolves the references again at every connect (a cmd: may hand out short-lived
 * tokens), then connects; the source shows "connecting" meanwhile. */
static void connect_now(pg_src *s)
{
    s->setup_done = false;
    /* a new session: no skip list in it yet, indexes checked again, nothing prepared */
    pg_changes_reconnect(s->changes);
    pg_batch_reconnect(s->batch);
    pg_push_reconnect(s->push);
    loop_timer_stop(s->t->push_ev);
    push_sync(s);
    model_source(model(s), SRC_NAME);
    pg_secrets_resolve(s->secrets);   /* connects when done */
}

static void on_retry(int fd, short what, void *arg)
{
    (void)fd; (void)what;
    connect_now(arg);
}

/* The connection is gone (or never came up): keep the data, show the error, retry. */
static void lost(pg_src *s, const char *err)
{
    char msg[300];
    pg_secrets_redact(s->secrets, err && *err ? err : "connection lost", msg, sizeof msg);
    model_source_fail(model(s), SRC_NAME, msg, clock_wall());
    s->t->settled = true;
    s->t->failing = true;
    pg_replica_lost(s->replica, msg);
    /* what was in flight is wanted again after the reconnect */
    for (size_t i = 0; i < pg_batch_n(s->batch); i++)
        pg_view_again(s->view, pg_batch_kind(s->batch, i));
    pg_batch_answered(s->batch);
    pg_view_answered(s->view);
    pg_conn_close(s->conn);
    loop_timer_in(s->t->retry_ev, (double)(time_t)s->t->backoff_s);
    s->t->backoff_s = s->t->backoff_s * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : s->t->backoff_s * 2;
    changed(s);
}

static void on_failed(const char *err, void *ud) { lost(ud, err); }

static void on_ready(void *ud)
{
    pg_src *s = ud;
    pg_replica_connected(s->replica, s->conn, s->secrets);
    pg_view_want_refresh(s->view);
    kick(s);
}

static void on_poll(int fd, short what, void *arg)
{
    (void)fd; (void)what;
    pg_src *s = arg;
    s->t->polled = true;
    pg_view_want_refresh(s->view);
    kick(s);
}

/* A notification: one refresh of the lists on screen per push_min_interval; the ones in
 * between are folded into it. */
static void on_notify(const char *channel, void *ud)
{
    pg_src *s = ud;
    double due = pg_push_notified(s->push, channel, clock_mono());
    if (due >= 0) {
        loop_timer_in(s->t->push_ev, due);
    }
    push_sync(s);
}

static void on_push(int fd, short what, void *arg)
{
    (void)fd; (void)what;
    pg_src *s = arg;
    pg_push_fire(s->push, clock_mono());
    pg_view_want_refresh(s->view);
    /* the table counters the probe reads lag the commit: the pushed queries run anyway */
    pg_changes_forget(s->changes, pg_push_refresh_queries(s->push));
    kick(s);
}

/* After a batch: what the setup learned (channels, standby), a pooler, the silence check
 * of a refresh the poll timer asked for. */
static void push_after(pg_src *s, bool setup)
{
    if (setup) {
        const char *hs = pg_conn_param(s->conn, "in_hot_standby");
        pg_push_setup(s->push, s->prof, s->extensions, hs && strcmp(hs, "on") == 0);
    } else {
        if (pg_batch_pooled(s->batch))
            pg_push_pooled(s->push);
        if (s->t->polled && pg_batch_carries(s->batch, Q_CHANGES)) {
            const char *q = pg_push_refresh_queries(s->push);
            pg_push_polled(s->push, pg_changes_moved(s->changes, q ? q : "counts executions"),
                           clock_mono(), s->t->poll_s);
            s->t->polled = false;
        }
    }
    push_sync(s);
}

static void kick(pg_src *s)
{
    if (pg_conn_is_ready(s->conn) && !pg_batch_send(s))
        lost(s, pg_conn_error(s->conn));
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
        pg_batch_answered(s->batch);
        lost(s, err);
        return;
    }
    push_after(s, setup);
    pg_batch_answered(s->batch);
    pg_view_answered(s->view);
    if (*err) {
        char msg[300];
        pg_secrets_redact(s->secrets, err, msg, sizeof msg);
        model_source_fail(model(s), SRC_NAME, msg, clock_wall());
    } else if (!setup) {
        model_source_ok(model(s), SRC_NAME, clock_wall());
        s->t->backoff_s = BACKOFF_MIN_S;
        s->t->failing = false;
    }
    if (!setup || *err)
        s->t->settled = true;
    changed(s);
    kick(s);
}

/* ---- rd_source ops ---- */

static void op_start(rd_source *src)
{
    pg_src *s = src->impl;
    double poll = s->t->poll_s * (s->t->push_was_on ? PG_PUSH_SLOW : 1);
    loop_timer_in(s->t->poll_ev, poll);
    model_source_every(model(s), SRC_NAME, poll);   /* its freshness window (a steady poll repaints nothing) */
    connect_now(s);
}

static void op_refresh(rd_source *src)
{
    pg_src *s = src->impl;
    pg_view_want_refresh(s->view);
    pg_changes_force(s->changes);  /* the operator asked: everything, not the probe's word */
    if (!pg_conn_is_open(s->conn)) {
        loop_timer_stop(s->t->retry_ev);
        connect_now(s);
    } else {
        kick(s);
    }
}

static void on_soon(int fd, short what, void *arg)
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
    if (pg_view_set_interest(s->view, panels)) {
        loop_timer_in(s->t->soon_ev, 0);
    }
}

static void op_set_filter(rd_source *src, const rd_exec_filter *f)
{
    pg_src *s = src->impl;
    pg_view_set_filter(s->view, f);
    kick(s);
}

static void op_page(rd_source *src, int dir)
{
    pg_src *s = src->impl;
    if (pg_view_turn(s->view, dir))
        kick(s);
}

static void op_jump(rd_source *src, const char *id)
{
    pg_src *s = src->impl;
    if (!id || !*id)
        return;
    pg_view_want_jump(s->view, id);
    kick(s);
}

static void op_worker(rd_source *src, const char *id)
{
    pg_src *s = src->impl;
    if (pg_view_want_worker(s->view, id))
        kick(s);
}

static void op_chain(rd_source *src, const char *id)
{
    pg_src *s = src->impl;
    if (!id || !*id)
        return;
    pg_view_want_chain(s->view, id);
    kick(s);
}

static void op_peek_dlq(rd_source *src, bool more)
{
    pg_src *s = src->impl;
    pg_view_want_dlq(s->view, more);
    kick(s);
}

static void op_detail(rd_source *src, const char *id)
{
    pg_src *s = src->impl;
    if (!id || !*id)
        return;
    pg_view_want_detail(s->view, id);
    kick(s);
}

static void op_dlq_page(rd_source *src, int dir)
{
    pg_src *s = src->impl;
    pg_view_dlq_page(s->view, dir);
    kick(s);
}

static void op_dlq_order(rd_source *src, bool oldest, const char *text)
{
    pg_src *s = src->impl;
    pg_view_dlq_order(s->view, oldest, text);
    kick(s);
}

static void op_groups(rd_source *src, double window_s, long cap)
{
    pg_src *s = src->impl;
    pg_view_want_groups(s->view, window_s, cap);
    kick(s);
}

static bool op_settled(const rd_source *src)
{
    const pg_src *s = src->impl;
    return s->t->settled;
}

static bool op_idle(const rd_source *src)
{
    const pg_src *s = src->impl;
    if (s->t->failing)
        return true;     /* answered by the failure; retried after the reconnect */
    if (pg_batch_carries(s->batch, Q_CHAIN) || pg_batch_carries(s->batch, Q_DLQ) ||
        pg_batch_carries(s->batch, Q_LOOKUP) || pg_batch_carries(s->batch, Q_GROUPS) ||
        pg_batch_carries(s->batch, Q_DETAIL))
        return false;
    return pg_view_idle(s->view);
}

static void op_free(rd_source *src)
{
    pg_src *s = src->impl;
    if (getenv("RD_PG_DEBUG"))        /* tests and benches: what push cost */
        fprintf(stderr, "pg push: notifications %lu, push refreshes %lu, state %s\n",
                pg_push_notifications(s->push), pg_push_refreshes(s->push),
                pg_push_state(s->push));
    pg_push_free(s->push);
    loop_event_free(s->t->push_ev);
    pg_secrets_free(s->secrets);
    pg_changes_free(s->changes);
    pg_replica_free(s->replica);
    pg_batch_free(s->batch);
    for (size_t i = 0; i < Q_N; i++)
        free(s->notes[i]);
    pg_conn_free(s->conn);
    loop_event_free(s->t->poll_ev);
    loop_event_free(s->t->retry_ev);
    loop_event_free(s->t->soon_ev);
    if (s->variant) {
        profile_free(s->variant);
        free(s->variant);
    }
    free(s->extensions);
    pg_view_free(s->view);
    free(s->t);
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
    s->t->poll_s = every > 0 ? every : 2.0;
    source_rearm(s->t->poll_ev, s->t->poll_s * (s->t->push_was_on ? PG_PUSH_SLOW : 1));
}

static const rd_source_ops pg_ops = {
    .kind = SRC_NAME, .start = op_start, .refresh = op_refresh, .set_filter = op_set_filter,
    .page = op_page, .jump = op_jump, .chain = op_chain, .detail = op_detail, .worker = op_worker,
    .peek_dlq = op_peek_dlq, .dlq_page = op_dlq_page, .dlq_order = op_dlq_order, .groups = op_groups,
    .settled = op_settled, .idle = op_idle, .free = op_free, .set_poll = op_set_poll, .profile = op_profile,
    .set_interest = op_set_interest,
};

rd_source *pg_source_new(const rd_source_ctx *ctx)
{
    if (!ctx->prof || !ctx->prof->store || strcmp(ctx->prof->store, "postgresql") != 0 ||
        !ctx->cfg || !ctx->cfg->store.url)
        return NULL;
    pg_src *s = xcalloc(1, sizeof *s);
    s->base.ops = &pg_ops;
    s->base.ctx = *ctx;
    s->base.impl = s;
    s->prof = ctx->prof;
    s->t = xcalloc(1, sizeof *s->t);
    s->t->backoff_s = BACKOFF_MIN_S;
    s->t->poll_s = ctx->cfg->poll_s > 0 ? ctx->cfg->poll_s : 2.0;
    s->push = pg_push_new(ctx->cfg->store.push, ctx->cfg->store.push_min_interval_s);
    s->view = pg_view_new(ctx->model, ctx->cfg->ui.page_size);
    s->batch = pg_batch_new();
    s->changes = pg_changes_new();
    s->replica = pg_replica_new(ctx->model);
    pg_conn_cbs cbs = { .ready = on_ready, .failed = on_failed, .batch_done = on_batch,
                        .notify = on_notify, .ud = s };
    const rd_system_cfg *cfg = ctx->cfg;
    s->conn = pg_conn_new(ctx->base, secret_is_ref(cfg->store.url) ? "" : cfg->store.url, &cbs);
    pg_conn_set_param(s->conn, "user", cfg->store.user);
    pg_conn_set_param(s->conn, "sslmode", cfg->store.ssl.mode);
    pg_conn_set_param(s->conn, "sslrootcert", cfg->store.ssl.rootcert);
    pg_conn_set_param(s->conn, "sslcert", cfg->store.ssl.cert);
    pg_conn_set_param(s->conn, "sslkey", cfg->store.ssl.key);
    s->secrets = pg_secrets_new(ctx->base, cfg, s->conn, on_secrets, s);
    s->t->poll_ev = loop_every_new(ctx->base, on_poll, s);
    s->t->retry_ev = loop_timer_new(ctx->base, on_retry, s);
    s->t->soon_ev = loop_timer_new(ctx->base, on_soon, s);
    s->t->push_ev = loop_timer_new(ctx->base, on_push, s);
    return &s->base;
}
