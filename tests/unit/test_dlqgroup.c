/* The DLQ view's grouping (core/dlqgroup.h): by reason, by queue, largest first. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dlqgroup.h"
#include "xalloc.h"

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

/* The store's counts (every entry) merged with the broker's peeked entries, keyed alike. */
static void test_group_with_store(void)
{
    rd_dlq_sgroup items[] = {
        {DLQ_BY_REASON, xstrdup("max_retries_exceeded"), 67, 100, 400},
        {DLQ_BY_REASON, xstrdup("rejected"), 2, 20, 30},
        {DLQ_BY_QUEUE, xstrdup("tasks_dlq"), 69, 20, 400},
    };
    rd_dlq_sgroups *sg = xcalloc(1, sizeof *sg);
    sg->items = xcalloc(3, sizeof *sg->items);
    memcpy(sg->items, items, sizeof items);
    sg->n = 3;
    rd_dlq_entry e[] = {
        {.reason = rej, .queue = qa, .first_death_at = 5, .last_death_at = 500},
        {.reason = expd, .queue = qa, .first_death_at = 10, .last_death_at = 20},
    };
    const rd_dlq_entry *rows[] = {&e[0], &e[1]};
    rd_dlq_group *g;
    size_t n = dlq_group_with(sg, rows, 2, DLQ_BY_REASON, &g);
    CHECK(n == 3);
    CHECK_STR(g[0].key, "max_retries_exceeded");
    CHECK(g[0].count == 67 && g[0].first == 100 && g[0].last == 400);
    CHECK_STR(g[1].key, "rejected");
    CHECK(g[1].count == 3 && g[1].first == 5 && g[1].last == 500);
    CHECK_STR(g[2].key, "expired");
    free(g);
    n = dlq_group_with(sg, rows, 2, DLQ_BY_QUEUE, &g);
    CHECK(n == 2);
    CHECK_STR(g[0].key, "tasks_dlq");
    CHECK(g[0].count == 69);
    CHECK_STR(g[1].key, "a_dlq");
    CHECK(g[1].count == 2);
    free(g);
    n = dlq_group_with(NULL, rows, 2, DLQ_BY_REASON, &g);   /* no store counts: the rows' */
    CHECK(n == 2 && g[0].count == 1);
    free(g);
    dlq_sgroups_free(sg);
}

int main(void)
{
    test_group();
    test_group_with_store();
    return check_done("dlqgroup");
}
