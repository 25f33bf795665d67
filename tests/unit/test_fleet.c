/* The fleet's rows (core/fleet.h): levels, each sort key, the DLQ trend, the cells. */
#include "fleet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "xalloc.h"

#define NOW 1700000000.0

static void add_source(rd_model *m, const char *name, rd_src_state st, double last_ok, double since)
{
    rd_source_status *s = model_source(m, name);
    s->state = st;
    s->last_ok = last_ok;
    s->since = since;
    if (st != RD_SRC_OK)
        snprintf(s->error, sizeof s->error, "connection refused");
}

static void add_exec(rd_model *m, const char *id, const char *status, rd_elig v, double created)
{
    size_t n = m->execs.n;
    rd_execution *items = xcalloc(n + 1, sizeof *items);
    if (n)
        memcpy(items, m->execs.items, n * sizeof *items);
    items[n].id = xstrdup(id);
    items[n].status = xstrdup(status);
    items[n].elig.verdict = v;
    items[n].created_at = created;
    free(m->execs.items);
    m->execs.items = items;
    m->execs.n = m->execs.cap = n + 1;
}

static void add_worker(rd_model *m, const char *status, rd_health h)
{
    size_t n = m->workers.n;
    rd_worker *items = xcalloc(n + 1, sizeof *items);
    if (n)
        memcpy(items, m->workers.items, n * sizeof *items);
    items[n].id = xstrdup("w");
    items[n].status = xstrdup(status);
    items[n].health = h;
    free(m->workers.items);
    m->workers.items = items;
    m->workers.n = m->workers.cap = n + 1;
}

/* A system whose store answered 2 s ago and holds nothing alarming. */
static rd_model *calm(void)
{
    rd_model *m = model_new();
    add_source(m, "postgresql", RD_SRC_OK, NOW - 2, NOW - 60);
    m->failing_rate = 0;
    m->dlq_total = 0;
    return m;
}

static void test_levels(void)
{
    rd_fleet_row r;
    rd_model *m = calm();
    fleet_row_fill(&r, "a", NULL, "attune", m, NULL, NULL, NOW);
    CHECK(r.level == FLEET_OK);
    CHECK(r.src_state == RD_SRC_OK);
    CHECK_NEAR(r.src_age, 2);
    CHECK(r.eligible == 0);
    CHECK(r.workers == -1 && r.unhealthy == -1);
    CHECK(r.oldest_queued < 0);
    model_free(m);

    m = model_new();   /* nothing answered yet */
    add_source(m, "postgresql", RD_SRC_CONNECTING, 0, NOW - 1);
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NULL, NOW);
    CHECK(r.level == FLEET_WAIT);
    CHECK(r.eligible == -1);
    CHECK(r.dlq == -1);
    model_free(m);

    m = calm();   /* a second source down: the worst wins, with its error */
    add_source(m, "rabbitmq", RD_SRC_DOWN, 0, NOW - 300);
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NULL, NOW);
    CHECK(r.level == FLEET_DOWN);
    CHECK(r.src_state == RD_SRC_DOWN);
    CHECK_NEAR(r.src_age, 300);
    CHECK_STR(r.src_error, "rabbitmq: connection refused");
    model_free(m);

    m = calm();
    add_source(m, "redis", RD_SRC_STALE, NOW - 50, NOW - 20);
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NULL, NOW);
    CHECK(r.level == FLEET_DOWN);
    model_free(m);

    m = calm();   /* one unhealthy worker and one draining: warnings, each with its reason */
    add_worker(m, "active", RD_HEALTH_HEALTHY);
    add_worker(m, "active", RD_HEALTH_UNHEALTHY);
    add_worker(m, "draining", RD_HEALTH_DEGRADED);
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NULL, NOW);
    CHECK(r.level == FLEET_WARN);
    CHECK(r.workers == 3 && r.unhealthy == 1 && r.draining == 1);
    CHECK(r.n_reasons == 2);
    CHECK_STR(r.reasons[0], "1 unhealthy worker");
    CHECK_STR(r.reasons[1], "1 draining");
    model_free(m);

    m = calm();   /* draining alone: a warning */
    add_worker(m, "draining", RD_HEALTH_HEALTHY);
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NULL, NOW);
    CHECK(r.level == FLEET_WARN);
    model_free(m);

    m = calm();   /* DLQ not empty, not growing: a warning */
    m->dlq_total = 4;
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NULL, NOW);
    CHECK(r.level == FLEET_WARN);
    CHECK(r.dlq == 4);
    model_free(m);

    m = calm();   /* eligible and oldest queued come from the page */
    add_exec(m, "1", "failed", RD_ELIG_YES, NOW - 10);
    add_exec(m, "2", "failed", RD_ELIG_NO, NOW - 20);
    add_exec(m, "3", "queued", RD_ELIG_UNKNOWN, NOW - 30);
    add_exec(m, "4", "requested", RD_ELIG_UNKNOWN, NOW - 400);
    add_exec(m, "5", "running", RD_ELIG_UNKNOWN, NOW - 900);
    m->execs_more = true;
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NULL, NOW);
    CHECK(r.level == FLEET_WARN);
    CHECK(r.eligible == 1 && r.eligible_more);
    CHECK_NEAR(r.oldest_queued, 400);
    CHECK(r.oldest_more);
    model_free(m);

    m = calm();   /* without dlq_total: the DLQ queues' depths */
    m->dlq_total = -1;
    rd_queue *q = xcalloc(3, sizeof *q);
    q[0].name = xstrdup("work"), q[0].depth = 9;
    q[1].name = xstrdup("work.dlq"), q[1].depth = 3, q[1].is_dlq = true;
    q[2].name = xstrdup("other.dlq"), q[2].depth = 2, q[2].is_dlq = true;
    model_set_queues(m, "sqs", q, 3);
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NULL, NOW);
    CHECK(r.dlq == 5);
    model_free(m);
}

/* Each threshold at its boundary, with the defaults and with a system's own values. */
static void test_thresholds(void)
{
    static const struct {
        double rate;
        long dlq, unhealthy;
        bool own;                   /* the system's own thresholds (below) */
        rd_fleet_level want;
        const char *why;
    } cases[] = {
        { 0.99, 0, 0, false, FLEET_OK, "-" },     /* the background rate: ok */
        { 1.0, 0, 0, false, FLEET_WARN, "failing 1.0/min >= 1" },
        { 9.9, 0, 0, false, FLEET_WARN, "failing 9.9/min >= 1" },
        { 10, 0, 0, false, FLEET_FAIL, "failing 10.0/min >= 10" },
        { 0, 1, 0, false, FLEET_WARN, "DLQ 1 >= 1" },
        { 0, 999, 0, false, FLEET_WARN, "DLQ 999 >= 1" },
        { 0, 1000, 0, false, FLEET_FAIL, "DLQ 1000 >= 1000" },
        { 0, 0, 2, false, FLEET_WARN, "2 unhealthy workers" },
        { 0, 0, 3, false, FLEET_FAIL, "3 unhealthy workers >= 3" },
        { 12, 5, 3, false, FLEET_FAIL, "failing 12.0/min >= 10, 3 unhealthy workers >= 3, DLQ 5 >= 1" },
        /* worst first: a warn reason never leads a FAIL row (issue 34) */
        { 4.8, 0, 3, false, FLEET_FAIL, "3 unhealthy workers >= 3, failing 4.8/min >= 1" },
        { 4.8, 1000, 1, false, FLEET_FAIL, "DLQ 1000 >= 1000, failing 4.8/min >= 1, 1 unhealthy worker" },
        { 4.9, 0, 0, true, FLEET_OK, "-" },       /* fail_rate_warn = 5 */
        { 5, 0, 0, true, FLEET_WARN, "failing 5.0/min >= 5" },
        { 20, 0, 0, true, FLEET_FAIL, "failing 20.0/min >= 20" },
        { 0, 10, 0, true, FLEET_OK, "-" },        /* dlq_warn = 0: off */
        { 0, 50, 0, true, FLEET_FAIL, "DLQ 50 >= 50" },
        { 0, 0, 1, true, FLEET_FAIL, "1 unhealthy workers >= 1" },
    };
    rd_fleet_cfg own;
    fleet_cfg_defaults(&own);
    own.fail_rate_warn = 5, own.fail_rate_crit = 20, own.dlq_warn = 0, own.dlq_crit = 50;
    own.unhealthy_workers_crit = 1;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rd_model *m = calm();
        m->failing_rate = cases[i].rate;
        m->dlq_total = cases[i].dlq;
        for (long k = 0; k < cases[i].unhealthy; k++)
            add_worker(m, "active", RD_HEALTH_UNHEALTHY);
        rd_fleet_row r;
        fleet_row_fill(&r, "a", NULL, NULL, m, NULL, cases[i].own ? &own : NULL, NOW);
        char why[FLEET_CELL_MAX], msg[64];
        fleet_row_why(&r, why, sizeof why);
        snprintf(msg, sizeof msg, "case %zu", i);
        CHECK_MSG(r.level == cases[i].want, msg);
        CHECK_MSG(strcmp(why, cases[i].why) == 0, msg);
        if (strcmp(why, cases[i].why) != 0)
            fprintf(stderr, "case %zu: %s\n", i, why);
        model_free(m);
    }
}

/* A rate well above the system's own last hour: FAIL below fail_rate_crit. */
static void test_rise(void)
{
    rd_fleet_trend tr;
    memset(&tr, 0, sizeof tr);
    double mean = -1;
    for (int k = 60; k >= 6; k--)            /* one sample a minute, 1.0/min, up to 6 min ago */
        fleet_trend_add(&tr, NOW - k * 60.0, -1, 1.0);
    fleet_trend_add(&tr, NOW - 30, -1, 9.0);  /* within a step: skipped */
    CHECK(fleet_rate_baseline(&tr, NOW, &mean));
    CHECK_NEAR(mean, 1.0);
    rd_model *m = calm();
    m->failing_rate = 3.0;                   /* 3x the hour: FAIL */
    rd_fleet_row r;
    fleet_row_fill(&r, "a", NULL, NULL, m, &tr, NULL, NOW);
    CHECK(r.level == FLEET_FAIL);
    CHECK_STR(r.reasons[0], "failing 3.0/min, 3x the last hour (1.0)");
    m->failing_rate = 2.9;                   /* below: only the warning */
    fleet_row_fill(&r, "a", NULL, NULL, m, &tr, NULL, NOW);
    CHECK(r.level == FLEET_WARN);
    rd_fleet_cfg off;
    fleet_cfg_defaults(&off);
    off.fail_rate_rise = 0;
    m->failing_rate = 5;
    fleet_row_fill(&r, "a", NULL, NULL, m, &tr, &off, NOW);
    CHECK(r.level == FLEET_WARN);
    model_free(m);

    memset(&tr, 0, sizeof tr);               /* 9 minutes of history: no baseline yet */
    for (int k = 14; k >= 6; k--)
        fleet_trend_add(&tr, NOW - k * 60.0, -1, 0.0);
    CHECK(!fleet_rate_baseline(&tr, NOW, &mean));
    fleet_trend_add(&tr, NOW - 5 * 60.0, -1, 0.0);   /* the 10th, just old enough */
    CHECK(fleet_rate_baseline(&tr, NOW, &mean) && mean == 0);
}

/* A DLQ size from the last-known snapshot says so, with its age, until the live one. */
static void test_cached_dlq(void)
{
    rd_model *m = calm();
    m->dlq_total = -1;
    model_dlq_total(m, "postgresql", 3);
    model_dlq_mark_cached(m, NOW - 120);
    rd_fleet_row r;
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NULL, NOW);
    char cells[FLEET_COL__COUNT][FLEET_CELL_MAX];
    fleet_row_cells(&r, cells);
    CHECK_STR(cells[FLEET_COL_DLQ], "3 cached 2m");
    model_dlq_total(m, "postgresql", 3);
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NULL, NOW);
    fleet_row_cells(&r, cells);
    CHECK_STR(cells[FLEET_COL_DLQ], "3");
    model_free(m);
}

/* The store's retry-eligible figure and its marks: exact, an upper bound (some counted may
 * be superseded), a lower bound (capped), and past the cap with superseded ones not told
 * apart, neither (<=N+), the same in the cell and in WHY. */
static void test_eligible_bounds(void)
{
    static const struct { long n; bool capped, upper; const char *cell, *why; } t[] = {
        { 12, false, false, "12", "12 retryable" },
        { 2267, false, true, "<=2267", "<=2267 retryable" },
        { 100000, true, false, "100000+", "100000+ retryable" },
        { 100000, true, true, "<=100000+", "<=100000+ retryable" },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        rd_model *m = calm();
        model_set_store_figures(m, t[i].n, t[i].capped, t[i].upper, -1);
        rd_fleet_row r;
        fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NULL, NOW);
        char cells[FLEET_COL__COUNT][FLEET_CELL_MAX];
        fleet_row_cells(&r, cells);
        CHECK_STR(cells[FLEET_COL_ELIGIBLE], t[i].cell);
        CHECK(strstr(cells[FLEET_COL_WHY], t[i].why) != NULL);
        model_free(m);
    }
}

static void test_trend(void)
{
    rd_fleet_trend tr;
    memset(&tr, 0, sizeof tr);
    long d = 99;
    CHECK(!fleet_trend_delta(&tr, NOW, 5, &d));
    fleet_trend_add(&tr, NOW - 400, 1, -1);   /* outside the window */
    fleet_trend_add(&tr, NOW - 250, 3, -1);
    fleet_trend_add(&tr, NOW - 245, 100, -1);  /* within a step of the last: skipped */
    fleet_trend_add(&tr, NOW - 100, 4, -1);
    fleet_trend_add(&tr, NOW - 50, -1, -1);   /* unknown: skipped */
    CHECK(tr.n == 3);
    CHECK(fleet_trend_delta(&tr, NOW, 10, &d) && d == 7);   /* against NOW - 250 */
    CHECK(fleet_trend_delta(&tr, NOW, 3, &d) && d == 0);
    CHECK(!fleet_trend_delta(&tr, NOW, -1, &d));
    CHECK(fleet_trend_delta(&tr, NOW + 200, 2, &d) && d == -2);   /* NOW - 100 is oldest now */
    memset(&tr, 0, sizeof tr);
    fleet_trend_add(&tr, NOW - 5, 3, -1);     /* younger than a step: no trend yet */
    CHECK(!fleet_trend_delta(&tr, NOW, 4, &d));
    for (int i = 0; i < 100; i++)         /* the ring wraps */
        fleet_trend_add(&tr, NOW + i * 10.0, i, -1);
    CHECK(tr.n == FLEET_TREND_N);
    CHECK(fleet_trend_delta(&tr, NOW + 990, 99, &d) && d == 30);   /* kept 68..99, window from 69 */

    rd_model *m = calm();   /* growing DLQ: a warning that says so */
    m->dlq_total = 8;
    memset(&tr, 0, sizeof tr);
    fleet_trend_add(&tr, NOW - 60, 2, -1);
    rd_fleet_row r;
    fleet_row_fill(&r, "a", NULL, NULL, m, &tr, NULL, NOW);
    CHECK(r.dlq_trend_known && r.dlq_delta == 6);
    CHECK(r.level == FLEET_WARN);
    CHECK(r.n_reasons == 2);
    CHECK_STR(r.reasons[1], "DLQ +6 in 5m");
    model_free(m);
}

static rd_fleet_row row(const char *name, rd_fleet_level l, double rate, long unh, long delta, long dlq,
                        long elig)
{
    rd_fleet_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "%s", name);
    r.level = l, r.failing_rate = rate, r.unhealthy = unh, r.dlq = dlq, r.eligible = elig;
    r.dlq_trend_known = delta != 0, r.dlq_delta = delta;
    return r;
}

static void test_sort(void)
{
    /* worst place first; equal places keep the order given (the config's), whatever their
     * figures: a failing rate or a DLQ that moves every poll never swaps two rows */
    rd_fleet_row in[] = {
        row("warn-small", FLEET_WARN, 0, 0, 0, 1, 0),
        row("fine", FLEET_OK, 0, 0, 0, 0, 0),
        row("fail-slow", FLEET_FAIL, 1, 0, 0, 0, 0),
        row("warn-big", FLEET_WARN, 9, 3, 5, 500, 70),
        row("down", FLEET_DOWN, -1, -1, 0, -1, -1),
        row("fail-fast", FLEET_FAIL, 50, 4, 9, 90, 9),
        row("wait", FLEET_WAIT, -1, -1, 0, -1, -1),
    };
    static const char *const want[] = {"down", "fail-slow", "fail-fast", "warn-small", "warn-big",
                                       "wait", "fine"};
    size_t n = sizeof in / sizeof *in;
    for (size_t i = 0; i < n; i++)
        in[i].place = in[i].level;
    fleet_sort(in, n);
    for (size_t i = 0; i < n; i++)
        CHECK_MSG(strcmp(in[i].name, want[i]) == 0, want[i]);
    fleet_sort(in, 0);
}

/* A new level moves the row only once it has held for hold_s (two polls); the first sight
 * places it at once; a level that flickers back never moves it. */
static void test_place(void)
{
    rd_fleet_place p;
    memset(&p, 0, sizeof p);
    CHECK(fleet_place_update(&p, FLEET_OK, 100, 1.8) == FLEET_OK);
    CHECK(fleet_place_update(&p, FLEET_FAIL, 102, 1.8) == FLEET_OK);    /* one poll: stays */
    CHECK(fleet_place_update(&p, FLEET_FAIL, 103, 1.8) == FLEET_OK);    /* 1 s: not yet */
    CHECK(fleet_place_update(&p, FLEET_FAIL, 104, 1.8) == FLEET_FAIL);  /* two polls: moves */
    CHECK(fleet_place_update(&p, FLEET_OK, 106, 1.8) == FLEET_FAIL);
    CHECK(fleet_place_update(&p, FLEET_FAIL, 108, 1.8) == FLEET_FAIL);  /* flicker: held */
    CHECK(fleet_place_update(&p, FLEET_OK, 110, 1.8) == FLEET_FAIL);
    CHECK(fleet_place_update(&p, FLEET_WARN, 112, 1.8) == FLEET_FAIL);
    CHECK(fleet_place_update(&p, FLEET_WARN, 114, 1.8) == FLEET_WARN);
    rd_fleet_place q;
    memset(&q, 0, sizeof q);
    CHECK(fleet_place_update(&q, FLEET_DOWN, 5, 1.8) == FLEET_DOWN);
    rd_fleet_place r;                    /* waiting for its first answer: placed by it at once */
    memset(&r, 0, sizeof r);
    CHECK(fleet_place_update(&r, FLEET_WAIT, 5, 1.8) == FLEET_WAIT);
    CHECK(fleet_place_update(&r, FLEET_FAIL, 5.5, 1.8) == FLEET_FAIL);
    CHECK(fleet_place_update(&r, FLEET_OK, 6, 1.8) == FLEET_FAIL);
}

static void test_cells_and_output(void)
{
    rd_model *m = calm();
    m->failing_rate = 1.5;
    m->dlq_total = 12;
    add_worker(m, "draining", RD_HEALTH_UNHEALTHY);
    add_exec(m, "1", "failed", RD_ELIG_YES, NOW - 10);
    add_exec(m, "2", "queued", RD_ELIG_UNKNOWN, NOW - 125);
    rd_fleet_trend tr;
    memset(&tr, 0, sizeof tr);
    fleet_trend_add(&tr, NOW - 100, 10, -1);
    rd_fleet_row rows[2];
    fleet_row_fill(&rows[0], "prod\x1b[31m", "PROD", "tasker", m, &tr, NULL, NOW);
    model_free(m);
    m = model_new();
    fleet_row_fill(&rows[1], "dev", NULL, "attune", m, NULL, NULL, NOW);
    model_free(m);
    char cells[FLEET_COL__COUNT][FLEET_CELL_MAX];
    fleet_row_cells(&rows[0], cells);
    CHECK_STR(cells[FLEET_COL_LEVEL], "warn");
    CHECK_STR(cells[FLEET_COL_WHY], "failing 1.5/min >= 1, 1 unhealthy worker, DLQ 12 >= 1, DLQ +2 in 5m, "
                                    "1 retryable, 1 draining");
    CHECK_STR(cells[FLEET_COL_ENV], "PROD");
    CHECK_STR(cells[FLEET_COL_SOURCES], "ok 2s");
    CHECK_STR(cells[FLEET_COL_FAILING], "1.5");
    CHECK_STR(cells[FLEET_COL_ELIGIBLE], "1");
    CHECK_STR(cells[FLEET_COL_DLQ], "12");
    CHECK_STR(cells[FLEET_COL_TREND], "+2");
    CHECK_STR(cells[FLEET_COL_WORKERS], "1 unh 1 drn");
    CHECK_STR(cells[FLEET_COL_QUEUED], "2m");
    fleet_row_cells(&rows[1], cells);
    CHECK_STR(cells[FLEET_COL_SOURCES], "none yet");
    CHECK_STR(cells[FLEET_COL_QUEUED], "-");

    char *text = fleet_to_text(rows, 2);
    static const char want_text[] =
              "FLEET\n"
              "STATE  SYSTEM     ENV   SOURCES   FAIL/MIN  RETRYABLE  DLQ  TREND  WORKERS      OLDEST QUEUED  WHY\n"
              "warn   prod\xe2\x90\x9b[31m  PROD  ok 2s     1.5       1          12   +2     1 unh 1 drn  2m             "
              "failing 1.5/min >= 1, 1 unhealthy worker, DLQ 12 >= 1, DLQ +2 in 5m, 1 retryable, 1 draining\n"
              "wait   dev        -     none yet  -         -          -    -      -            -              connecting\n";
    CHECK(text && strcmp(text, want_text) == 0);
    if (text && strcmp(text, want_text) != 0)
        fprintf(stderr, "got:\n%s", text);
    free(text);
    char *json = fleet_to_json(rows, 1);
    CHECK(json && strstr(json, "\"view\":\t\"fleet\""));
    CHECK(json && strstr(json, "\"failing_per_min\":\t1.5"));
    CHECK(json && strstr(json, "\"dlq_trend\":\t2"));
    CHECK(json && strstr(json, "\"oldest_queued_age_s\":\t125"));
    CHECK(json && strstr(json, "\"reasons\":\t[\"failing 1.5/min >= 1\", \"1 unhealthy worker\""));
    CHECK(json && strstr(json, "\"dlq_cached_age_s\":\tnull"));
    CHECK(json && !strchr(json, 0x1b));
    free(json);
}

/* A DLQ's horizon (core/dlqhorizon.h) below dlq_horizon_warn / _crit: each boundary. */
static void test_horizon(void)
{
    static const struct {
        long ttl_ms;
        double age;                 /* of the oldest dead letter; < 0: not peeked */
        bool own;
        rd_fleet_level want;
        const char *why;
    } cases[] = {
        { 7200000, 0, false, FLEET_OK, "-" },
        { 3600000, 0, false, FLEET_OK, "-" },               /* 1h left: not below 1h */
        { 3600000, 1, false, FLEET_WARN, "DLQ expires in 59m < 1h" },
        { 600000, 0, false, FLEET_WARN, "DLQ expires in 10m < 1h" },
        { 600000, 1, false, FLEET_FAIL, "DLQ expires in 9m < 10m" },
        { 300000, -1, false, FLEET_FAIL, "DLQ expires within 5m < 10m" },   /* a bound */
        { 300000, 0, true, FLEET_WARN, "DLQ expires in 5m < 2h" },  /* crit 0: off */
        { 9000000, 0, true, FLEET_OK, "-" },
    };
    rd_fleet_cfg own;
    fleet_cfg_defaults(&own);
    own.dlq_horizon_warn = 7200, own.dlq_horizon_crit = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rd_model *m = calm();
        rd_queue *q = xcalloc(1, sizeof *q);
        q->name = xstrdup("attune.dlx.queue");
        q->depth = 1;
        q->is_dlq = true;
        q->ttl_ms = cases[i].ttl_ms;
        q->publish_rate = -1;
        model_set_queues(m, "rabbitmq", q, 1);
        model_dlq_total(m, "rabbitmq", 0);     /* the DLQ size's own reasons left out */
        if (cases[i].age >= 0) {
            rd_dlq_entry *e = xcalloc(1, sizeof *e);
            e->id = xstrdup("m1");
            e->queue = xstrdup("attune.dlx.queue");
            e->last_death_at = NOW - cases[i].age;
            model_dlq_set(m, "rabbitmq", e, 1);
        }
        rd_fleet_row r;
        fleet_row_fill(&r, "a", NULL, NULL, m, NULL, cases[i].own ? &own : NULL, NOW);
        char why[FLEET_CELL_MAX], msg[64];
        fleet_row_why(&r, why, sizeof why);
        snprintf(msg, sizeof msg, "horizon case %zu", i);
        CHECK_MSG(r.level == cases[i].want, msg);
        CHECK_STR(why, cases[i].why);
        if (i == 4) {                /* the JSON names the DLQ, its figure and basis */
            char *json = fleet_to_json(&r, 1);
            CHECK(json && strstr(json, "\"dlq_horizon\":\t{"));
            CHECK(json && strstr(json, "\"expires_in_s\":\t599,"));
            CHECK(json && strstr(json, "\"expires_within_s\":\tnull,"));
            CHECK(json && strstr(json, "\"expires_basis\":\t\"message-ttl 10m from x-death\""));
            free(json);
        }
        model_free(m);
    }
    rd_model *m = calm();              /* no DLQ: null */
    rd_fleet_row r;
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NULL, NOW);
    char *json = fleet_to_json(&r, 1);
    CHECK(json && strstr(json, "\"dlq_horizon\":\tnull"));
    free(json);
    model_free(m);
}

int main(void)
{
    test_levels();
    test_horizon();
    test_thresholds();
    test_rise();
    test_cached_dlq();
    test_eligible_bounds();
    test_trend();
    test_sort();
    test_place();
    test_cells_and_output();
    return check_done("fleet");
}
