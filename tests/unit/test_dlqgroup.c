/* The DLQ view's grouping (core/dlqgroup.h): by reason, by queue, largest first. */
#include <stdlib.h>

#include "check.h"
#include "dlqgroup.h"

static char rej[] = "rejected", expd[] = "expired", qa[] = "a_dlq", qb[] = "b_dlq", none[] = "";

static void test_group(void)
{
    rd_dlq_entry e[] = {
        {.reason = rej, .queue = qa, .first_death_at = 50, .last_death_at = 60},
        {.reason = expd, .queue = qa, .first_death_at = 10, .last_death_at = 20},
        {.reason = rej, .queue = qb, .first_death_at = 30, .last_death_at = 90},
        {.reason = NULL, .queue = none, .first_death_at = 0, .last_death_at = 0},
        {.reason = rej, .queue = qb, .first_death_at = 0, .last_death_at = 5},
    };
    const rd_dlq_entry *rows[5];
    for (int i = 0; i < 5; i++)
        rows[i] = &e[i];
    static const struct { rd_dlq_by by; size_t n; const char *key[3]; size_t count[3]; double first[3], last[3]; } cases[] = {
        {DLQ_BY_REASON, 3, {"rejected", "-", "expired"}, {3, 1, 1}, {30, 0, 10}, {90, 0, 20}},
        {DLQ_BY_QUEUE, 3, {"a_dlq", "b_dlq", "-"}, {2, 2, 1}, {10, 30, 0}, {60, 90, 0}},
        {DLQ_BY_NONE, 0, {NULL}, {0}, {0}, {0}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        rd_dlq_group *g;
        size_t n = dlq_group(rows, 5, cases[c].by, &g);
        CHECK_MSG(n == cases[c].n, dlq_by_name(cases[c].by));
        for (size_t i = 0; i < n && i < 3; i++) {
            CHECK_STR(g[i].key, cases[c].key[i]);
            CHECK(g[i].count == cases[c].count[i]);
            CHECK_NEAR(g[i].first, cases[c].first[i]);
            CHECK_NEAR(g[i].last, cases[c].last[i]);
        }
        free(g);
    }
    rd_dlq_group *g;
    CHECK(dlq_group(rows, 0, DLQ_BY_REASON, &g) == 0);
    free(g);
    CHECK_STR(dlq_by_name(DLQ_BY_REASON), "reason");
    CHECK_STR(dlq_by_name(DLQ_BY_QUEUE), "queue");
}

int main(void)
{
    test_group();
    return check_done("dlqgroup");
}
