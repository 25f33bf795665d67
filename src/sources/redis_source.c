/*
 * The Redis store source (Alakai): one hash per task at {prefix}:{taskId}, one JSON
 * record per attempt field. hiredis 0.14 async on the libevent loop. This file holds the
 * source's ops and its periodic work; the connections (lookup, TLS, connect, AUTH,
 * deadlines, backoff, the notification subscription) are in redis_conn.c.
 *
 * Freshness: a full SCAN sweep on connect; keyspace notifications (when the server has
 * K plus hash events enabled) refetch changed keys; a full resync anyway, every
 * max(30 s, 300 × last sweep time) (a safety net: notifications are fire-and-forget; a
 * dropped subscription or reconnect resyncs at once). Without notifications the sweep
 * repeats every max(poll, 10 × last sweep time), so sweeping stays below ~10 % duty.
 */
#include "redis_priv.h"

#include <event2/event.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fingerprint.h"
#include "../core/retry.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/resolve.h"
#include "../io/secret.h"

enum { RS_RESYNC_S = 30 };
static const char SRC_NAME[] = "redis";

/* The redis_* files' wall clock (model timestamps, ages). */
double rs_now(void)
{
    return clock_wall();
}

/* ---- timers ---------------------------------------------------------------------------- */

static void on_ping(redisAsyncContext *ac, void *reply, void *priv)
{
    rs_src *s = priv;
    rs_reply_begin(s);
    if (reply && ((const redisReply *)reply)->type != REDIS_REPLY_ERROR && s->swept_once)
        model_source_ok(s->base.ctx.model, SRC_NAME, rs_now());
    rs_reply_end(s);
}

static bool resync_due(const rs_src *s, double now)
{
    if (!s->swept_once || s->resync_wanted)
        return true;
    /* with notifications the resync is a safety net: keep it under ~0.3 % duty */
    double every = s->notify_on && s->sub_state == RC_READY
        ? fmax(RS_RESYNC_S, 300 * s->sweep_secs)
        : fmax(s->base.ctx.cfg->poll_s, 10 * s->sweep_secs);
    return now - s->sweep_last >= every;
}

/* Periodic and deferred work: what is due now, bounded. */
static void step(rs_src *s, bool poll)
{
    rs_drop_deferred(s);
    if (!rs_ready(s))
        return;
    if (!s->sweeping && resync_due(s, rs_now()))
        rs_sweep_start(s);
    else if (!s->sweeping)
        rs_dirty_flush(s);
    if (poll && s->pending == 0 && !rs_replica_poll(s)) {
        const char *ping[1] = { "PING" };
        rs_command(s, on_ping, s, 1, ping, NULL);
    }
    if (s->notify_on && !s->sub && !evtimer_pending(s->ev_sub_retry, NULL))
        rs_sub_start(s);
    rs_publish(s, false);
}

static void on_kick(evutil_socket_t fd, short what, void *arg)
{
    step(arg, false);
}

static void on_sweep_done(evutil_socket_t fd, short what, void *arg)
{
    rs_sweep_finish(arg);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    step(arg, true);
}

/* ---- ops ---------------------------------------------------------------------------------- */

static rs_src *impl(const rd_source *src) { return src->impl; }

static void op_start(rd_source *src)
{
    rs_src *s = impl(src);
    model_source(s->base.ctx.model, SRC_NAME);
    struct timeval tv = clock_tv(s->base.ctx.cfg->poll_s > 0.2 ? s->base.ctx.cfg->poll_s : 2);
    evtimer_add(s->ev_tick, &tv);
    event_active(s->ev_retry, EV_TIMEOUT, 0);   /* from the loop: even an immediate
                                                   failure reaches a waiting caller */
}

static void op_refresh(rd_source *src)
{
    rs_src *s = impl(src);
    if (s->state == RC_NONE && !s->ac) {
        evtimer_del(s->ev_retry);    /* the operator asked: try now */
        s->backoff = 1;
        s->setup_error = false;
        rs_conn_start(s);
        return;
    }
    if (!s->notify_on || s->sub_state != RC_READY)
        s->resync_wanted = true;
    step(s, false);
}

static void filter_copy(rd_exec_filter *dst, const rd_exec_filter *f)
{
    free(dst->status);
    free(dst->text);
    free(dst->fingerprint);
    dst->status = f ? xstrdup(f->status) : NULL;
    dst->text = f ? xstrdup(f->text) : NULL;
    dst->fingerprint = f ? xstrdup(f->fingerprint) : NULL;
}

static void op_set_filter(rd_source *src, const rd_exec_filter *f)
{
    rs_src *s = impl(src);
    filter_copy(&s->filter, f);
    s->filter_fp = rix_hash_fp(s->filter.fingerprint);
    s->page_from.set = false;
    s->view_dirty = true;
    rs_publish(s, true);
}

static void op_page(rd_source *src, int dir)
{
    rs_src *s = impl(src);
    const rd_model *m = s->base.ctx.model;
    const rix_task *t;
    if (dir == 0 || m->execs.n == 0) {
        s->page_from.set = false;
    } else if (dir > 0) {
        const rd_execution *last = &m->execs.items[m->execs.n - 1];
        if (!m->execs_more || !(t = rix_get(s->ix, last->id, strlen(last->id))))
            return;
        rix_cursor_of(s->ix, t, false, &s->page_from);
    } else {
        const rd_execution *first = &m->execs.items[0];
        if (!(t = rix_get(s->ix, first->id, strlen(first->id))))
            return;
        rix_cursor c;
        rix_cursor_of(s->ix, t, false, &c);
        size_t n = m->execs.n;
        uint32_t *idx = xmalloc((n ? n : 1) * sizeof *idx);
        rs_publish_prev(s, &c, n, idx);
        free(idx);
    }
    s->view_dirty = true;
    rs_publish(s, true);
}

static void op_jump(rd_source *src, const char *id)
{
    rs_src *s = impl(src);
    const rix_task *t = id ? rix_get(s->ix, id, strlen(id)) : NULL;
    if (t)
        rix_cursor_of(s->ix, t, true, &s->page_from);
    s->view_dirty = true;
    rs_publish(s, true);
}

static void op_chain(rd_source *src, const char *id)
{
    rs_src *s = impl(src);
    if (!id || !*id)
        return;
    free(s->chain_id);
    s->chain_id = xstrdup(id);
    s->chain_wanted = true;
    if (s->state == RC_READY)
        rs_chain_fetch(s);
    else if (s->settled && s->state == RC_NONE)
        rs_answer_pending(s, "redis: not connected");
}

static void op_peek_dlq(rd_source *src, bool more)
{
    rs_src *s = impl(src);
    s->dlq_pages = more && s->dlq_wanted ? s->dlq_pages + 1 : 1;
    s->dlq_wanted = true;
    s->dlq_sent = false;
    if (s->swept_once)
        rs_publish(s, true);
    else if (s->settled && s->state == RC_NONE)
        rs_answer_pending(s, "redis: not connected");
}

static bool op_settled(const rd_source *src)
{
    return impl(src)->settled;
}

static bool op_idle(const rd_source *src)
{
    const rs_src *s = impl(src);
    return !s->chain_wanted && !s->chain_busy && !(s->dlq_wanted && !s->dlq_sent);
}

static void op_free(rd_source *src)
{
    rs_src *s = impl(src);
    s->freeing = true;
    resolve_cancel(s->dns_req);
    s->dns_req = NULL;
    if (s->ac) {
        redisAsyncContext *ac = s->ac;
        s->ac = NULL;
        redisAsyncFree(ac);
    }
    if (s->sub) {
        redisAsyncContext *sub = s->sub;
        s->sub = NULL;
        redisAsyncFree(sub);
    }
    rs_secure_free(s);               /* the bridge after the contexts */
    resolve_free(s->dns);
    event_free(s->ev_tick);
    event_free(s->ev_watch);
    event_free(s->ev_retry);
    event_free(s->ev_sub_retry);
    event_free(s->ev_kick);
    event_free(s->ev_sweep_done);
    rix_free(s->ix);
    rs_dirty_free(&s->dirty);
    filter_copy(&s->filter, NULL);
    free(s->chain_id);
    free(s->prefix);
    free(s->match);
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
    .peek_dlq = op_peek_dlq,
    .settled = op_settled,
    .idle = op_idle,
    .free = op_free, .set_poll = op_set_poll,
};

/* Glob-escape the prefix for SCAN MATCH / PSUBSCRIBE. */
static char *glob_escape(const char *s)
{
    char *out = xmalloc(strlen(s) * 2 + 1), *o = out;
    for (; *s; s++) {
        if (strchr("*?[]\\", *s))
            *o++ = '\\';
        *o++ = *s;
    }
    *o = '\0';
    return out;
}

rd_source *redis_source_new(const rd_source_ctx *ctx)
{
    if (!ctx || !ctx->cfg || !ctx->cfg->store.url)   /* a bad URL is reported when started */
        return NULL;
    rs_src *s = xcalloc(1, sizeof *s);
    s->base.ops = &redis_ops;
    s->base.ctx = *ctx;
    s->base.impl = s;
    s->evb = ctx->base;
    s->backoff = s->sub_backoff = 1;
    s->debug = getenv("RD_REDIS_DEBUG") != NULL;
    s->prefix = xstrdup(ctx->cfg->alakai.prefix && *ctx->cfg->alakai.prefix ? ctx->cfg->alakai.prefix
                                                               : "alakai-executions");
    char *esc = glob_escape(s->prefix);
    s->match = xasprintf("%s:*", esc);
    free(esc);
    char err[256] = "";
    bool ok = true;
    s->store_is_ref = secret_is_ref(ctx->cfg->store.url);   /* resolved when starting */
    if (!s->store_is_ref)
        s->url_ready = ok = rs_urls_set(s, ctx->cfg->store.url, false, err, sizeof err);
    s->ix = rix_new(RS_MAX_TASKS);
    s->ev_tick = event_new(s->evb, -1, EV_PERSIST, on_tick, s);
    rs_conn_events(s);
    s->ev_kick = evtimer_new(s->evb, on_kick, s);
    s->ev_sweep_done = evtimer_new(s->evb, on_sweep_done, s);
    if (!ok) {                       /* reported at start; never connects */
        s->unusable = true;
        snprintf(s->unusable_why, sizeof s->unusable_why, "%s", err);
    }
    return &s->base;
}
