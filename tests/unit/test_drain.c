#include "drain.h"

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "xalloc.h"

/* the model holds char *; these tests never write through them */
static char *S(const char *s)
{
    union { const char *c; char *m; } u = {s};
    return u.m;
}

/* ---- ETA: one row per boundary ---- */
typedef struct {
    const char *what;
    int n;
    double t[4];
    long depth[4], fl[4];
    rd_drain_eta_kind want;
    long left;
    double rate, eta;      /* checked when want == DRAIN_ETA_OK */
} eta_case;

static void test_eta(void)
{
    static const eta_case cases[] = {
        {"no samples", 0, {0}, {0}, {0}, DRAIN_ETA_UNKNOWN, -1, 0, 0},
        {"one sample", 1, {100}, {10}, {2}, DRAIN_ETA_UNKNOWN, 12, 0, 0},
        {"empty now", 1, {100}, {0}, {0}, DRAIN_ETA_EMPTY, 0, 0, 0},
        {"empty, in flight unknown", 1, {100}, {0}, {-1}, DRAIN_ETA_EMPTY, 0, 0, 0},
        {"all unknown", 2, {100, 200}, {-1, -1}, {-1, -1}, DRAIN_ETA_UNKNOWN, -1, 0, 0},
        {"span under the minimum", 2, {100, 104.9}, {20, 10}, {0, 0}, DRAIN_ETA_UNKNOWN, 10, 0, 0},
        {"span at the minimum", 2, {100, 105}, {20, 10}, {0, 0}, DRAIN_ETA_OK, 10, 2, 5},
        {"steady 1/s", 3, {0, 10, 20}, {30, 20, 10}, {0, 0, 0}, DRAIN_ETA_OK, 10, 1, 10},
        {"in flight counts", 2, {0, 10}, {10, 5}, {4, 4}, DRAIN_ETA_OK, 9, 0.5, 18},
        {"flat under the stall span", 2, {0, 29.9}, {10, 10}, {1, 1}, DRAIN_ETA_UNKNOWN, 11, 0, 0},
        {"flat at the stall span", 2, {0, 30}, {10, 10}, {1, 1}, DRAIN_ETA_STALLED, 11, 0, 0},
        {"flat: stalled", 2, {0, 60}, {10, 10}, {1, 1}, DRAIN_ETA_STALLED, 11, 0, 0},
        {"growing: stalled", 2, {0, 60}, {10, 20}, {0, 0}, DRAIN_ETA_STALLED, 20, 0, 0},
        {"old sample outside the window", 3, {0, 500, 510}, {1000, 20, 10}, {0, 0, 0}, DRAIN_ETA_OK, 10, 1, 10},
        {"unknown oldest skipped", 3, {0, 10, 20}, {-1, 20, 10}, {-1, 0, 0}, DRAIN_ETA_OK, 10, 1, 10},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const eta_case *c = &cases[i];
        rd_drain_hist h;
        memset(&h, 0, sizeof h);
        for (int k = 0; k < c->n; k++)
            drain_hist_add(&h, c->t[k], c->depth[k], c->fl[k]);
        rd_drain_eta e = drain_eta(&h, 300);
        CHECK_MSG(e.kind == c->want, c->what);
        CHECK_MSG(e.left == c->left, c->what);
        if (c->want == DRAIN_ETA_OK) {
            CHECK_NEAR(e.rate, c->rate);
            CHECK_NEAR(e.eta_s, c->eta);
        }
    }
}

static void test_hist(void)
{
    rd_drain_hist h;
    memset(&h, 0, sizeof h);
    drain_hist_add(&h, 10, 5, 0);
    drain_hist_add(&h, 10, 4, 0);   /* same time: replaces */
    CHECK(h.n == 1 && h.s[0].depth == 4);
    drain_hist_add(&h, 9, 99, 0);   /* older: ignored */
    CHECK(h.n == 1 && h.s[0].depth == 4);
    for (int i = 0; i < DRAIN_HIST_MAX + 5; i++)
        drain_hist_add(&h, 11 + i, i, 0);
    CHECK(h.n == DRAIN_HIST_MAX);
    CHECK(h.s[0].depth == 5 && h.s[DRAIN_HIST_MAX - 1].depth == DRAIN_HIST_MAX + 4);
}

static void test_spark(void)
{
    rd_drain_hist h;
    memset(&h, 0, sizeof h);
    long v[] = {8, 7, 4, 0, -1, 2};
    for (int i = 0; i < 6; i++)
        drain_hist_add(&h, i, v[i], v[i] < 0 ? -1 : 0);
    char out[64];
    drain_spark(&h, 10, true, out, sizeof out);
    CHECK_STR(out, "@#+. -");
    drain_spark(&h, 3, true, out, sizeof out);   /* the last 3, scaled to their max (2) */
    CHECK_STR(out, ". @");
    drain_spark(&h, 2, false, out, sizeof out);
    CHECK_STR(out, " \xe2\x96\x88");
    drain_spark(&h, 10, false, out, 7);          /* cut on whole glyphs */
    CHECK_STR(out, "\xe2\x96\x88\xe2\x96\x87");
    memset(&h, 0, sizeof h);
    drain_spark(&h, 10, true, out, sizeof out);
    CHECK_STR(out, "");
}

static rd_worker wk(const char *id, const char *name, const char *status, const char *tags, rd_health hl)
{
    rd_worker w;
    memset(&w, 0, sizeof w);
    w.id = S(id);
    w.name = S(name);
    w.status = S(status);
    w.tags = S(tags);
    w.health = hl;
    w.queue_depth = -1;
    w.in_flight = w.capacity = -1;
    return w;
}

static void test_tokens(void)
{
    rd_worker w7 = wk("7", "worker-drain", "active", "python3", RD_HEALTH_HEALTHY);
    rd_worker w17 = wk("17", "w17", "active", "python3", RD_HEALTH_HEALTHY);
    CHECK(drain_queue_of("worker.7.executions", &w7));
    CHECK(!drain_queue_of("worker.17.executions", &w7));
    CHECK(!drain_queue_of("worker.100007.executions", &w7));
    CHECK(drain_queue_of("worker.17.executions", &w17));
    CHECK(drain_queue_of("jobs.worker-drain", &w7));
    CHECK(!drain_queue_of("jobs.worker-drainage", &w7));
    CHECK(!drain_queue_of(NULL, &w7));
    static const struct { const char *a, *b; bool want; } compat[] = {
        {"python3", "python3", true}, {"python3", "node20", false}, {"python3, shell", "shell", true},
        {"[\"sim\", \"email\"]", "[\"reports\", \"sim\"]", true}, {"[\"email\"]", "[\"reports\"]", false},
        {NULL, "node20", true}, {"", "node20", true}, {"python3", "python", false},
    };
    for (size_t i = 0; i < sizeof compat / sizeof *compat; i++) {
        rd_worker a = wk("a", NULL, NULL, compat[i].a, RD_HEALTH_HEALTHY);
        rd_worker b = wk("b", NULL, NULL, compat[i].b, RD_HEALTH_HEALTHY);
        CHECK_MSG(drain_compatible(&a, &b) == compat[i].want, compat[i].a ? compat[i].a : "NULL");
    }
    static const struct { const char *status; rd_health h; bool want; } avail[] = {
        {"active", RD_HEALTH_HEALTHY, true}, {"busy", RD_HEALTH_DEGRADED, true},
        {"ACTIVE", RD_HEALTH_UNKNOWN, true}, {NULL, RD_HEALTH_HEALTHY, true},
        {"active", RD_HEALTH_UNHEALTHY, false}, {"draining", RD_HEALTH_HEALTHY, false},
        {"inactive", RD_HEALTH_HEALTHY, false}, {"offline", RD_HEALTH_HEALTHY, false},
    };
    for (size_t i = 0; i < sizeof avail / sizeof *avail; i++) {
        rd_worker a = wk("a", NULL, avail[i].status, NULL, avail[i].h);
        CHECK_MSG(drain_available(&a) == avail[i].want, avail[i].status ? avail[i].status : "NULL");
    }
}

static void join_line(const char *line, void *ud)
{
    char *out = ud;
    size_t n = strlen(out);
    snprintf(out + n, 600 - n, "%s\n", line);
}

static void test_risk(void)
{
    rd_worker ws[4] = {
        wk("1", "w-a", "active", "python3", RD_HEALTH_HEALTHY),
        wk("2", "w-b", "active", "python3", RD_HEALTH_UNHEALTHY),
        wk("3", "w-c", "draining", "python3", RD_HEALTH_HEALTHY),
        wk("4", "w-d", "active", "node20", RD_HEALTH_HEALTHY),
    };
    rd_queue qs[3];
    memset(qs, 0, sizeof qs);
    qs[0].name = S("worker.1.executions");
    qs[0].consumers = 1;
    qs[1].name = S("worker.4.executions");
    qs[1].consumers = 2;
    qs[2].name = S("dlq.1");
    qs[2].consumers = 0;
    qs[2].is_dlq = true;
    rd_model m;
    memset(&m, 0, sizeof m);
    m.workers.items = ws;
    m.workers.n = 4;
    m.queues.items = qs;
    m.queues.n = 3;
    rd_drain_risk r;
    qs[0].depth = 7;
    char text[600] = "";
    CHECK(drain_warnings(&m, &ws[0], join_line, text) == 2);   /* the lines the console and CLI show */
    CHECK_STR(text, "WARNING: last consumer of queue worker.1.executions (7 messages): it would stop draining\n"
                    "WARNING: no other healthy compatible worker: every other compatible worker (2) is unhealthy "
                    "or not taking work\n");
    text[0] = 0;
    CHECK(drain_warnings(&m, &ws[3], join_line, text) == 1);
    CHECK_STR(text, "WARNING: no other compatible worker: its work would wait\n");
    drain_risk(&m, &ws[0], &r);   /* the others of its runtime: unhealthy, draining */
    CHECK(r.n_last_queue == 1 && r.last_queue[0] == &qs[0]);
    CHECK(r.compatible == 2 && r.compatible_ok == 0);
    CHECK(r.others_unhealthy && !r.no_other);
    drain_risk(&m, &ws[3], &r);   /* node20 alone; its queue has another consumer */
    CHECK(r.n_last_queue == 0);
    CHECK(r.no_other && !r.others_unhealthy);
    ws[1].health = RD_HEALTH_DEGRADED;   /* one healthy enough other: no warning */
    qs[0].consumers = 2;
    CHECK(drain_warnings(&m, &ws[0], join_line, text) == 0);
    qs[0].consumers = 1;
    drain_risk(&m, &ws[0], &r);
    CHECK(r.compatible == 2 && r.compatible_ok == 1 && !r.others_unhealthy && !r.no_other);
    qs[0].consumers = -1;                /* consumers unknown: no queue claim */
    drain_risk(&m, &ws[0], &r);
    CHECK(r.n_last_queue == 0);
    qs[0].consumers = 0;                 /* no consumer: w is not consuming it either */
    drain_risk(&m, &ws[0], &r);
    CHECK(r.n_last_queue == 0);
    qs[0].consumers = 2;                 /* another consumer stays */
    drain_risk(&m, &ws[0], &r);
    CHECK(r.n_last_queue == 0);
}

static void test_in_flight(void)
{
    rd_worker w = wk("1", "worker-healthy", "active", NULL, RD_HEALTH_HEALTHY);
    rd_execution es[5];
    memset(es, 0, sizeof es);
    const char *st[] = {"running", "RUNNING", "completed", "running", "in_progress"};
    const char *who[] = {"1", "worker-healthy", "1", "2", "1"};
    for (int i = 0; i < 5; i++) {
        es[i].status = S(st[i]);
        es[i].worker = S(who[i]);
        es[i].created_at = 1000 + i;
    }
    (void)w;
    CHECK_NEAR(drain_expected_finish(&es[0], 600), 1600);
    CHECK_NEAR(drain_expected_finish(&es[0], 0), 0);
    es[0].created_at = 0;
    CHECK_NEAR(drain_expected_finish(&es[0], 600), 0);
}

/* A broker's queues make BROKER columns; the queues a store reports itself (OpenAgents'
 * queued jobs by tag) do not: no worker owns one. */
static void test_has_broker(void)
{
    rd_model *m = model_new();
    CHECK(!drain_has_broker(m));
    rd_queue *q = xcalloc(1, sizeof *q);
    q[0].name = xstrdup("email");
    q[0].depth = 3;
    model_set_queues(m, "postgresql", q, 1);
    CHECK(!drain_has_broker(m));
    q = xcalloc(1, sizeof *q);
    q[0].name = xstrdup("worker.1.executions");
    q[0].depth = 2;
    model_set_queues(m, "rabbitmq", q, 1);
    CHECK(drain_has_broker(m));
    model_free(m);
    m = model_new();
    model_source_ok(m, "rabbitmq", 1000);      /* configured, no queue listed yet */
    CHECK(drain_has_broker(m));
    model_free(m);
}

int main(void)
{
    test_has_broker();
    test_eta();
    test_hist();
    test_spark();
    test_tokens();
    test_risk();
    test_in_flight();
    return check_done("drain");
}
