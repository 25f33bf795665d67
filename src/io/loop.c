#include "loop.h"

#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../core/testhook.h"
#include "../core/xalloc.h"
#include "clock.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- the loop trace (REDRIVE_LOOP_TRACE) ------------------------------------------- */

enum { SLOW_MAX = 20000, SPAN_MAX = 64, SPAN_SHOWN = 12 };   /* a long, loaded run lists thousands */

typedef struct span_rec {
    const char *name, *file, *parent;   /* literals; parent: the callback a span ran in */
    double cpu, wall;                    /* ms */
} span_rec;

static struct {
    int on;                  /* -1 not read yet; 0/1: REDRIVE_LOOP_TRACE set */
    int depth;               /* callbacks running (a callback may run another's event) */
    const char *running;     /* the outermost callback's name (a span's parent) */
    span_rec spans[SPAN_MAX];
    size_t nspans, dropped;
    double cb_cpu, cb_wall;  /* ms: the top-level callbacks of the iteration */
    bool usage_taken;        /* u0: the thread's usage before its first callback */
    long u0[3];
} tr = {.on = -1};

static void thread_usage(long *nivcsw, long *nvcsw, long *minflt);

bool loop_tracing(void)
{
    if (tr.on < 0) {
        const char *p = testhook_env("REDRIVE_LOOP_TRACE");
        tr.on = p && *p;
    }
    return tr.on == 1;
}

static void span_add(const char *name, const char *file, const char *parent, double cpu_ms,
                     double wall_ms)
{
    if (tr.nspans < SPAN_MAX)
        tr.spans[tr.nspans++] = (span_rec){name, file, parent, cpu_ms, wall_ms};
    else
        tr.dropped++;
}

loop_span loop_span_begin(void)
{
    if (!loop_tracing())
        return (loop_span){0};
    return (loop_span){clock_cpu(), clock_mono(), true};
}

void loop_span_end(loop_span sp, const char *name)
{
    if (!sp.on)
        return;
    span_add(name, NULL, tr.depth > 0 ? tr.running : NULL, (clock_cpu() - sp.cpu) * 1e3,
             (clock_mono() - sp.wall) * 1e3);
}

/* A callback timed: top-level ones make up the iteration's attributed time. */
static void timed_call(void (*fn)(evutil_socket_t, short, void *), evutil_socket_t fd, short what,
                       void *arg, const char *name, const char *file)
{
    const char *outer = tr.running;
    if (tr.depth == 0)
        tr.running = name;
    if (!tr.usage_taken) {   /* after the wait for I/O: what follows is the callbacks' */
        thread_usage(&tr.u0[0], &tr.u0[1], &tr.u0[2]);
        tr.usage_taken = true;
    }
    tr.depth++;
    double c0 = clock_cpu(), w0 = clock_mono();
    fn(fd, what, arg);
    double cpu = (clock_cpu() - c0) * 1e3, wall = (clock_mono() - w0) * 1e3;
    tr.depth--;
    tr.running = outer;
    span_add(name, file, tr.depth > 0 ? tr.running : NULL, cpu, wall);
    if (tr.depth == 0) {
        tr.cb_cpu += cpu;
        tr.cb_wall += wall;
    }
}

typedef struct traced {
    loop_cb cb;
    void *ud;
    const char *name, *file;
} traced;

static void on_traced(evutil_socket_t fd, short what, void *arg)
{
    traced copy = *(traced *)arg;   /* the callback may free its event, and its wrapper */
    timed_call(copy.cb, fd, what, copy.ud, copy.name, copy.file);
}

void loop_call(loop_cb cb, int fd, short what, void *ud, const char *name)
{
    if (loop_tracing())
        timed_call(cb, fd, what, ud, name, NULL);
    else
        cb(fd, what, ud);
}

/* The callback and argument libevent is given for (cb, ud): itself, or the timed wrapper. */
static void wrap(loop_cb *cb, void **ud, const char *name, const char *file,
                 void (**fn)(evutil_socket_t, short, void *), void **arg)
{
    *fn = *cb;
    *arg = *ud;
    if (!loop_tracing())
        return;
    const char *arrow = strstr(name, "->");   /* cb->on_tick: on_tick */
    while (arrow) {
        name = arrow + 2;
        arrow = strstr(name, "->");
    }
    traced *t = xcalloc(1, sizeof *t);
    *t = (traced){*cb, *ud, name, file};
    *fn = on_traced;
    *arg = t;
}

typedef struct slow_it {
    double at, cpu, wall;    /* CLOCK_MONOTONIC at its end; CPU it took; callbacks' wall */
    long preempt, block, minflt;   /* involuntary / voluntary switches, minor faults */
    char *ran;               /* what ran, costliest first */
} slow_it;

static const char *base_name(const char *file)
{
    const char *sl = file ? strrchr(file, '/') : NULL;
    return sl ? sl + 1 : file;
}

static int span_cmp(const void *a, const void *b)
{
    const span_rec *x = a, *y = b;
    double kx = x->cpu > x->wall ? x->cpu : x->wall, ky = y->cpu > y->wall ? y->cpu : y->wall;
    return (kx < ky) - (kx > ky);
}

/* "name@file:cpu/wall,parent>name:cpu/wall,... other:cpu" of the iteration's spans. */
static char *spans_text(double cpu_ms)
{
    qsort(tr.spans, tr.nspans, sizeof tr.spans[0], span_cmp);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return xstrdup("?");
    for (size_t i = 0; i < tr.nspans && i < SPAN_SHOWN; i++) {
        const span_rec *r = &tr.spans[i];
        fprintf(f, "%s%s%s%s%s%s:%.3f/%.3f", i ? "," : "", r->parent ? r->parent : "",
                r->parent ? ">" : "", r->name, r->file ? "@" : "", r->file ? base_name(r->file) : "",
                r->cpu, r->wall);
    }
    if (tr.nspans > SPAN_SHOWN || tr.dropped)
        fprintf(f, "%s+%zu", tr.nspans ? "," : "", tr.nspans - (tr.nspans > SPAN_SHOWN ? SPAN_SHOWN : tr.nspans) + tr.dropped);
    double other = cpu_ms - tr.cb_cpu;
    fprintf(f, "%sother:%.3f", tr.nspans ? "," : "", other > 0 ? other : 0.0);
    fclose(f);
    return buf;
}

static void trace_write(const char *path, double *ms, size_t n, const slow_it *slow, size_t ns,
                        size_t wall_over, double wall_max)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return;
    for (size_t i = 0; i < ns; i++)
        fprintf(m, "slow at %.6f cpu_ms %.3f wall_ms %.3f preempt %ld block %ld minflt %ld ran %s\n",
                slow[i].at, slow[i].cpu, slow[i].wall, slow[i].preempt, slow[i].block, slow[i].minflt,
                slow[i].ran);
    qsort(ms, n, sizeof *ms, cmp_double);
    size_t over = 0;
    for (size_t i = 0; i < n; i++)
        over += ms[i] > 1.0;
    size_t p99 = n ? (size_t)((double)(n - 1) * 0.99) : 0;
    fprintf(m, "iterations %zu cpu_max_ms %.3f cpu_p99_ms %.3f over_1ms %zu wall_over_1ms %zu wall_max_ms %.3f"
            " listed %zu\n", n, n ? ms[n - 1] : 0.0, n ? ms[p99] : 0.0, over, wall_over, wall_max, ns);
    fclose(m);
    FILE *f = testhook_trace_open(path, false);   /* appended: one summary per loop run */
    if (f) {
        fwrite(buf, 1, len, f);
        fclose(f);
    }
    free(buf);
}

static void thread_usage(long *nivcsw, long *nvcsw, long *minflt)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0) {
        *nivcsw = *nvcsw = *minflt = 0;
        return;
    }
    *nivcsw = ru.ru_nivcsw;
    *nvcsw = ru.ru_nvcsw;
    *minflt = ru.ru_minflt;
}

int loop_run(rd_loop *base)
{
    const char *path = testhook_env("REDRIVE_LOOP_TRACE");
    if (!path || !*path)
        return event_base_dispatch(base);
    const char *lim = testhook_env("REDRIVE_LOOP_TRACE_MS");   /* the bar; default 1 ms */
    double bar = lim && *lim ? atof(lim) : 1.0;
    double *ms = NULL, wall_max = 0;
    size_t n = 0, cap = 0, ns = 0, wall_over = 0;
    slow_it *slow = NULL;
    size_t slow_cap = 0;
    int rc;
    for (;;) {
        long iv1, v1, pf1;
        tr.nspans = tr.dropped = 0;
        tr.cb_cpu = tr.cb_wall = 0;
        tr.usage_taken = false;
        double t0 = clock_cpu();
        rc = event_base_loop(base, EVLOOP_ONCE);
        double t1 = clock_cpu();
        thread_usage(&iv1, &v1, &pf1);
        xgrow(&ms, &cap, n + 1, sizeof *ms);
        ms[n] = (t1 - t0) * 1e3;
        wall_over += tr.cb_wall > 1.0;
        if (tr.cb_wall > wall_max)
            wall_max = tr.cb_wall;
        if ((ms[n] > bar || tr.cb_wall > bar || bar <= 0) && ns < SLOW_MAX) {
            xgrow(&slow, &slow_cap, ns + 1, sizeof *slow);
            slow[ns++] = (slow_it){clock_mono(), ms[n], tr.cb_wall,
                                   tr.usage_taken ? iv1 - tr.u0[0] : 0,
                                   tr.usage_taken ? v1 - tr.u0[1] : 0,
                                   tr.usage_taken ? pf1 - tr.u0[2] : 0, spans_text(ms[n])};
        }
        n++;
        if (rc != 0 || event_base_got_break(base) || event_base_got_exit(base))
            break;
    }
    trace_write(path, ms, n, slow, ns, wall_over, wall_max);
    for (size_t i = 0; i < ns; i++)
        free(slow[i].ran);
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

rd_event *loop_timer_named(rd_loop *l, loop_cb cb, void *ud, const char *name, const char *file)
{
    void (*fn)(evutil_socket_t, short, void *);
    void *arg;
    wrap(&cb, &ud, name, file, &fn, &arg);
    return event_new(l, -1, 0, fn, arg);
}

rd_event *loop_every_named(rd_loop *l, loop_cb cb, void *ud, const char *name, const char *file)
{
    void (*fn)(evutil_socket_t, short, void *);
    void *arg;
    wrap(&cb, &ud, name, file, &fn, &arg);
    return event_new(l, -1, EV_PERSIST, fn, arg);
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

rd_event *loop_fd_named(rd_loop *l, int fd, short what, loop_cb cb, void *ud, const char *name,
                        const char *file)
{
    void (*fn)(evutil_socket_t, short, void *);
    void *arg;
    wrap(&cb, &ud, name, file, &fn, &arg);
    rd_event *ev = event_new(l, fd, what, fn, arg);
    if (ev && event_add(ev, NULL) != 0) {
        loop_event_free(ev);
        ev = NULL;
    }
    return ev;
}

rd_event *loop_signal_named(rd_loop *l, int signo, loop_cb cb, void *ud, const char *name,
                            const char *file)
{
    void (*fn)(evutil_socket_t, short, void *);
    void *arg;
    wrap(&cb, &ud, name, file, &fn, &arg);
    rd_event *ev = evsignal_new(l, signo, fn, arg);
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
    if (!ev)
        return;
    void *arg = event_get_callback(ev) == on_traced ? event_get_callback_arg(ev) : NULL;
    event_free(ev);
    free(arg);
}

static void on_redis_read_timed(evutil_socket_t fd, short what, void *arg)
{
    timed_call(redisLibeventReadEvent, fd, what, arg, "redis_read", NULL);
}

static void on_redis_write_timed(evutil_socket_t fd, short what, void *arg)
{
    timed_call(redisLibeventWriteEvent, fd, what, arg, "redis_write", NULL);
}

int loop_redis_attach(struct redisAsyncContext *ac, rd_loop *l)
{
    if (redisLibeventAttach(ac, l) != REDIS_OK)
        return -1;
    if (loop_tracing()) {   /* the adapter's own events, timed under the trace */
        redisLibeventEvents *e = ac->ev.data;
        event_del(e->rev);
        event_del(e->wev);
        event_assign(e->rev, l, ac->c.fd, EV_READ, on_redis_read_timed, e);
        event_assign(e->wev, l, ac->c.fd, EV_WRITE, on_redis_write_timed, e);
        event_add(e->rev, NULL);
        event_add(e->wev, NULL);
    }
    return 0;
}

typedef void (*redis_read_fn)(struct redisAsyncContext *ac);
static redis_read_fn redis_on_read;

static void redis_read_hooked(evutil_socket_t fd, short what, void *arg)
{
    redisLibeventEvents *e = arg;
    (void)fd, (void)what;
    redis_on_read(e->context);
}

static void on_redis_read(evutil_socket_t fd, short what, void *arg)
{
    if (loop_tracing())
        timed_call(redis_read_hooked, fd, what, arg, "redis_read", NULL);
    else
        redis_read_hooked(fd, what, arg);
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
