#include "loop.h"

#include <event2/event.h>
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

int loop_run(struct event_base *base)
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
