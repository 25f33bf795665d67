#include "health.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

#define NOW 1700000000.0
#define NO_HB (-1e9)

typedef struct {
    double hb_age;        /* seconds before NOW (negative: future); NO_HB = none */
    long depth;
    double rate;
    int fails;
    bool metrics;
    rd_health want;
    const char *reason;   /* substring expected in the reason, NULL = don't check */
} hcase;

static rd_worker mk(const hcase *c)
{
    rd_worker w;
    memset(&w, 0, sizeof w);
    w.heartbeat_at = c->hb_age == NO_HB ? 0 : NOW - c->hb_age;
    w.queue_depth = c->depth;
    w.failure_rate = c->rate;
    w.consecutive_failures = c->fails;
    w.has_metrics = c->metrics;
    w.in_flight = w.capacity = -1;
    return w;
}

static void test_thresholds(void)
{
    static const hcase cases[] = {
        { 0, -1, -1, -1, false, RD_HEALTH_HEALTHY, NULL },
        { 29.9, -1, -1, -1, false, RD_HEALTH_HEALTHY, NULL },
        { 30, -1, -1, -1, false, RD_HEALTH_UNHEALTHY, "heartbeat 30s old" },
        { 300, -1, -1, -1, false, RD_HEALTH_UNHEALTHY, "heartbeat 5m old" },
        { 5, -1, -1, 2, true, RD_HEALTH_HEALTHY, NULL },
        { 5, -1, -1, 3, true, RD_HEALTH_DEGRADED, "3 consecutive failures" },
        { 5, -1, -1, 9, true, RD_HEALTH_DEGRADED, "9 consecutive failures" },
        { 5, -1, -1, 10, true, RD_HEALTH_UNHEALTHY, "10 consecutive failures" },
        { 5, 49, -1, -1, true, RD_HEALTH_HEALTHY, NULL },
        { 5, 50, -1, -1, true, RD_HEALTH_DEGRADED, "queue depth 50" },
        { 5, 99, -1, -1, true, RD_HEALTH_DEGRADED, "queue depth 99" },
        { 5, 100, -1, -1, true, RD_HEALTH_UNHEALTHY, "queue depth 100" },
        { 5, -1, 0.29, -1, true, RD_HEALTH_HEALTHY, NULL },
        { 5, -1, 0.30, -1, true, RD_HEALTH_DEGRADED, "failure rate 30%" },
        { 5, -1, 0.69, -1, true, RD_HEALTH_DEGRADED, "failure rate 69%" },
        { 5, -1, 0.70, -1, true, RD_HEALTH_UNHEALTHY, "failure rate 70%" },
        { NO_HB, -1, -1, -1, false, RD_HEALTH_UNKNOWN, "no heartbeat" },
        { NO_HB, 10, -1, -1, true, RD_HEALTH_HEALTHY, NULL },       /* metrics, no heartbeat */
        { NO_HB, 60, -1, -1, true, RD_HEALTH_DEGRADED, "queue depth 60" },
        { 45, 60, -1, 4, true, RD_HEALTH_UNHEALTHY, "heartbeat 45s old" }, /* worst wins */
        { 5, 60, 0.5, 4, true, RD_HEALTH_DEGRADED, "4 consecutive failures" },
        { -4, -1, -1, -1, false, RD_HEALTH_HEALTHY, NULL },      /* skew within 5 s */
        { -600, -1, -1, -1, false, RD_HEALTH_DEGRADED, "in the future" },
    };
    rd_health_cfg cfg;
    health_defaults(&cfg);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const hcase *c = &cases[i];
        rd_worker w = mk(c);
        health_classify(&cfg, &w, NOW);
        char ctx[200];
        snprintf(ctx, sizeof ctx, "case %zu: %s / %s", i, health_name(w.health),
                 w.health_reason);
        CHECK_MSG(w.health == c->want, ctx);
        if (c->reason)
            CHECK_MSG(strstr(w.health_reason, c->reason) != NULL, ctx);
    }
}

static void test_custom_cfg(void)
{
    rd_health_cfg cfg;
    health_defaults(&cfg);
    cfg.heartbeat_max_age = 120;
    rd_worker w;
    memset(&w, 0, sizeof w);
    w.queue_depth = w.failure_rate = w.consecutive_failures = -1;
    w.heartbeat_at = NOW - 90;
    health_classify(&cfg, &w, NOW);
    CHECK(w.health == RD_HEALTH_HEALTHY);
    w.heartbeat_at = NOW - 120;
    health_classify(&cfg, &w, NOW);
    CHECK(w.health == RD_HEALTH_UNHEALTHY);
}

static void test_format_age(void)
{
    static const struct { double s; const char *want; } cases[] = {
        { 0, "0s" }, { 42, "42s" }, { 59.9, "59s" }, { 60, "1m" }, { 300, "5m" },
        { 3599, "59m" }, { 3600, "1h" }, { 3 * 3600 + 5, "3h" }, { 86400, "1d" },
        { 2 * 86400 + 1, "2d" }, { -30, "-30s" }, { 1e300, "forever" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char b[16];
        format_age(cases[i].s, b, sizeof b);
        CHECK_STR(b, cases[i].want);
    }
    char tiny[3];
    format_age(12345, tiny, sizeof tiny);
    CHECK(strlen(tiny) <= 2);
}

/* The "not draining" detector: one row per sequence of polls (visible, in flight), each
 * poll 10 s apart; want = the flag after the last poll. */
typedef struct {
    const char *name;
    long vis[6], infl[6];
    int n;
    bool want;
} dcase;

static void test_drain(void)
{
    static const dcase cases[] = {
        { "first poll alone", { 5 }, { 0 }, 1, false },
        { "grew once", { 5, 6 }, { 0, 0 }, 2, false },
        { "grew twice", { 5, 6, 7 }, { 0, 0, 0 }, 3, true },
        { "grew twice, then steady", { 5, 6, 7, 7 }, { 0, 0, 0, 0 }, 4, true },
        { "grew twice, then dropped", { 5, 6, 7, 6 }, { 0, 0, 0, 0 }, 4, false },
        { "grew twice, then one in flight", { 5, 6, 7, 8 }, { 0, 0, 0, 1 }, 4, false },
        { "grew while in flight", { 5, 6, 7 }, { 1, 1, 1 }, 3, false },
        { "in flight once between growths", { 5, 6, 7, 8 }, { 0, 0, 2, 0 }, 4, false },
        { "steady backlog never grew", { 9, 9, 9, 9 }, { 0, 0, 0, 0 }, 4, false },
        { "empty queue", { 0, 0, 0 }, { 0, 0, 0 }, 3, false },
        { "unknown counts (-1)", { -1, -1, -1 }, { -1, -1, -1 }, 3, false },
        { "grew from empty twice", { 0, 1, 2 }, { 0, 0, 0 }, 3, true },
        { "drained to 0 after the flag", { 5, 6, 7, 0 }, { 0, 0, 0, 0 }, 4, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const dcase *c = &cases[i];
        rd_queue_trend t;
        queue_trend_init(&t);
        bool got = false;
        for (int k = 0; k < c->n; k++)
            got = queue_trend_note(&t, c->vis[k], c->infl[k], 0, 100.0 + 10.0 * k);
        CHECK_MSG(got == c->want, c->name);
        CHECK_MSG(t.not_draining == c->want, c->name);
    }
    /* rates from the deltas of visible + in flight + delayed */
    rd_queue_trend t;
    queue_trend_init(&t);
    CHECK(t.in_rate < 0 && t.out_rate < 0);
    queue_trend_note(&t, 10, 0, 0, 100);
    CHECK(t.in_rate < 0);
    queue_trend_note(&t, 20, 5, 5, 110);
    CHECK_NEAR(t.in_rate, 2.0);
    CHECK_NEAR(t.out_rate, 0.0);
    queue_trend_note(&t, 0, 0, 0, 120);
    CHECK_NEAR(t.in_rate, 0.0);
    CHECK_NEAR(t.out_rate, 3.0);
    queue_trend_note(&t, 5, 0, 0, 120);   /* same instant: no rate, counts kept */
    CHECK_NEAR(t.out_rate, 3.0);
}

/* Judged again as the clock moves, a worker whose data stands gets exactly what a fresh
 * classification says at every instant, and the skipping does skip. */
static void test_reclassify(void)
{
    rd_health_cfg cfg;
    health_defaults(&cfg);
    const double hb_ages[] = { NO_HB, -100, -6, -4, 0, 29.5, 59, 3590, 86000, 1e7 };
    const int fails[] = { -1, 5 };
    int judged = 0, steps = 0, changes = 0;
    for (size_t h = 0; h < sizeof hb_ages / sizeof *hb_ages; h++)
        for (size_t f = 0; f < sizeof fails / sizeof *fails; f++) {
            hcase c = { hb_ages[h], -1, -1, fails[f], false, RD_HEALTH_UNKNOWN, NULL };
            rd_worker kept = mk(&c);
            health_classify(&cfg, &kept, NOW);
            for (double t = NOW; t < NOW + 7300; t += 0.7, steps++) {
                rd_worker fresh = mk(&c);
                health_classify(&cfg, &fresh, t);
                rd_health was = kept.health;
                double until = kept.health_until;
                bool changed = health_reclassify(&cfg, &kept, t);
                judged += t >= until;
                changes += changed;
                char ctx[96];
                snprintf(ctx, sizeof ctx, "hb age %g, fails %d, at +%.1f s", hb_ages[h],
                         fails[f], t - NOW);
                CHECK_MSG(kept.health == fresh.health, ctx);
                CHECK_MSG(strcmp(kept.health_reason, fresh.health_reason) == 0, ctx);
                CHECK_MSG(changed == (was != kept.health), ctx);
            }
        }
    /* the future-heartbeat case is judged each time (2 workers x 10430 steps); the rest
     * only when a second/minute/hour boundary of a shown age passes */
    CHECK(changes > 0);
    CHECK_MSG(judged < steps / 4, "reclassify skipped most steps");
}

int main(void)
{
    CHECK_STR(health_name(RD_HEALTH_HEALTHY), "healthy");
    CHECK_STR(health_name(RD_HEALTH_UNKNOWN), "unknown");
    test_thresholds();
    test_custom_cfg();
    test_format_age();
    test_drain();
    test_reclassify();
    return check_done("test_health");
}
