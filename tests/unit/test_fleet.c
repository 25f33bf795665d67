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
    fleet_row_fill(&r, "a", NULL, "attune", m, NULL, NOW);
    CHECK(r.level == FLEET_OK);
    CHECK(r.src_state == RD_SRC_OK);
    CHECK_NEAR(r.src_age, 2);
    CHECK(r.eligible == 0);
    CHECK(r.workers == -1 && r.unhealthy == -1);
    CHECK(r.oldest_queued < 0);
    model_free(m);

    m = model_new();   /* nothing answered yet */
    add_source(m, "postgresql", RD_SRC_CONNECTING, 0, NOW - 1);
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NOW);
    CHECK(r.level == FLEET_WAIT);
    CHECK(r.eligible == -1);
    CHECK(r.dlq == -1);
    model_free(m);

    m = calm();   /* a second source down: the worst wins, with its error */
    add_source(m, "rabbitmq", RD_SRC_DOWN, 0, NOW - 300);
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NOW);
    CHECK(r.level == FLEET_DOWN);
    CHECK(r.src_state == RD_SRC_DOWN);
    CHECK_NEAR(r.src_age, 300);
    CHECK_STR(r.src_error, "rabbitmq: connection refused");
    model_free(m);

    m = calm();
    add_source(m, "redis", RD_SRC_STALE, NOW - 50, NOW - 20);
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NOW);
    CHECK(r.level == FLEET_DOWN);
    model_free(m);

    m = calm();
    m->failing_rate = 0.2;
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NOW);
    CHECK(r.level == FLEET_FAIL);
    model_free(m);

    m = calm();
    add_worker(m, "active", RD_HEALTH_HEALTHY);
    add_worker(m, "active", RD_HEALTH_UNHEALTHY);
    add_worker(m, "draining", RD_HEALTH_DEGRADED);
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NOW);
    CHECK(r.level == FLEET_FAIL);
    CHECK(r.workers == 3 && r.unhealthy == 1 && r.draining == 1);
    model_free(m);

    m = calm();   /* draining alone: a warning */
    add_worker(m, "draining", RD_HEALTH_HEALTHY);
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NOW);
    CHECK(r.level == FLEET_WARN);
    model_free(m);

    m = calm();   /* DLQ not empty, not growing: a warning */
    m->dlq_total = 4;
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NOW);
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
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NOW);
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
    fleet_row_fill(&r, "a", NULL, NULL, m, NULL, NOW);
    CHECK(r.dlq == 5);
    model_free(m);
}

static void test_trend(void)
{
    rd_fleet_trend tr;
    memset(&tr, 0, sizeof tr);
    long d = 99;
    CHECK(!fleet_trend_delta(&tr, NOW, 5, &d));
    fleet_trend_add(&tr, NOW - 400, 1);   /* outside the window */
    fleet_trend_add(&tr, NOW - 250, 3);
    fleet_trend_add(&tr, NOW - 245, 100);  /* within a step of the last: skipped */
    fleet_trend_add(&tr, NOW - 100, 4);
    fleet_trend_add(&tr, NOW - 50, -1);   /* unknown: skipped */
    CHECK(tr.n == 3);
    CHECK(fleet_trend_delta(&tr, NOW, 10, &d) && d == 7);   /* against NOW - 250 */
    CHECK(fleet_trend_delta(&tr, NOW, 3, &d) && d == 0);
    CHECK(!fleet_trend_delta(&tr, NOW, -1, &d));
    CHECK(fleet_trend_delta(&tr, NOW + 200, 2, &d) && d == -2);   /* NOW - 100 is oldest now */
    memset(&tr, 0, sizeof tr);
    fleet_trend_add(&tr, NOW - 5, 3);     /* younger than a step: no trend yet */
    CHECK(!fleet_trend_delta(&tr, NOW, 4, &d));
    for (int i = 0; i < 100; i++)         /* the ring wraps */
        fleet_trend_add(&tr, NOW + i * 10.0, i);
    CHECK(tr.n == FLEET_TREND_N);
    CHECK(fleet_trend_delta(&tr, NOW + 990, 99, &d) && d == 30);   /* kept 68..99, window from 69 */

    rd_model *m = calm();   /* growing DLQ: FAIL */
    m->dlq_total = 8;
    memset(&tr, 0, sizeof tr);
    fleet_trend_add(&tr, NOW - 60, 2);
    rd_fleet_row r;
    fleet_row_fill(&r, "a", NULL, NULL, m, &tr, NOW);
    CHECK(r.dlq_trend_known && r.dlq_delta == 6);
    CHECK(r.level == FLEET_FAIL);
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
    /* one row per key: each beats the next on exactly that key */
    rd_fleet_row want[] = {
        row("down", FLEET_DOWN, -1, -1, 0, -1, -1),
        row("rate-high", FLEET_FAIL, 5, 0, 0, 0, 0),
        row("rate-low", FLEET_FAIL, 1, 0, 0, 0, 0),
        row("unhealthy", FLEET_FAIL, 0, 2, 0, 0, 0),
        row("growing", FLEET_FAIL, 0, 0, 3, 9, 0),
        row("big-dlq", FLEET_WARN, 0, 0, 0, 50, 0),
        row("eligible", FLEET_WARN, 0, 0, 0, 0, 7),
        row("warn-a", FLEET_WARN, 0, 0, 0, 0, 0),
        row("warn-b", FLEET_WARN, 0, 0, 0, 0, 0),
        row("wait", FLEET_WAIT, -1, -1, 0, -1, -1),
        row("fine", FLEET_OK, 0, 0, 0, 0, 0),
    };
    size_t n = sizeof want / sizeof *want;
    rd_fleet_row got[sizeof want / sizeof *want];
    for (size_t i = 0; i < n; i++)   /* reversed, then sorted back */
        got[i] = want[n - 1 - i];
    fleet_sort(got, n);
    for (size_t i = 0; i < n; i++)
        CHECK_MSG(strcmp(got[i].name, want[i].name) == 0, want[i].name);
    fleet_sort(got, 0);
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
    fleet_trend_add(&tr, NOW - 100, 10);
    rd_fleet_row rows[2];
    fleet_row_fill(&rows[0], "prod\x1b[31m", "PROD", "tasker", m, &tr, NOW);
    model_free(m);
    m = model_new();
    fleet_row_fill(&rows[1], "dev", NULL, "attune", m, NULL, NOW);
    model_free(m);
    char cells[FLEET_COL__COUNT][FLEET_CELL_MAX];
    fleet_row_cells(&rows[0], cells);
    CHECK_STR(cells[FLEET_COL_LEVEL], "FAIL");
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
              "STATE  SYSTEM     ENV   SOURCES   FAIL/MIN  RETRYABLE  DLQ  TREND  WORKERS      OLDEST QUEUED\n"
              "FAIL   prod\xe2\x90\x9b[31m  PROD  ok 2s     1.5       1          12   +2     1 unh 1 drn  2m\n"
              "wait   dev        -     none yet  -         -          -    -      -            -\n";
    CHECK(text && strcmp(text, want_text) == 0);
    if (text && strcmp(text, want_text) != 0)
        fprintf(stderr, "got:\n%s", text);
    free(text);
    char *json = fleet_to_json(rows, 1);
    CHECK(json && strstr(json, "\"view\":\t\"fleet\""));
    CHECK(json && strstr(json, "\"failing_per_min\":\t1.5"));
    CHECK(json && strstr(json, "\"dlq_trend\":\t2"));
    CHECK(json && strstr(json, "\"oldest_queued_age_s\":\t125"));
    CHECK(json && !strchr(json, 0x1b));
    free(json);
}

int main(void)
{
    test_levels();
    test_trend();
    test_sort();
    test_cells_and_output();
    return check_done("fleet");
}
