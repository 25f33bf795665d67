#include "loop.h"

#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/testhook.h"
#include "../core/xalloc.h"
#include "clock.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct slow_it {
    double at, ms;           /* CLOCK_MONOTONIC at its end; CPU it took */
} slow_it;

enum { SLOW_MAX = 1000 };

static void trace_write(const char *path, double *ms, size_t n, const slow_it *slow, size_t ns)
{
    FILE *f = testhook_trace_open(path, false);   /* appended: one summary per loop run */
    if (!f)
        return;
    for (size_t i = 0; i < ns; i++)
        fprintf(f, "slow at %.6f cpu_ms %.3f\n", slow[i].at, slow[i].ms);
    qsort(ms, n, sizeof *ms, cmp_double);
    size_t over = 0;
    for (size_t i = 0; i < n; i++)
        over += ms[i] > 1.0;
    size_t p99 = n ? (size_t)((double)(n - 1) * 0.99) : 0;
    fprintf(f, "iterations %zu cpu_max_ms %.3f cpu_p99_ms %.3f over_1ms %zu\n", n,
            n ? ms[n - 1] : 0.0, n ? ms[p99] : 0.0, over);
    fclose(f);
}

int loop_run(rd_loop *base)
{
    const char *path = testhook_env("REDRIVE_LOOP_TRACE");
    if (!path || !*path)
        return event_base_dispatch(base);
    double *ms = NULL;
    size_t n = 0, cap = 0, ns = 0;
    slow_it *slow = xcalloc(SLOW_MAX, sizeof *slow);
    int rc;
    for (;;) {
        double t0 = clock_cpu();
        rc = event_base_loop(base, EVLOOP_ONCE);
        double t1 = clock_cpu();
        xgrow(&ms, &cap, n + 1, sizeof *ms);
        ms[n] = (t1 - t0) * 1e3;
        if (ms[n] > 1.0 && ns < SLOW_MAX)
            slow[ns++] = (slow_it){ clock_mono(), ms[n] };
        n++;
        if (rc != 0 || event_base_got_break(base) || event_base_got_exit(base))
            break;
    }
    trace_write(path, ms, n, slow, ns);
    free(slow);
    free(ms);
    return rc;
}

_Static_assert(LOOP_TIMEOUT == EV_TIMEOUT && LOOP_READ == EV_READ && LOOP_WRITE == EV_WRITE &&
               LOOP_SIGNAL == EV_SIGNAL && LOOP_PERSIST == EV_PERSIST, "loop flags are libevent's");

rd_loop *loop_new(void)
{
    struct event_config *cfg = event_config_new();
    if (!cfg)
        return NULL;
    struct timeval slice = {0, LOOP_SLICE_MS * 1000};
    event_config_set_max_dispatch_interval(cfg, &slice, LOOP_SLICE_CBS, LOOP_PRIO_WORK);
    struct event_base *base = event_base_new_with_config(cfg);
    event_config_free(cfg);
    /* before any event exists: new events get the middle priority, LOOP_PRIO_WORK */
    if (base && event_base_priority_init(base, LOOP_PRIO__COUNT) != 0) {
        event_base_free(base);
        base = NULL;
    }
    return base;
}

void loop_free(rd_loop *l)
{
    if (l)
        event_base_free(l);
}

void loop_break(rd_loop *l)
{
    event_base_loopbreak(l);
}

void loop_exit(rd_loop *l)
{
    event_base_loopexit(l, NULL);
}

rd_event *loop_timer_new(rd_loop *l, loop_cb cb, void *ud)
{
    return evtimer_new(l, cb, ud);
}

rd_event *loop_every_new(rd_loop *l, loop_cb cb, void *ud)
{
    return event_new(l, -1, EV_PERSIST, cb, ud);
}

void loop_timer_in(rd_event *t, double s)
{
    struct timeval tv = clock_tv(s);
    event_add(t, &tv);
}

void loop_timer_stop(rd_event *t)
{
    event_del(t);
}

bool loop_timer_pending(const rd_event *t)
{
    return event_pending(t, EV_TIMEOUT, NULL) != 0;
}

void loop_soon(rd_event *ev)
{
    event_active(ev, EV_TIMEOUT, 0);
}

rd_event *loop_fd_new(rd_loop *l, int fd, short what, loop_cb cb, void *ud)
{
    rd_event *ev = event_new(l, fd, what, cb, ud);
    if (ev && event_add(ev, NULL) != 0) {
        event_free(ev);
        ev = NULL;
    }
    return ev;
}

rd_event *loop_signal_new(rd_loop *l, int signo, loop_cb cb, void *ud)
{
    rd_event *ev = evsignal_new(l, signo, cb, ud);
    if (ev)
        event_add(ev, NULL);
    return ev;
}

void loop_event_keys(rd_event *ev)
{
    event_priority_set(ev, LOOP_PRIO_KEYS);
}

void loop_event_free(rd_event *ev)
{
    if (ev)
        event_free(ev);
}

int loop_redis_attach(struct redisAsyncContext *ac, rd_loop *l)
{
    return redisLibeventAttach(ac, l) == REDIS_OK ? 0 : -1;
}

typedef void (*redis_read_fn)(struct redisAsyncContext *ac);
static redis_read_fn redis_on_read;

static void on_redis_read(evutil_socket_t fd, short what, void *arg)
{
    redisLibeventEvents *e = arg;
    (void)fd, (void)what;
    redis_on_read(e->context);
}

void loop_redis_read_hook(struct redisAsyncContext *ac, rd_loop *l,
                          void (*on_read)(struct redisAsyncContext *ac))
{
    redisLibeventEvents *e = ac->ev.data;
    redis_on_read = on_read;
    event_del(e->rev);
    event_assign(e->rev, l, ac->c.fd, EV_READ, on_redis_read, e);
    event_add(e->rev, NULL);
}
