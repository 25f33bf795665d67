/* The op boilerplate of the HTTP sources (see http_poller.h). */
#include "http_poller.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/http.h"
#include "../io/loop.h"

/* base is the first member: an rd_source of ours is its http_poller */
_Static_assert(offsetof(http_poller, base) == 0, "http_poller.base must come first");
static http_poller *of(rd_source *src) { return (http_poller *)(void *)src; }
static const http_poller *of_c(const rd_source *src)
{
    return (const http_poller *)(const void *)src;
}

static double every(const http_poller *p, double want)
{
    return fmax(want, p->kind->min_poll_s);
}

static void on_tick(int fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    http_poller *p = arg;
    p->kind->poll(p);
}

void http_poller_changed(http_poller *p)
{
    if (p->base.ctx.on_change)
        p->base.ctx.on_change(p->base.ctx.ud);
}

void http_poller_fail(http_poller *p, const char *msg)
{
    model_source_fail(p->base.ctx.model, p->kind->name, msg, clock_wall());
    p->settled = true;
    http_poller_changed(p);
}

void http_poller_ok(http_poller *p, double now)
{
    model_source_ok(p->base.ctx.model, p->kind->name, now);
    p->settled = true;
}

static bool peek_waits(const http_poller *p)
{
    return p->peek.wanted && !p->peek.done;
}

void http_poller_round_done(http_poller *p)
{
    p->polled = p->settled = true;
    http_poller_changed(p);
    if (peek_waits(p) && !p->peek.req)
        p->kind->peek_next(p);       /* asked before the DLQs were known */
}

void http_poller_peek_drop(http_poller *p)
{
    if (peek_waits(p) && !p->polled)
        p->peek.done = true;
}

static void peek_clear(http_peek *k)
{
    for (size_t i = 0; i < k->n_got; i++)
        dlq_entry_clear(&k->got[i]);
    free(k->got);
    k->got = NULL;
    k->n_got = 0;
}

/* Our entries replace our own share; other sources' entries are kept by the model. */
void http_poller_peek_end(http_poller *p)
{
    http_peek *k = &p->peek;
    rd_model *m = p->base.ctx.model;
    model_dlq_set(m, p->kind->name, k->got, k->n_got);
    k->got = NULL;
    k->n_got = 0;
    if (k->err[0])
        model_source_fail(m, p->kind->name, k->err, clock_wall());
    k->done = true;
    http_poller_changed(p);
}

/* ---- ops --------------------------------------------------------------------------------- */

static void op_start(rd_source *src)
{
    http_poller *p = of(src);
    model_source(p->base.ctx.model, p->kind->name);
    loop_timer_in(p->tick, every(p, p->base.ctx.cfg->poll_s));
    if (p->kind->start)
        p->kind->start(p);
    p->kind->poll(p);
}

static void op_refresh(rd_source *src)
{
    http_poller *p = of(src);
    p->kind->poll(p);
}

static void op_peek_dlq(rd_source *src, bool more)
{
    http_poller *p = of(src);
    http_peek *k = &p->peek;
    k->pages = more && k->wanted ? k->pages + 1 : 1;
    if (k->pages > p->kind->peek_max_pages)
        k->pages = p->kind->peek_max_pages;
    k->wanted = true;
    k->done = false;
    if (k->req)
        http_cancel(p->base.ctx.http, k->req);
    k->req = 0;
    k->at = 0;
    peek_clear(k);
    k->err[0] = '\0';
    if (p->polled)
        p->kind->peek_next(p);
    else if (p->kind->peek_hopeless && p->kind->peek_hopeless(p))
        k->done = true;
    /* else: the first whole poll finds the DLQs, then peeks (http_poller_round_done) */
}

static bool op_settled(const rd_source *src)
{
    return of_c(src)->settled;
}

static bool op_idle(const rd_source *src)
{
    return !peek_waits(of_c(src));
}

static void op_free(rd_source *src)
{
    http_poller *p = of(src);
    if (p->peek.req)
        http_cancel(p->base.ctx.http, p->peek.req);
    peek_clear(&p->peek);
    loop_event_free(p->tick);
    if (p->kind->clear)
        p->kind->clear(p);
    free(p->base.impl);
}

/* A new poll interval (the fleet slows systems not on screen): re-arms the running tick. */
static void op_set_poll(rd_source *src, double want)
{
    http_poller *p = of(src);
    source_rearm(p->tick, every(p, want));
}

void *http_poller_new(const rd_source_ctx *ctx, const char *setting,
                      const http_poller_kind *kind)
{
    if (!ctx || !ctx->http || !setting || !*setting)
        return NULL;
    char *impl = xcalloc(1, kind->size);
    http_poller *p = (http_poller *)(void *)(impl + kind->at);
    p->kind = kind;
    p->ops = (rd_source_ops){
        .kind = kind->name, .start = op_start, .refresh = op_refresh,
        .settled = op_settled, .free = op_free, .set_poll = op_set_poll,
    };
    if (kind->peek_max_pages > 0) {
        p->ops.peek_dlq = op_peek_dlq;
        p->ops.idle = op_idle;
    }
    p->base.ops = &p->ops;
    p->base.ctx = *ctx;
    p->base.impl = impl;
    p->tick = loop_every_new(ctx->base, on_tick, p);
    return impl;
}

void http_poller_cancel_each(http_poller *p, const void *items, size_t n, size_t size,
                             size_t req_at)
{
    const unsigned char *at = items;
    for (size_t i = 0; i < n; i++) {
        uint64_t id;
        memcpy(&id, at + i * size + req_at, sizeof id);
        http_cancel(p->base.ctx.http, id);
    }
}
