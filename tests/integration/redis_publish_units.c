/*
 * The Redis source's publish job (issue 27, src/sources/redis_view.c): one walk over the
 * task index in steps of a bounded number of tasks. Gates that do not depend on the
 * machine: every step visits at most the slice bound; the model is set only when the walk
 * is over; its result (counts, orphans, the page, the DLQ, the groups) equals a one-shot
 * publish of the same index, also when tasks are upserted between steps and when a removal
 * (a sweep's end in slices) moves tasks mid-walk; a publish when only the clock moved
 * walks nothing unless a running task turned orphan. Registered in tests/integration.
 */
#include <event2/event.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/core/config.h"
#include "../../src/core/groups.h"
#include "../../src/core/model.h"
#include "../../src/core/storegroups.h"
#include "../../src/sources/redis_index.h"
#include "../../src/sources/redis_view.h"

static int failures;
#define CHECK(c) do { if (!(c)) { failures++; \
    fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); } } while (0)

enum { N = 40000, SLICE = 1000 };

static double now0;

typedef struct side {               /* a view over the index and its own model */
    rd_model *m;
    rs_view *v;
    int changes;                    /* on_change calls */
} side;

static void on_change(void *ud) { ((side *)ud)->changes++; }

static void side_open(side *s, struct event_base *base, const rd_system_cfg *cfg,
                      const rix *ix, size_t slice)
{
    memset(s, 0, sizeof *s);
    s->m = model_new();
    rd_source_ctx ctx = { .base = base, .cfg = cfg, .model = s->m, .on_change = on_change,
                          .ud = s };
    s->v = rs_view_new(&ctx, ix);
    rs_view_set_slice(s->v, slice);
    rs_view_whole(s->v);
}

static void side_close(side *s)
{
    rs_view_free(s->v);
    model_free(s->m);
}

/* Task i: statuses, attempts, errors and times varied so that every figure has members
 * (orphans: running for 3 h; dead: failed at the last attempt; recent failures). */
static void task_sum(int i, int gen, rix_sum *s)
{
    static const char *const st[] = { "succeeded", "failed", "running", "failed", "queued" };
    static const char *const err[] = { "boom", "timeout after 30s", "disk full on /dev/sda1" };
    const char *status = st[(i + gen) % 5];
    bool failed = strcmp(status, "failed") == 0;
    *s = (rix_sum){ .status = status, .attempt = 1 + (i + gen) % 3, .nfields = 1,
                    .error = failed ? err[i % 3] : NULL,
                    .dispatched_at = now0 - (i % 7 == 0 ? 3 * 3600 : 1) - (double)(i % 997),
                    .resolved_at = failed ? now0 - (double)(i % 600) : 0 };
}

static void put(rix *ix, int i, int gen)
{
    char id[32];
    rix_sum s;
    snprintf(id, sizeof id, "exec-%07d", i);
    task_sum(i, gen, &s);
    rix_upsert(ix, id, strlen(id), &s);
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The two models hold the same publish. */
static bool models_same(const rd_model *a, const rd_model *b)
{
    if (a->counts.n != b->counts.n || a->orphan_suspects != b->orphan_suspects ||
        a->failing_rate != b->failing_rate || a->execs.n != b->execs.n ||
        a->execs_more != b->execs_more || a->dlq.n != b->dlq.n ||
        a->dlq_total != b->dlq_total || !a->sgroups != !b->sgroups)
        return false;
    for (size_t i = 0; i < a->counts.n; i++)
        if (strcmp(a->counts.items[i].status, b->counts.items[i].status) != 0 ||
            a->counts.items[i].count != b->counts.items[i].count)
            return false;
    for (size_t i = 0; i < a->execs.n; i++) {
        const rd_execution *x = &a->execs.items[i], *y = &b->execs.items[i];
        if (!same_str(x->id, y->id) || !same_str(x->status, y->status) ||
            !same_str(x->error, y->error) || x->flags != y->flags)
            return false;
    }
    for (size_t i = 0; i < a->dlq.n; i++)
        if (!same_str(a->dlq.items[i].id, b->dlq.items[i].id) ||
            !same_str(a->dlq.items[i].reason, b->dlq.items[i].reason))
            return false;
    if (!a->sgroups)
        return true;
    if (sgroups_n(a->sgroups) != sgroups_n(b->sgroups) ||
        sgroups_failures(a->sgroups) != sgroups_failures(b->sgroups))
        return false;
    for (size_t i = 0; i < sgroups_n(a->sgroups); i++) {
        const rd_group *x = sgroups_at(a->sgroups, i), *y = sgroups_at(b->sgroups, i);
        if (!same_str(x->fp, y->fp) || x->count != y->count || x->recent != y->recent)
            return false;
    }
    return true;
}

/* Runs the job to its end by hand; every step within the bound. Returns the steps. */
static int drive(side *s, size_t *visited)
{
    int steps = 0;
    while (rs_view_busy(s->v)) {
        size_t got = rs_view_step(s->v);
        CHECK(got <= SLICE);
        *visited += got;
        steps++;
    }
    return steps;
}

/* The one-shot publish of the index now (a view with no slice bound), compared. */
static bool equals_one_shot(const side *a, struct event_base *base, const rd_system_cfg *cfg,
                            const rix *ix, bool dlq, bool groups, const rd_exec_filter *f)
{
    side b;
    side_open(&b, base, cfg, ix, SIZE_MAX);
    if (f)
        rs_view_set_filter(b.v, f);
    if (dlq)
        rs_view_want_dlq(b.v, false);
    if (groups)
        rs_view_want_groups(b.v, 3600, 0);
    rs_view_publish(b.v, true);
    CHECK(!rs_view_busy(b.v) && b.changes == 1);
    bool same = models_same(a->m, b.m);
    side_close(&b);
    return same;
}

static void test_slices(struct event_base *base, const rd_system_cfg *cfg)
{
    rix *ix = rix_new(2 * N);
    for (int i = 0; i < N; i++)
        put(ix, i, 0);
    side a;
    side_open(&a, base, cfg, ix, SLICE);
    char failed[] = "failed";
    rd_exec_filter f = { .status = failed };
    rs_view_set_filter(a.v, &f);
    rs_view_want_dlq(a.v, false);
    rs_view_want_groups(a.v, 3600, 0);
    rs_view_publish(a.v, true);                 /* the first step, at once */
    CHECK(rs_view_busy(a.v) && !rs_view_idle(a.v));
    CHECK(a.changes == 0 && a.m->counts.n == 0 && a.m->execs.n == 0);   /* nothing half-done */
    size_t visited = 0;
    int steps = drive(&a, &visited);
    CHECK(visited == N - SLICE && steps == N / SLICE - 1);
    CHECK(a.changes == 1 && rs_view_idle(a.v));
    CHECK(a.m->counts.n == 4 && a.m->orphan_suspects > 0 && a.m->dlq.n == 100 &&
          a.m->dlq_total > 100 && a.m->execs.n == 50 && a.m->sgroups &&
          sgroups_n(a.m->sgroups) == 3);
    CHECK(equals_one_shot(&a, base, cfg, ix, true, true, &f));

    /* nothing changed: no walk at all (the clock-only check is O(1)) */
    rs_view_publish(a.v, false);
    CHECK(!rs_view_busy(a.v) && a.changes == 1);

    /* a page further (keyset: from the last row) */
    CHECK(rs_view_page(a.v, +1));
    rs_view_publish(a.v, true);
    visited = 0;
    drive(&a, &visited);
    CHECK(a.changes == 2 && a.m->execs.n == 50);
    char *second = strdup(a.m->execs.items[0].id);

    /* and back (PgUp: a first walk finds the page just newer, then the publish's walk) */
    CHECK(rs_view_page(a.v, -1));
    rs_view_publish(a.v, true);
    CHECK(strcmp(a.m->execs.items[0].id, second) == 0);     /* still the page shown */
    visited = 0;
    drive(&a, &visited);
    CHECK(visited == 2 * N - SLICE);
    CHECK(a.changes == 3 && equals_one_shot(&a, base, cfg, ix, true, true, &f));
    CHECK(rs_view_page(a.v, +1));
    rs_view_publish(a.v, true);
    drive(&a, &visited);
    CHECK(a.m->execs.n == 50 && strcmp(a.m->execs.items[0].id, second) == 0);
    free(second);
    side_close(&a);
    rix_free(ix);
}

/* Tasks upserted between steps: appended ones are in the result (the walk reads the size at
 * each step), in-place updates may be missed; the next publish (the version moved) is then
 * exactly the one-shot one. */
static void test_upserts_between(struct event_base *base, const rd_system_cfg *cfg)
{
    rix *ix = rix_new(2 * N);
    for (int i = 0; i < N; i++)
        put(ix, i, 0);
    side a;
    side_open(&a, base, cfg, ix, SLICE);
    rs_view_want_dlq(a.v, false);
    rs_view_publish(a.v, true);
    size_t visited = 0;
    for (int k = 0; k < 10; k++)
        visited += rs_view_step(a.v);
    for (int i = 0; i < 3000; i++)
        put(ix, i * 7 % N, 1);                  /* in place, before and after the walk */
    for (int i = N; i < N + 2000; i++)
        put(ix, i, 0);                          /* appended */
    drive(&a, &visited);
    CHECK(visited == N + 2000 - SLICE);
    long total = 0;
    for (size_t i = 0; i < a.m->counts.n; i++)
        total += a.m->counts.items[i].count;
    CHECK(total == N + 2000);
    /* the index moved while it was walked: the view walks it again by itself, 50 ms
     * later, its steps on the loop's zero-delay timers */
    CHECK(!rs_view_busy(a.v));
    while (a.changes < 2 && event_base_loop(base, EVLOOP_ONCE) == 0)
        ;
    CHECK(a.changes == 2 && !rs_view_busy(a.v));
    CHECK(equals_one_shot(&a, base, cfg, ix, true, false, NULL));
    side_close(&a);
    rix_free(ix);
}

/* A removal mid-walk (positions move): the walk starts again and its result is that of
 * the index at its end, also while a sweep's end removes tasks in slices between steps. */
static void test_layout_change(struct event_base *base, const rd_system_cfg *cfg)
{
    rix *ix = rix_new(2 * N);
    for (int i = 0; i < N; i++)
        put(ix, i, 0);
    side a;
    side_open(&a, base, cfg, ix, SLICE);
    rs_view_want_dlq(a.v, false);
    rs_view_want_groups(a.v, 3600, 0);
    rs_view_publish(a.v, true);
    for (int k = 0; k < 5; k++)
        rs_view_step(a.v);
    uint64_t layout = rix_layout(ix);
    CHECK(rix_remove(ix, "exec-0000003", 12));
    CHECK(rix_layout(ix) != layout);
    size_t visited = 0;
    drive(&a, &visited);
    CHECK(visited == N - 1);                    /* walked again, from the first task */
    CHECK(equals_one_shot(&a, base, cfg, ix, true, true, NULL));

    rix_sweep_begin(ix);                        /* a sweep that keeps two tasks in three */
    for (int i = 0; i < N; i++)
        if (i % 3)
            put(ix, i, 2);
    rs_view_want_groups(a.v, 3600, 0);          /* once whole, groups are on demand */
    rs_view_publish(a.v, true);
    bool ending = true;
    while (ending || rs_view_busy(a.v)) {
        size_t removed;
        if (ending)
            ending = !rix_sweep_end_step(ix, 700, &removed);
        if (rs_view_busy(a.v))
            CHECK(rs_view_step(a.v) <= SLICE);
    }
    rs_view_publish(a.v, false);                /* the index moved since the walk began */
    visited = 0;
    drive(&a, &visited);
    CHECK(rix_size(ix) == N - N / 3 - 1);
    CHECK(equals_one_shot(&a, base, cfg, ix, true, true, NULL));
    side_close(&a);
    rix_free(ix);
}

/* Only the clock moved: no walk until a running task turns orphan (here: orphan_after
 * shortened, as the clock passing it would), then exactly the one-shot figures. */
static void test_clock_only(struct event_base *base, rd_system_cfg *cfg)
{
    rix *ix = rix_new(2 * N);
    for (int i = 0; i < N; i++)
        put(ix, i, 0);
    side a;
    side_open(&a, base, cfg, ix, SLICE);
    rs_view_publish(a.v, true);
    size_t visited = 0;
    drive(&a, &visited);
    long orphans = a.m->orphan_suspects;
    cfg->alakai.orphan_after_s = 3 * 3600 + 2000;   /* no running task turns orphan */
    rs_view_publish(a.v, false);
    CHECK(!rs_view_busy(a.v) && a.changes == 1);
    cfg->alakai.orphan_after_s = 3600;
    rs_view_publish(a.v, false);
    CHECK(!rs_view_busy(a.v) && a.changes == 1);
    cfg->alakai.orphan_after_s = 500;               /* the oldest young one is 997 s old */
    rs_view_publish(a.v, false);
    CHECK(rs_view_busy(a.v));
    drive(&a, &visited);
    CHECK(a.changes == 2 && a.m->orphan_suspects > orphans);
    CHECK(equals_one_shot(&a, base, cfg, ix, false, false, NULL));
    cfg->alakai.orphan_after_s = 3600;
    side_close(&a);
    rix_free(ix);
}

int main(void)
{
    now0 = floor((double)time(NULL));
    struct event_base *base = event_base_new();    /* run once: the tests step by hand */
    rd_system_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.ui.page_size = 50;
    cfg.alakai.orphan_after_s = 3600;
    cfg.alakai.max_retries = 1;
    test_slices(base, &cfg);
    test_upserts_between(base, &cfg);
    test_layout_change(base, &cfg);
    test_clock_only(base, &cfg);
    event_base_free(base);
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("redis publish units: ok\n");
    return failures ? 1 : 0;
}
