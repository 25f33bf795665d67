/*
 * The Redis store source (Alakai): one hash per task at {prefix}:{taskId}, one JSON
 * record per attempt field. This file holds the source's ops and the wiring of its three
 * parts, each owning its state:
 *   - the connection (redis_conn.h: lookup, TLS, connect, AUTH, deadlines, backoff, the
 *     notification subscription, the URL list and failover);
 *   - the sweep (redis_sweep.h: the index, SCAN sweeps, notified keys, fetch batches);
 *   - the view (redis_view.h: filter, page, chain and DLQ requests, what is published).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"
#include "redis_conn.h"
#include "redis_sweep.h"
#include "redis_view.h"
#include "source.h"

static const char SRC_NAME[] = "redis";

typedef struct rs_src {
    rd_source base;
    rs_conn *conn;
    rs_sweep *sweep;
    rs_view *view;
    rd_event *ev_tick, *ev_kick;
    bool settled;                   /* the first sweep published, or a failure shown */
    bool freeing;
} rs_src;

/* ---- periodic work ---------------------------------------------------------------------- */

static void publish(rs_src *s, bool force)
{
    if (!s->freeing && rs_sweep_done_once(s->sweep))
        rs_view_publish(s->view, force);
}

/* What is due now, bounded. */
static void step(rs_src *s, bool poll)
{
    if (!rs_conn_ready(s->conn))
        return;
    rs_sweep_step(s->sweep, rs_conn_notified(s->conn));
    rs_conn_poll(s->conn, poll);
    publish(s, false);
}

static void on_kick(int fd, short what, void *arg)
{
    step(arg, false);
}

static void on_tick(int fd, short what, void *arg)
{
    step(arg, true);
}

static void kick(rs_src *s)                  /* step soon, from the loop */
{
    if (!loop_timer_pending(s->ev_kick)) {
        loop_timer_in(s->ev_kick, 0.05);
    }
}

static void chain_fetch(rs_src *s)
{
    const char *id = rs_conn_ready(s->conn) ? rs_view_chain_take(s->view) : NULL;
    if (id)
        rs_sweep_chain(s->sweep, id);
}

static void changed(rs_src *s)
{
    if (s->base.ctx.on_change)
        s->base.ctx.on_change(s->base.ctx.ud);
}

/* ---- the connection's reports ------------------------------------------------------------- */

static void conn_ready(void *ud)
{
    rs_src *s = ud;
    rs_sweep_start(s->sweep);
    chain_fetch(s);
}

static void conn_failed(const char *msg, bool connected, void *ud)
{
    rs_src *s = ud;
    model_source_fail(s->base.ctx.model, SRC_NAME, msg, clock_wall());
    s->settled = true;
    if (!connected)
        rs_view_answer(s->view, msg, rs_sweep_done_once(s->sweep));
    changed(s);
}

static void conn_lost(void *ud)
{
    rs_src *s = ud;
    rs_sweep_stop(s->sweep);
}

static void conn_answered(void *ud)
{
    rs_src *s = ud;
    if (rs_sweep_done_once(s->sweep))
        model_source_ok(s->base.ctx.model, SRC_NAME, clock_wall());
}

static void conn_missed(void *ud)
{
    rs_src *s = ud;
    rs_sweep_resync(s->sweep);
}

static void conn_notified(const char *key, size_t len, void *ud)
{
    rs_src *s = ud;
    if (key)
        rs_sweep_notified(s->sweep, key, len);
    kick(s);
}

/* ---- the sweep's reports ------------------------------------------------------------------ */

static void sweep_swept(void *ud)
{
    rs_src *s = ud;
    s->settled = true;
    rs_view_whole(s->view);
    publish(s, true);
}

static void sweep_changed(void *ud)
{
    publish(ud, false);
}

static void sweep_partial(void *ud)    /* the first sweep's index so far (the model's
                                          progress says it is partial) */
{
    rs_src *s = ud;
    if (!s->freeing)
        rs_view_publish(s->view, true);
}

static void sweep_progress(void *ud)
{
    changed(ud);
}

static void sweep_chain_done(void *ud)
{
    rs_src *s = ud;
    rs_view_chain_done(s->view);
    changed(s);
    chain_fetch(s);                  /* a newer request may be waiting */
}

/* ---- ops ---------------------------------------------------------------------------------- */

static rs_src *impl(const rd_source *src) { return src->impl; }

static void op_start(rd_source *src)
{
    rs_src *s = impl(src);
    model_source(s->base.ctx.model, SRC_NAME);
    loop_timer_in(s->ev_tick, s->base.ctx.cfg->poll_s > 0.2 ? s->base.ctx.cfg->poll_s : 2);
    rs_conn_start_soon(s->conn);     /* from the loop: even an immediate failure reaches a
                                        waiting caller */
}

static void op_refresh(rd_source *src)
{
    rs_src *s = impl(src);
    if (rs_conn_retry_now(s->conn))
        return;
    if (!rs_conn_notified(s->conn))
        rs_sweep_resync(s->sweep);
    step(s, false);
}

static void op_set_filter(rd_source *src, const rd_exec_filter *f)
{
    rs_src *s = impl(src);
    rs_view_set_filter(s->view, f);
    publish(s, true);
}

static void op_page(rd_source *src, int dir)
{
    rs_src *s = impl(src);
    if (rs_view_page(s->view, dir))
        publish(s, true);
}

static void op_jump(rd_source *src, const char *id)
{
    rs_src *s = impl(src);
    rs_view_jump(s->view, id);
    publish(s, true);
}

/* A request the source cannot serve while down (and settled) is answered at once. */
static void answer_if_down(rs_src *s)
{
    if (s->settled && rs_conn_down(s->conn))
        rs_view_answer(s->view, "redis: not connected", rs_sweep_done_once(s->sweep));
}

static void op_chain(rd_source *src, const char *id)
{
    rs_src *s = impl(src);
    if (!id || !*id)
        return;
    rs_view_want_chain(s->view, id);
    if (rs_conn_ready(s->conn))
        chain_fetch(s);
    else
        answer_if_down(s);
}

/* One task in full: its chain's fetch reads every record; the newest is the detail. */
static void op_detail(rd_source *src, const char *id)
{
    op_chain(src, id);
}

static void op_peek_dlq(rd_source *src, bool more)
{
    rs_src *s = impl(src);
    rs_view_want_dlq(s->view, more);
    if (rs_sweep_done_once(s->sweep))
        publish(s, true);
    else
        answer_if_down(s);
}

/* The error groups of the window, computed from the index on demand (the view opens,
 * ^r, :groups DUR; never on a poll): now when the index has been whole, else at the next
 * publish of the first sweep (partial, the model says) and again at its end. */
static void op_groups(rd_source *src, double window_s, long cap)
{
    rs_src *s = impl(src);
    rs_view_want_groups(s->view, window_s, cap);
    if (rs_sweep_done_once(s->sweep))
        publish(s, true);
}

static bool op_settled(const rd_source *src)   /* and its publish, if any, is over */
{
    return impl(src)->settled && !rs_view_busy(impl(src)->view);
}

static bool op_idle(const rd_source *src)
{
    return rs_view_idle(impl(src)->view);
}

static void op_free(rd_source *src)
{
    rs_src *s = impl(src);
    s->freeing = true;
    rs_conn_free(s->conn);           /* first: its replies in flight reach the sweep */
    rs_sweep_free(s->sweep);
    rs_view_free(s->view);
    loop_event_free(s->ev_tick);
    loop_event_free(s->ev_kick);
    free(s);
}

/* A new poll interval (the fleet slows systems not on screen): re-arms the running tick. */
static void op_set_poll(rd_source *src, double every)
{
    rs_src *s = src->impl;
    source_rearm(s->ev_tick, every > 0.2 ? every : 2);
}

static const rd_source_ops redis_ops = {
    .kind = "redis",
    .start = op_start,
    .refresh = op_refresh,
    .set_filter = op_set_filter,
    .page = op_page,
    .jump = op_jump,
    .chain = op_chain,
    .detail = op_detail,
    .peek_dlq = op_peek_dlq,
    .groups = op_groups,
    .settled = op_settled,
    .idle = op_idle,
    .free = op_free, .set_poll = op_set_poll,
};

rd_source *redis_source_new(const rd_source_ctx *ctx)
{
    if (!ctx || !ctx->cfg || !ctx->cfg->store.url)   /* a bad URL is reported when started */
        return NULL;
    rs_src *s = xcalloc(1, sizeof *s);
    s->base.ops = &redis_ops;
    s->base.ctx = *ctx;
    s->base.impl = s;
    const char *prefix = ctx->cfg->alakai.prefix && *ctx->cfg->alakai.prefix ? ctx->cfg->alakai.prefix
                                                                : "alakai-executions";
    char *match = rs_key_pattern(prefix);
    rs_conn_cbs cc = { .ready = conn_ready, .failed = conn_failed, .lost = conn_lost,
                       .answered = conn_answered, .missed = conn_missed,
                       .notified = conn_notified, .ud = s };
    s->conn = rs_conn_new(ctx, match, &cc);
    free(match);
    rs_sweep_cbs sc = { .swept = sweep_swept, .changed = sweep_changed,
                        .chain_done = sweep_chain_done, .partial = sweep_partial,
                        .progress = sweep_progress, .ud = s };
    s->sweep = rs_sweep_new(ctx, s->conn, prefix, &sc);
    s->view = rs_view_new(ctx, rs_sweep_index(s->sweep));
    s->ev_tick = loop_every_new(ctx->base, on_tick, s);
    s->ev_kick = loop_timer_new(ctx->base, on_kick, s);
    return &s->base;
}
