/* The HTTP sources' shared poller (src/sources/http_poller.c): the ops it gives a source,
 * settled and idle, the DLQ peek's pages and waits, and the poll interval's floor.
 * A small test kind stands in for RabbitMQ / SQS / the /health probes (the real ones are
 * covered against the stack by tests/integration). */
#include "../../src/sources/http_poller.h"

#include <event2/event.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/time.h>

#include "../../src/core/xalloc.h"
#include "../../src/io/http.h"
#include "check.h"

typedef struct t_src {
    int polls, starts, peeks;
    http_poller hp;                  /* not the first member: the kind's offset is used */
    bool hopeless;
} t_src;

static int cleared, changes;

static t_src *of(http_poller *p) { return p->base.impl; }
static void t_poll(http_poller *p) { of(p)->polls++; }
static void t_start(http_poller *p) { of(p)->starts++; }
static void t_peek(http_poller *p) { of(p)->peeks++; }
static void t_clear(http_poller *p) { (void)p; cleared++; }
static void on_change(void *ud) { (void)ud; changes++; }

static bool t_hopeless(const http_poller *p)
{
    const t_src *s = p->base.impl;
    return s->hopeless;
}

static const http_poller_kind peeker = {
    .name = "tq", .size = sizeof(t_src), .at = offsetof(t_src, hp), .min_poll_s = 5,
    .peek_max_pages = 3, .poll = t_poll, .start = t_start, .peek_next = t_peek,
    .peek_hopeless = t_hopeless, .clear = t_clear,
};
static const http_poller_kind plain = {
    .name = "tp", .size = sizeof(t_src), .at = offsetof(t_src, hp), .min_poll_s = 1,
    .poll = t_poll, .clear = t_clear,
};

static rd_source_ctx ctx;

static t_src *make(const http_poller_kind *k)
{
    t_src *s = http_poller_new(&ctx, "on", k);
    CHECK(s != NULL);
    CHECK(s->hp.base.impl == s);
    return s;
}

/* Does the poll timer fire in `want` seconds? libevent maps its monotonic deadline to
 * the wall clock with an offset it refreshes only now and then: allow 50 ms. */
static bool timer_in(const http_poller *p, double want)
{
    struct timeval tv, now;
    if (!evtimer_pending(p->tick, &tv))
        return want < 0;
    gettimeofday(&now, NULL);
    double in = (double)(tv.tv_sec - now.tv_sec) + (tv.tv_usec - now.tv_usec) / 1e6;
    return fabs(in - want) < 0.05;
}

static void test_new(void)
{
    CHECK(http_poller_new(&ctx, NULL, &plain) == NULL);
    CHECK(http_poller_new(&ctx, "", &plain) == NULL);
    CHECK(http_poller_new(NULL, "on", &plain) == NULL);
    rd_source_ctx no_http = ctx;
    no_http.http = NULL;
    CHECK(http_poller_new(&no_http, "on", &plain) == NULL);
}

/* A kind that cannot peek has no peek ops (the source set skips it); the start op arms
 * the timer at max(poll, floor) and polls once; set_poll keeps the floor. */
static void test_plain(void)
{
    t_src *s = make(&plain);
    const rd_source_ops *ops = s->hp.base.ops;
    CHECK_STR(ops->kind, "tp");
    CHECK(ops->peek_dlq == NULL);
    CHECK(ops->idle == NULL);
    CHECK(!ops->settled(&s->hp.base));
    CHECK(timer_in(&s->hp, -1));
    ops->start(&s->hp.base);
    CHECK(s->polls == 1 && s->starts == 0);
    CHECK_MSG(timer_in(&s->hp, 1), "poll 0.5 s, floor 1 s");
    ops->set_poll(&s->hp.base, 30);
    CHECK_MSG(timer_in(&s->hp, 30), "set_poll 30");
    ops->set_poll(&s->hp.base, 0.1);
    CHECK_MSG(timer_in(&s->hp, 1), "set_poll under the floor");
    ops->refresh(&s->hp.base);
    CHECK(s->polls == 2);
    int before = changes;
    http_poller_fail(&s->hp, "broker unreachable");
    CHECK(ops->settled(&s->hp.base));
    CHECK(changes == before + 1);
    CHECK_STR(model_source(ctx.model, "tp")->error, "broker unreachable");
    int n = cleared;
    ops->free(&s->hp.base);
    CHECK(cleared == n + 1);
}

/* A peek asked for before the first whole poll waits for it, then goes on. */
static void test_peek_waits(void)
{
    t_src *s = make(&peeker);
    rd_source *src = &s->hp.base;
    CHECK_STR(src->ops->kind, "tq");
    src->ops->start(src);
    CHECK(s->starts == 1 && s->polls == 1);
    CHECK_MSG(timer_in(&s->hp, 5), "floor 5 s");
    CHECK(src->ops->idle(src));
    src->ops->peek_dlq(src, false);
    CHECK(s->peeks == 0);
    CHECK(!src->ops->idle(src));
    CHECK(!src->ops->settled(src));
    int before = changes;
    http_poller_round_done(&s->hp);
    CHECK(src->ops->settled(src));
    CHECK(changes == before + 1);
    CHECK(s->peeks == 1);
    http_poller_peek_drop(&s->hp);   /* polled: a running peek is not dropped */
    CHECK(!src->ops->idle(src));
    rd_dlq_entry *e = xcalloc(1, sizeof *e);
    e->id = xstrdup("m-1");
    e->queue = xstrdup("jobs.dlq");
    s->hp.peek.got = e;
    s->hp.peek.n_got = 1;
    http_poller_peek_end(&s->hp);
    CHECK(src->ops->idle(src));
    CHECK(s->hp.peek.got == NULL && s->hp.peek.n_got == 0);
    CHECK(ctx.model->dlq.n == 1);
    CHECK_STR(ctx.model->dlq.n ? ctx.model->dlq.items[0].id : NULL, "m-1");
    CHECK_STR(model_source(ctx.model, "tq")->error, "");
    src->ops->peek_dlq(src, false);  /* polled: peeks at once */
    CHECK(s->peeks == 2);
    snprintf(s->hp.peek.err, sizeof s->hp.peek.err, "peek jobs.dlq: 403");
    http_poller_peek_end(&s->hp);
    CHECK_STR(model_source(ctx.model, "tq")->error, "peek jobs.dlq: 403");
    CHECK(ctx.model->dlq.n == 0);    /* this source's share replaced */
    src->ops->free(src);
}

/* "more" adds a page up to the kind's limit; a plain peek starts again at one page. */
static void test_peek_pages(void)
{
    static const struct { bool more; int pages; } steps[] = {
        { true, 1 }, { true, 2 }, { true, 3 }, { true, 3 }, { false, 1 }, { true, 2 },
    };
    t_src *s = make(&peeker);
    rd_source *src = &s->hp.base;
    http_poller_round_done(&s->hp);
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        s->hp.peek.at = 7;
        src->ops->peek_dlq(src, steps[i].more);
        char what[32];
        snprintf(what, sizeof what, "step %zu", i);
        CHECK_MSG(s->hp.peek.pages == steps[i].pages, what);
        CHECK_MSG(s->hp.peek.at == 0, what);
    }
    src->ops->free(src);
}

/* Before any whole poll: a hopeless source ends the peek at once; a failed first poll
 * drops a waiting peek. */
static void test_peek_ends_empty(void)
{
    t_src *s = make(&peeker);
    rd_source *src = &s->hp.base;
    s->hopeless = true;
    src->ops->peek_dlq(src, false);
    CHECK(src->ops->idle(src));
    CHECK(s->peeks == 0);
    s->hopeless = false;
    src->ops->peek_dlq(src, false);
    CHECK(!src->ops->idle(src));
    http_poller_peek_drop(&s->hp);
    CHECK(src->ops->idle(src));
    CHECK(s->peeks == 0);
    src->ops->free(src);
}

int main(void)
{
    struct event_base *base = event_base_new();
    rd_system_cfg cfg = { .poll_s = 0.5 };
    ctx = (rd_source_ctx){ .base = base, .http = http_new(base), .cfg = &cfg,
                           .model = model_new(), .on_change = on_change };
    test_new();
    test_plain();
    test_peek_waits();
    test_peek_pages();
    test_peek_ends_empty();
    model_free(ctx.model);
    http_free(ctx.http);
    event_base_free(base);
    return check_done("http_poller");
}
