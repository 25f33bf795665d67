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

/* The failures of the window, in f (owned); their number. */
static size_t window_failures(const rix *ix, double since, double now, rs_fail **f)
{
    static const char *const failed[] = {"failed", "error", "timeout", "abandoned", "lost", "dead"};
    int ids[sizeof failed / sizeof *failed];
    size_t nids = 0, n = 0, cap = 0;
    for (size_t k = 0; k < sizeof failed / sizeof *failed; k++)
        if ((ids[nids] = rix_status_id(ix, failed[k])) >= 0)
            nids++;
    *f = NULL;
    for (size_t i = 0; i < rix_size(ix) && nids; i++) {
        const rix_task *t = rix_at(ix, i);
        double at = failed_at(t);
        bool fail = false;
        for (size_t k = 0; k < nids && !fail; k++)
            fail = t->status == ids[k];
        if (!fail || at <= since || at > now + 60)
            continue;
        xgrow(f, &cap, n + 1, sizeof **f);
        (*f)[n++] = (rs_fail){ at, (uint32_t)i, t->detail, t->attempt, t->status };
    }
    return n;
}

rd_sgroups *rs_groups_build(const rix *ix, double now, double window_s, long cap,
                            rs_groups_proto proto, void *ud)
{
    rd_sgroups *g = sgroups_new(window_s, cap, now);
    rs_fail *f;
    size_t n = window_failures(ix, now - window_s, now, &f);
    if (cap > 0 && n > (size_t)cap) {            /* the newest cap of them */
        qsort(f, n, sizeof *f, newest_first);
        n = (size_t)cap;
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
    free(f);
    sgroups_finish(g);
    return g;
}
