#include "retry.h"

#include <stdio.h>

#include "check.h"

typedef struct { int attempts, max, retryable; rd_elig want; int flagged; } tasker_case;

static void test_tasker(void)
{
    static const tasker_case cases[] = {
        { -1, -1, -1, RD_ELIG_YES, 0 },          /* all NULL: attempts 0 */
        { 0, 3, 1, RD_ELIG_YES, 0 },
        { 1, 3, 1, RD_ELIG_YES, 0 },
        { 2, 3, 1, RD_ELIG_YES, 0 },
        { 3, 3, 1, RD_ELIG_NO, 0 },              /* attempts == max */
        { 4, 3, 1, RD_ELIG_NO, 0 },
        { 2, -1, -1, RD_ELIG_YES, 0 },           /* max NULL → 3, retryable NULL → true */
        { 3, -1, -1, RD_ELIG_NO, 0 },
        { -1, 1, 1, RD_ELIG_YES, 0 },            /* attempts NULL → 0 */
        { 1, 1, 1, RD_ELIG_NO, 0 },
        { 0, 0, 1, RD_ELIG_YES, 1 },             /* max_attempts 0: the first attempt runs */
        { -1, 0, -1, RD_ELIG_YES, 1 },           /* ... also with attempts NULL */
        { 0, 0, 0, RD_ELIG_YES, 1 },             /* ... also when not retryable */
        { 1, 0, 1, RD_ELIG_NO, 1 },              /* after it: no retry, still flagged */
        { 5, 0, 0, RD_ELIG_NO, 1 },
        { 0, 3, 0, RD_ELIG_YES, 1 },             /* retryable false, max > 1: flagged */
        { 1, 3, 0, RD_ELIG_NO, 1 },              /* behaves like max 1 */
        { 1, 1, 0, RD_ELIG_NO, 0 },              /* max 1: not flagged */
        { 0, 1, 0, RD_ELIG_YES, 0 },
        { 1, 2, 0, RD_ELIG_NO, 1 },
        { 9, 10, 1, RD_ELIG_YES, 0 },
        { 10, 10, 1, RD_ELIG_NO, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const tasker_case *c = &cases[i];
        rd_verdict v = retry_tasker(c->attempts, c->max, c->retryable);
        char ctx[200];
        snprintf(ctx, sizeof ctx, "tasker case %zu: %s", i, v.why);
        CHECK_MSG(v.verdict == c->want, ctx);
        CHECK_MSG(v.flagged == (c->flagged != 0), ctx);
        CHECK_MSG(v.why[0] != '\0', ctx);
    }
    double lo, hi;
    retry_tasker_eta(1000, 30, 2, &lo, &hi);
    CHECK_NEAR(lo, 1030);
    CHECK_NEAR(hi, 1030);
    retry_tasker_eta(1000, 0, 2, &lo, &hi);
    CHECK_NEAR(lo, 1000);
    retry_tasker_eta(1000, -1, 0, &lo, &hi);   /* 2^0 */
    CHECK_NEAR(lo, 1001);
    retry_tasker_eta(1000, -1, 3, &lo, &hi);   /* 2^3 */
    CHECK_NEAR(lo, 1008);
    CHECK_NEAR(hi, 1008);
    retry_tasker_eta(1000, -1, 8, &lo, &hi);   /* 256 */
    CHECK_NEAR(lo, 1256);
    retry_tasker_eta(1000, -1, 9, &lo, &hi);   /* 512 capped at 300 */
    CHECK_NEAR(lo, 1300);
    retry_tasker_eta(1000, -1, 5000, &lo, &hi);
    CHECK_NEAR(lo, 1300);
    retry_tasker_eta(0, 30, 1, &lo, &hi);      /* never attempted: no ETA */
    CHECK_NEAR(lo, 0);
    CHECK_NEAR(hi, 0);
}

typedef struct { const char *status; int count, max; rd_elig want; } simple_case;

static void test_attune(void)
{
    static const simple_case cases[] = {
        { "failed", 0, 3, RD_ELIG_YES },   { "failed", 2, 3, RD_ELIG_YES },
        { "failed", 3, 3, RD_ELIG_NO },    { "failed", 4, 3, RD_ELIG_NO },
        { "failed", 0, 0, RD_ELIG_NO },    { "failed", 0, -1, RD_ELIG_NO },
        { "failed", 0, 1, RD_ELIG_YES },   { "failed", 1, 1, RD_ELIG_NO },
        { "requested", 0, 3, RD_ELIG_NO }, { "scheduling", 0, 3, RD_ELIG_NO },
        { "scheduled", 0, 3, RD_ELIG_NO }, { "running", 0, 3, RD_ELIG_NO },
        { "completed", 0, 3, RD_ELIG_NO }, { "canceling", 0, 3, RD_ELIG_NO },
        { "cancelled", 0, 3, RD_ELIG_NO }, { "timeout", 0, 3, RD_ELIG_NO },
        { "abandoned", 0, 3, RD_ELIG_NO }, { NULL, 0, 3, RD_ELIG_NO },
        { "failed", -1, 3, RD_ELIG_YES },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const simple_case *c = &cases[i];
        rd_verdict v = retry_attune(c->status, c->count, c->max);
        char ctx[200];
        snprintf(ctx, sizeof ctx, "attune case %zu: %s", i, v.why);
        CHECK_MSG(v.verdict == c->want, ctx);
        CHECK_MSG(!v.flagged, ctx);
    }
    rd_attune_backoff b;
    attune_backoff_defaults(&b);
    CHECK_NEAR(b.base, 1);
    CHECK_NEAR(b.multiplier, 2);
    CHECK_NEAR(b.max, 300);
    CHECK_NEAR(b.jitter, 0.2);
    static const double want[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300 };
    for (int n = 0; n <= 10; n++) {
        double lo, hi;
        retry_attune_delay(&b, n, &lo, &hi);
        CHECK_NEAR(lo, want[n] * 0.8);
        CHECK_NEAR(hi, want[n] * 1.2);
    }
    double lo, hi;
    retry_attune_delay(&b, 100000, &lo, &hi);
    CHECK_NEAR(lo, 240);
    CHECK_NEAR(hi, 360);
    retry_attune_delay(&b, -5, &lo, &hi);
    CHECK_NEAR(lo, 0.8);
}

static void test_attune_reason(void)
{
    static const struct { const char *err, *want; } cases[] = {
        { "Worker queue TTL expired", "worker_unavailable" },
        { "worker unavailable: none registered", "worker_unavailable" },
        { "execution timeout after 30s", "queue_timeout" },
        { "request TIMED OUT", "queue_timeout" },
        { "worker heartbeat missed", "worker_heartbeat_stale" },
        { "stale worker", "worker_heartbeat_stale" },
        { "transient failure", "transient_error" },
        { "Temporary failure in name resolution", "transient_error" },
        { "connection reset by peer", "transient_error" },
        { "division by zero", "unknown" },
        { "", "unknown" },
        { NULL, "unknown" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK_STR(attune_classify_reason(cases[i].err), cases[i].want);
}

static void test_alakai(void)
{
    static const simple_case cases[] = {
        { "failed", 1, 1, RD_ELIG_YES },      /* attempt == MAX_RETRIES */
        { "failed", 2, 1, RD_ELIG_NO },       /* MAX_RETRIES + 1 */
        { "failed", 1, -1, RD_ELIG_YES },     /* default 1 */
        { "failed", 2, -1, RD_ELIG_NO },
        { "failed", 3, 3, RD_ELIG_YES },
        { "failed", 4, 3, RD_ELIG_NO },
        { "failed", 1, 0, RD_ELIG_NO },
        { "running", 1, 1, RD_ELIG_NO },
        { "succeeded", 1, 1, RD_ELIG_NO },
        { "lost", 1, 1, RD_ELIG_NO },
        { "FAILED", 1, 1, RD_ELIG_NO },       /* alakai statuses are lower-case */
        { "failed", 0, 1, RD_ELIG_UNKNOWN },  /* attempts start at 1 */
        { NULL, 1, 1, RD_ELIG_NO },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const simple_case *c = &cases[i];
        rd_verdict v = retry_alakai(c->status, c->count, c->max);
        char ctx[200];
        snprintf(ctx, sizeof ctx, "alakai case %zu: %s", i, v.why);
        CHECK_MSG(v.verdict == c->want, ctx);
    }
    /* only the newest attempt counts: an older failed attempt does not make a
     * running newest attempt eligible (the caller passes the newest) */
    CHECK(retry_alakai("running", 2, 3).verdict == RD_ELIG_NO);
}

static void test_openagents(void)
{
    static const simple_case cases[] = {
        { "failed", 0, 3, RD_ELIG_YES }, { "FAILED", 0, 3, RD_ELIG_YES },
        { "Failed", 2, 3, RD_ELIG_YES }, { "failed", 3, 3, RD_ELIG_NO },
        { "FAILED", 4, 3, RD_ELIG_NO },  { "failed", 0, 0, RD_ELIG_NO },
        { "failed", 0, -1, RD_ELIG_NO }, { "completed", 0, 3, RD_ELIG_NO },
        { "QUEUED", 0, 3, RD_ELIG_NO },  { "running", 0, 3, RD_ELIG_NO },
        { "failed", 0, 1, RD_ELIG_YES }, { "failed", 1, 1, RD_ELIG_NO },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const simple_case *c = &cases[i];
        rd_verdict v = retry_openagents(c->status, c->count, c->max);
        char ctx[200];
        snprintf(ctx, sizeof ctx, "openagents case %zu: %s", i, v.why);
        CHECK_MSG(v.verdict == c->want, ctx);
    }
}

typedef struct { const char *policy; int delay, count; int ok; double lo, hi; } policy_case;

static void test_openagents_delay(void)
{
    static const policy_case cases[] = {
        { "{\"type\":\"fixed_delay\",\"delay\":30,\"jitter\":0}", -1, 0, 1, 30, 30 },
        { "{\"type\":\"fixed_delay\",\"delay\":30,\"jitter\":0}", -1, 5, 1, 30, 30 },
        { "{\"type\":\"fixed_delay\",\"delay\":30,\"jitter\":0.1}", -1, 0, 1, 27, 33 },
        { "{\"type\":\"fixed_delay\"}", -1, 0, 1, 30, 30 },
        { "{\"type\":\"fixed_delay\",\"delay\":1,\"jitter\":0.5}", -1, 0, 1, 1, 1.5 },
        { "{\"type\":\"fixed_delay\",\"delay\":10,\"jitter\":5}", -1, 0, 1, 1, 20 },
        { "{\"type\":\"exponential_backoff\",\"initial_delay\":5,\"max_delay\":300,"
          "\"multiplier\":2,\"jitter\":0}", -1, 0, 1, 5, 5 },
        { "{\"type\":\"exponential_backoff\",\"initial_delay\":5,\"max_delay\":300,"
          "\"multiplier\":2,\"jitter\":0}", -1, 1, 1, 10, 10 },
        { "{\"type\":\"exponential_backoff\",\"initial_delay\":5,\"max_delay\":300,"
          "\"multiplier\":2,\"jitter\":0}", -1, 5, 1, 160, 160 },
        { "{\"type\":\"exponential_backoff\",\"initial_delay\":5,\"max_delay\":300,"
          "\"multiplier\":2,\"jitter\":0}", -1, 6, 1, 300, 300 },
        { "{\"type\":\"exponential_backoff\",\"initial_delay\":5,\"max_delay\":300,"
          "\"multiplier\":2,\"jitter\":0.2}", -1, 2, 1, 16, 24 },
        { "{\"type\":\"exponential_backoff\"}", -1, 100000, 1, 300, 300 },
        { "{\"type\":\"weird\"}", -1, 0, 0, 0, 0 },
        { "{\"type\":\"weird\"}", 45, 0, 1, 45, 45 },
        { "{not json", -1, 0, 0, 0, 0 },
        { "{not json", 12, 0, 1, 12, 12 },
        { "[1,2]", -1, 0, 0, 0, 0 },
        { "{\"type\":\"fixed_delay\",\"delay\":\"30\"}", -1, 0, 0, 0, 0 },
        { "{\"type\":\"fixed_delay\",\"delay\":-3}", 7, 0, 1, 7, 7 },
        { "", -1, 0, 0, 0, 0 },
        { NULL, -1, 0, 0, 0, 0 },
        { NULL, 0, 0, 1, 0, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const policy_case *c = &cases[i];
        double lo = -9, hi = -9;
        bool ok = retry_openagents_delay(c->policy, c->delay, c->count, &lo, &hi);
        char ctx[200];
        snprintf(ctx, sizeof ctx, "policy case %zu", i);
        CHECK_MSG(ok == (c->ok != 0), ctx);
        CHECK_MSG(fabs(lo - c->lo) < 1e-9 && fabs(hi - c->hi) < 1e-9, ctx);
    }
}

/* A finished or in-flight step: no, and the reason says what is true of it, whatever the
 * budget (issue 34: a complete step read "budget exhausted (1/1)"). */
static void test_tasker_step(void)
{
    static const struct { const char *state; int attempts, max; rd_elig want; const char *why; } cases[] = {
        { "complete", 1, 1, RD_ELIG_NO, "complete" },
        { "complete", 1, 3, RD_ELIG_NO, "complete" },
        { "in_progress", 1, 1, RD_ELIG_NO, "in progress" },
        { "in_progress", 0, 3, RD_ELIG_NO, "in progress" },
        { "resolved_manually", 3, 3, RD_ELIG_NO, "resolved manually" },
        { "cancelled", 0, 0, RD_ELIG_NO, "cancelled" },
        { "enqueued", 0, 3, RD_ELIG_NO, "enqueued: in flight" },
        { "enqueued_for_orchestration", 2, 3, RD_ELIG_NO, "in flight: enqueued for orchestration" },
        { "error", 1, 1, RD_ELIG_NO, "budget exhausted (1/1)" },
        { "error", 1, 3, RD_ELIG_YES, "attempt 2 of 3 allowed" },
        { "waiting_for_retry", 1, 3, RD_ELIG_YES, "attempt 2 of 3 allowed" },
        { NULL, 0, 3, RD_ELIG_YES, "not attempted yet (0/3)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rd_verdict v = retry_tasker_step(cases[i].state, cases[i].attempts, cases[i].max, 1);
        CHECK(v.verdict == cases[i].want);
        CHECK_STR(v.why, cases[i].why);
        CHECK(!v.flagged);
    }
}

int main(void)
{
    test_tasker();
    test_tasker_step();
    test_attune();
    test_attune_reason();
    test_alakai();
    test_openagents();
    test_openagents_delay();
    return check_done("test_retry");
}
