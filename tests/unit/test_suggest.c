/* core/suggest: distances, the threshold, the order, the text. */
#include "suggest.h"

#include <string.h>

#include "check.h"

static void test_distance(void)
{
    CHECK(suggest_distance("", "") == 0);
    CHECK(suggest_distance("abc", "") == 3);
    CHECK(suggest_distance("faild", "failed") == 1);      /* a deletion */
    CHECK(suggest_distance("brokr", "broker") == 1);
    CHECK(suggest_distance("wokers", "workers") == 1);
    CHECK(suggest_distance("sytsem", "system") == 1);     /* a transposition counts once */
    CHECK(suggest_distance("kitten", "sitting") == 3);
    CHECK(suggest_distance("FAILED", "failed") == 0);     /* case folded */
}

static void test_text(void)
{
    char buf[200];
    static const char *const systems[] = { "attune1", "attune2", "tasker", "x" };
    CHECK_STR(suggest_among("atune1", systems, 4, buf, sizeof buf), " (did you mean attune1?)");
    CHECK_STR(suggest_among("attune", systems, 4, buf, sizeof buf),
              " (did you mean attune1 or attune2?)");
    CHECK_STR(suggest_among("zzzzzz", systems, 4, buf, sizeof buf), "");
    CHECK_STR(suggest_among("attune3", systems, 4, buf, sizeof buf),
              " (did you mean attune1 or attune2?)");
    CHECK_STR(suggest_among("atune", systems, 4, buf, sizeof buf), "");    /* 2 > 5 / 3 */
    CHECK_STR(suggest_among("", systems, 4, buf, sizeof buf), "");
    static const char *const statuses[] = { "requested", "scheduled", "running", "completed",
                                            "failed", "cancelled", "timeout", "abandoned" };
    CHECK_STR(suggest_among("faild", statuses, 8, buf, sizeof buf), " (did you mean failed?)");
    CHECK_STR(suggest_among("Failed", statuses, 8, buf, sizeof buf), " (did you mean failed?)");
    CHECK_STR(suggest_among("xyz", statuses, 8, buf, sizeof buf), "");
    static const char *const keys[] = { "poll", "pool", "pull", "pol2", "pol3", "dsn" };
    /* only the closest, at most three, in the order given */
    CHECK_STR(suggest_among("pol", keys, 6, buf, sizeof buf),
              " (did you mean poll, pool or pol2?)");
    CHECK_STR(suggest_among("pol2x", keys, 6, buf, sizeof buf), " (did you mean pol2?)");
    static const char *const views[] = { "executions", "execution", "workers", "queues" };
    CHECK_STR(suggest_among("exec", views, 4, buf, sizeof buf),
              " (did you mean executions or execution?)");         /* a prefix */
    CHECK_STR(suggest_among("wokers", views, 4, buf, sizeof buf), " (did you mean workers?)");
    /* a name with a control character is never offered */
    static const char *const bad[] = { "fai\x1b" "led" };
    CHECK_STR(suggest_among("failed", bad, 1, buf, sizeof buf), "");
    /* a short buffer stays terminated */
    char tiny[8];
    suggest_among("faild", statuses, 8, tiny, sizeof tiny);
    CHECK(strlen(tiny) == 7);
}

int main(void)
{
    test_distance();
    test_text();
    return check_done("suggest");
}
