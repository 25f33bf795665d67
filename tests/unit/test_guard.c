#include "guard.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

/* One row per boundary: eligibility x loop count -> kind, sent with/without override. */
static void test_kind(void)
{
    static const struct {
        rd_elig elig;
        int loops;
        rd_guard_kind want;
        const char *override_name;
    } cases[] = {
        {RD_ELIG_YES, 0, GUARD_SEND, NULL},
        {RD_ELIG_YES, 1, GUARD_LOOP, "loop_retry"},
        {RD_ELIG_YES, -1, GUARD_SEND, NULL},
        {RD_ELIG_NO, 0, GUARD_INELIGIBLE, "ineligible"},
        {RD_ELIG_NO, 2, GUARD_INELIGIBLE, "ineligible"},       /* ineligible wins over a loop */
        {RD_ELIG_UNKNOWN, 0, GUARD_INELIGIBLE, "ineligible"},  /* unknown is never sent unasked */
        {RD_ELIG_CONFIG_ERROR, 0, GUARD_INELIGIBLE, "ineligible"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rd_guard_item it = {"x", cases[i].elig, "why", cases[i].loops};
        char ctx[32];
        snprintf(ctx, sizeof ctx, "case %zu", i);
        rd_guard_kind k = guard_kind(&it);
        CHECK_MSG(k == cases[i].want, ctx);
        CHECK_MSG(guard_sends(k, false) == (cases[i].want == GUARD_SEND), ctx);
        CHECK_MSG(guard_sends(k, true), ctx);
        CHECK_STR(guard_override_name(k), cases[i].override_name);
    }
}

static void test_count_and_text(void)
{
    rd_guard_item items[] = {
        {"400", RD_ELIG_YES, "retry 1 of 3 allowed", 0},
        {"301", RD_ELIG_NO, "status completed (only failed executions retry)", 0},
        {"200", RD_ELIG_NO, "budget exhausted (3/3 retries)", 0},
        {"905", RD_ELIG_YES, "retry 2 of 3 allowed", 1},
        {"77", RD_ELIG_UNKNOWN, NULL, 0},
    };
    rd_guard_counts c = guard_count(items, 5);
    CHECK(c.total == 5 && c.eligible == 2 && c.ineligible == 3 && c.loops == 1 && c.send == 1);
    char line[160];
    guard_breakdown(&c, line, sizeof line);
    CHECK_STR(line, "breakdown: 2 eligible, 3 ineligible (not sent), 1 loop retry");
    c.loops = 0;
    guard_breakdown(&c, line, sizeof line);
    CHECK_STR(line, "breakdown: 2 eligible, 3 ineligible (not sent), 0 loop retries");
    guard_item_line(&items[0], line, sizeof line);
    CHECK_STR(line, "");
    guard_item_line(&items[1], line, sizeof line);
    CHECK_STR(line, "301: not sent: status completed (only failed executions retry)");
    guard_item_line(&items[3], line, sizeof line);
    CHECK_STR(line, "905: manual retry #2 of the same failure");
    guard_item_line(&items[4], line, sizeof line);
    CHECK_STR(line, "77: not sent: retry eligibility unknown");
    rd_guard_counts none = guard_count(NULL, 0);
    CHECK(none.total == 0 && none.send == 0 && none.ineligible == 0);
}

/* The send-time guard's reasons: each system's verdict texts, one row each. */
static void test_held_reason(void)
{
    static const struct { const char *why, *want; } cases[] = {
        {"superseded by a later attempt", "superseded"},            /* PostgreSQL rows */
        {"superseded by attempt 3", "superseded"},                  /* Alakai */
        {"budget exhausted (3/3 retries)", "budget exhausted"},     /* Attune, OpenAgents */
        {"budget exhausted (attempt 2 > MAX_RETRIES 1)", "budget exhausted"},
        {"no retry budget (max_retries 0)", "budget exhausted"},
        {"no retry budget (max_retries NULL)", "budget exhausted"},
        {"max_attempts = 0 allows no retry (config warning)", "budget exhausted"},
        {"not retryable (max_attempts 3)", "budget exhausted"},     /* Tasker */
        {"status completed (only failed executions retry)", "now completed"},
        {"status queued (only failed jobs retry)", "now queued"},
        {"status unknown (only failed executions retry)", "now unknown"},
        {"newest attempt is succeeded", "now succeeded"},           /* Alakai */
        {"complete", "complete"},                                   /* Tasker's settled states */
        {"in progress", "in progress"},
        {"enqueued: in flight", "enqueued"},
        {"no such execution in the store", "not in the store"},
        {"retry_count unreadable", "retry_count unreadable"},
        {"", "eligibility unknown"},
        {NULL, "eligibility unknown"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[80];
        guard_held_reason(cases[i].why, out, sizeof out);
        CHECK_STR(out, cases[i].want);
    }
    char small[5];
    guard_held_reason("superseded by attempt 3", small, sizeof small);
    CHECK_STR(small, "supe");
}

int main(void)
{
    test_kind();
    test_held_reason();
    test_count_and_text();
    return check_done("test_guard");
}
