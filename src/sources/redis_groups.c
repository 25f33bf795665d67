#include "redis_groups.h"

#include <stdlib.h>
#include <string.h>

#include "../core/groups.h"
#include "../core/xalloc.h"

typedef struct rs_fail {
    double at;             /* when it failed */
    uint32_t i;            /* the task's index */
    uint32_t detail;       /* the tally's key: the interned error (code, name), status and
                            * attempt, copied from the task (qsort has no context) */
    uint16_t attempt;
    uint8_t status;
} rs_fail;

static double failed_at(const rix_task *t)
{
    return t->resolved_s > 0 ? (double)t->resolved_s : t->dispatched_at;
}

static int newest_first(const void *pa, const void *pb)
{
    const rs_fail *a = pa, *b = pb;
    return a->at != b->at ? (a->at < b->at ? 1 : -1) : (a->i > b->i) - (a->i < b->i);
}

static int same_key(const rs_fail *a, const rs_fail *b)
{
    if (a->detail != b->detail)
        return a->detail < b->detail ? -1 : 1;
    if (a->status != b->status)
        return a->status < b->status ? -1 : 1;
    return (a->attempt > b->attempt) - (a->attempt < b->attempt);
}

static int by_key(const void *pa, const void *pb)
{
    const rs_fail *a = pa, *b = pb;
    int k = same_key(a, b);
    return k ? k : (a->i > b->i) - (a->i < b->i);
}

/* Whether the interned status id k is a failure (status_failed: the one list), looked up
 * once per id. */
static bool failed_status(const rix *ix, signed char *known, uint8_t k)
{
    if (!known[k]) {
        rix_task probe = { .status = k };
        known[k] = status_failed(rix_status_name(ix, &probe)) ? 1 : -1;
    }
    return known[k] > 0;
}

struct rs_groups_job {               /* the failures of the window, gathered in slices */
    const rix *ix;
    double now, window_s, since;
    long cap;
    signed char known[256];         /* failed_status, per interned status id */
    rs_fail *f;
    size_t n, fcap;
};

rs_groups_job *rs_groups_begin(const rix *ix, double now, double window_s, long cap)
{
    rs_groups_job *g = xcalloc(1, sizeof *g);
    *g = (rs_groups_job){ .ix = ix, .now = now, .window_s = window_s,
                          .since = now - window_s, .cap = cap };
    return g;
}

void rs_groups_offer(rs_groups_job *g, size_t i)
{
    const rix_task *t = rix_at(g->ix, i);
    double at = failed_at(t);
    if (at <= g->since || !failed_status(g->ix, g->known, t->status))
        return;
    xgrow(&g->f, &g->fcap, g->n + 1, sizeof *g->f);
    g->f[g->n++] = (rs_fail){ at, (uint32_t)i, t->detail, t->attempt, t->status };
}

void rs_groups_cancel(rs_groups_job *g)
{
    if (!g)
        return;
    free(g->f);
    free(g);
}

rd_sgroups *rs_groups_end(rs_groups_job *job, rs_groups_proto proto, void *ud)
{
    const rix *ix = job->ix;
    double now = job->now;
    rd_sgroups *g = sgroups_new(job->window_s, job->cap, now);
    rs_fail *f = job->f;
    size_t n = job->n;
    if (job->cap > 0 && n > (size_t)job->cap) {            /* the newest cap of them */
        qsort(f, n, sizeof *f, newest_first);
        n = (size_t)job->cap;
        sgroups_set_capped(g, true);
    }
    qsort(f, n, sizeof *f, by_key);
    for (size_t a = 0, b; a < n; a = b) {
        rd_group_tally tl = { .first_seen = f[a].at, .last_seen = f[a].at };
        for (b = a; b < n && same_key(&f[a], &f[b]) == 0; b++) {
            tl.count++;
            tl.recent += f[b].at > now - GROUPS_INTERVAL_S;
            tl.first_seen = f[b].at < tl.first_seen ? f[b].at : tl.first_seen;
            tl.last_seen = f[b].at > tl.last_seen ? f[b].at : tl.last_seen;
        }
        rd_execution e;
        memset(&e, 0, sizeof e);
        proto(rix_at(ix, f[a].i), &e, ud);
        sgroups_add(g, &e, &tl);
    }
    rs_groups_cancel(job);
    sgroups_finish(g);
    return g;
}

rd_sgroups *rs_groups_build(const rix *ix, double now, double window_s, long cap,
                            rs_groups_proto proto, void *ud)
{
    rs_groups_job *g = rs_groups_begin(ix, now, window_s, cap);
    for (size_t i = 0; i < rix_size(ix); i++)
        rs_groups_offer(g, i);
    return rs_groups_end(g, proto, ud);
}
