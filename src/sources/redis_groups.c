#include "redis_groups.h"

#include <stdio.h>
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
    /* the window's baseline (standout.h): every task of the window (any status), by its
     * task name (the index's interned pointer: never freed while the index lives) and
     * attempt, tallied in C as the tasks go by */
    struct rs_base { const char *name; uint16_t attempt; size_t n; } *base;   /* open hash */
    size_t nbase, base_cap, in_window;
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

/* The task's (name, attempt) counted: an open hash keyed by the interned name (one pointer
 * per distinct name) and the attempt; a few hundred keys at most in practice. */
static size_t base_slot(const struct rs_base *t, size_t cap, const char *name, uint16_t attempt)
{
    size_t h = ((size_t)(uintptr_t)name >> 3) * 31u + attempt;
    for (size_t k = h & (cap - 1);; k = (k + 1) & (cap - 1))
        if (!t[k].n || (t[k].name == name && t[k].attempt == attempt))
            return k;
}

static void base_count(rs_groups_job *g, const rix_task *t)
{
    g->in_window++;
    const char *name = rix_task_name(g->ix, t);
    if ((g->nbase + 1) * 2 > g->base_cap) {            /* grow: at most half full */
        size_t cap = g->base_cap ? g->base_cap * 2 : 64;
        struct rs_base *nt = xcalloc(cap, sizeof *nt);
        for (size_t k = 0; k < g->base_cap; k++)
            if (g->base[k].n)
                nt[base_slot(nt, cap, g->base[k].name, g->base[k].attempt)] = g->base[k];
        free(g->base);
        g->base = nt;
        g->base_cap = cap;
    }
    struct rs_base *b = &g->base[base_slot(g->base, g->base_cap, name, t->attempt)];
    if (!b->n) {
        *b = (struct rs_base){ name, t->attempt, 0 };
        g->nbase++;
    }
    b->n++;
}

void rs_groups_offer(rs_groups_job *g, size_t i)
{
    const rix_task *t = rix_at(g->ix, i);
    double at = failed_at(t);
    if (at <= g->since)
        return;
    base_count(g, t);
    if (!failed_status(g->ix, g->known, t->status))
        return;
    xgrow(&g->f, &g->fcap, g->n + 1, sizeof *g->f);
    g->f[g->n++] = (rs_fail){ at, (uint32_t)i, t->detail, t->attempt, t->status };
}

void rs_groups_cancel(rs_groups_job *g)
{
    if (!g)
        return;
    free(g->f);
    free(g->base);
    free(g);
}

/* The baseline of the window: by task name and attempt (Alakai records no worker, queue,
 * host or version on a task). */
static so_base *window_base(const rs_groups_job *job)
{
    so_base *b = so_base_new();
    so_base_recorded(b, SO_ACTION);
    so_base_recorded(b, SO_ATTEMPT);
    for (size_t k = 0; k < job->base_cap; k++) {
        const struct rs_base *e = &job->base[k];
        char att[16];
        snprintf(att, sizeof att, "%u", (unsigned)e->attempt);
        if (!e->n)
            continue;
        so_base_add(b, SO_ACTION, e->name, e->n);
        if (e->attempt > 0)
            so_base_add(b, SO_ATTEMPT, att, e->n);
    }
    so_base_total(b, job->in_window, false);
    so_base_finish(b);
    return b;
}

rd_sgroups *rs_groups_end(rs_groups_job *job, rs_groups_proto proto, void *ud)
{
    const rix *ix = job->ix;
    double now = job->now;
    rd_sgroups *g = sgroups_new(job->window_s, job->cap, now);
    sgroups_set_base(g, window_base(job));
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
