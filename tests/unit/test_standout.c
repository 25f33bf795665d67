/* core/standout: the rule of what stands out about a group against its window, one row
 * per boundary — the member and share minimums, the lift, the window's minimum, the
 * ranking, a host saying what its worker says, a baseline that saw fewer than the group —
 * and the texts the console and the text snapshot show. */
#include "standout.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

/* A window of `total` executions, worker w1..w4 and action a/b as given. */
static so_base *window(size_t total, const size_t *workers, size_t nw, const size_t *acts, size_t na)
{
    so_base *b = so_base_new();
    char v[16];
    for (size_t i = 0; i < nw; i++) {
        snprintf(v, sizeof v, "w%zu", i + 1);
        so_base_add(b, SO_WORKER, v, workers[i]);
        so_base_host(b, v, i == 0 ? "host-a" : "host-b");
    }
    for (size_t i = 0; i < na; i++) {
        snprintf(v, sizeof v, "%c", (char)('a' + i));
        so_base_add(b, SO_ACTION, v, acts[i]);
    }
    so_base_total(b, total, false);
    so_base_finish(b);
    return b;
}

static void test_rule(void)
{
    static const size_t wk[] = { 10, 30, 30, 30 }, ac[] = { 50, 50 };
    so_base *b = window(100, wk, 4, ac, 2);
    CHECK(so_base_records(b, SO_WORKER) && so_base_records(b, SO_HOST) && so_base_records(b, SO_ACTION));
    CHECK(!so_base_records(b, SO_QUEUE) && !so_base_records(b, SO_VERSION));
    CHECK(so_counts_get(NULL, SO_WORKER, "w1") == 0);
    static const struct {
        size_t n_w1, members;      /* failures on w1 (share 10 % of the window) / in all */
        size_t listed;             /* w1 listed: 1, not: 0 */
        double lift;
    } rows[] = {
        { 4, 4, 0, 0 },            /* below SO_MIN_MEMBERS: the group is too small */
        { 4, 10, 0, 0 },           /* 4 members: below 5 */
        { 5, 10, 1, 5.0 },         /* 5 of 10: share 50 % over 10 % */
        { 5, 26, 0, 0 },           /* 5 of 26 = 19.2 %: below 20 % of the group */
        { 5, 25, 1, 2.0 },         /* 20 %, lift exactly 2 */
        { 6, 31, 0, 0 },           /* 19.4 % */
        { 10, 10, 1, 10.0 },       /* all on w1: lift 10 (10 of 100; the group is among them) */
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        so_counts *g = so_counts_new();
        so_counts_add(g, SO_WORKER, "w1", rows[i].n_w1);
        so_counts_add(g, SO_WORKER, "w2", rows[i].members - rows[i].n_w1);
        so_counts_finish(g);
        rd_standout *l;
        size_t n;
        so_state st = so_compute(b, g, rows[i].members, &l, &n);
        char msg[64];
        snprintf(msg, sizeof msg, "row %zu", i);
        CHECK_MSG(st == (rows[i].members < SO_MIN_MEMBERS ? SO_FEW_MEMBERS : SO_LISTED), msg);
        size_t found = 0;
        for (size_t k = 0; k < n; k++)
            if (l[k].dim == SO_WORKER && strcmp(l[k].value, "w1") == 0) {
                found = 1;
                CHECK_MSG(l[k].lift > rows[i].lift - 1e-9 && l[k].lift < rows[i].lift + 1e-9, msg);
            }
        CHECK_MSG(found == rows[i].listed, msg);
        so_list_free(l, n);
        so_counts_free(g);
    }
    so_base_free(b);
}

static void test_rank_host_and_window(void)
{
    /* w1 on host-a alone: a group all on w1 lists the worker, not the host too */
    static const size_t wk[] = { 10, 30, 30, 30 }, ac[] = { 80, 20 };
    so_base *b = window(100, wk, 4, ac, 2);
    CHECK_STR(so_base_host_of(b, "w1"), "host-a");
    CHECK(so_base_host_of(b, "w9") == NULL);
    so_counts *g = so_counts_new();
    so_counts_add(g, SO_WORKER, "w1", 9);
    so_counts_add(g, SO_WORKER, "w2", 1);
    so_counts_add(g, SO_HOST, "host-a", 9);
    so_counts_add(g, SO_HOST, "host-b", 1);
    so_counts_add(g, SO_ACTION, "b", 10);       /* 100 % over 20 %: lift 5 */
    so_counts_add(g, SO_ACTION, "", 3);         /* no value: ignored */
    so_counts_add(g, SO_ACTION, NULL, 3);
    so_counts_finish(g);
    rd_standout *l;
    size_t n;
    CHECK(so_compute(b, g, 10, &l, &n) == SO_LISTED);
    CHECK(n == 2);
    CHECK(l[0].dim == SO_WORKER && strcmp(l[0].value, "w1") == 0 && l[0].n_group == 9 && l[0].n_window == 10);
    CHECK(l[1].dim == SO_ACTION && strcmp(l[1].value, "b") == 0 && l[1].lift > 4.99 && l[1].lift < 5.01);
    char t[200];
    so_item_text(&l[0], 3600, true, t, sizeof t);
    CHECK_STR(t, "90 % on worker w1 (10 % of the hour)");
    so_item_text(&l[1], 3600, false, t, sizeof t);
    CHECK_STR(t, "100 % b (20 %)");
    so_item_text(&l[1], 21600, true, t, sizeof t);
    CHECK_STR(t, "100 % b (20 % of the window)");
    so_list_free(l, n);
    /* a window of 19 executions is not compared; no baseline is unknown */
    so_base_total(b, SO_MIN_WINDOW - 1, false);
    CHECK(so_compute(b, g, 10, &l, &n) == SO_FEW_WINDOW && n == 0 && !l);
    so_state_text(SO_FEW_WINDOW, b, 10, t, sizeof t);
    CHECK_STR(t, "too few executions in the window to compare (19 < 20)");
    so_state_text(SO_FEW_MEMBERS, b, 3, t, sizeof t);
    CHECK_STR(t, "too few failures to compare (3 < 5)");
    CHECK(so_compute(NULL, g, 10, &l, &n) == SO_UNKNOWN);
    so_counts_free(g);
    so_base_free(b);
}

static void test_spread_and_short_baseline(void)
{
    static const size_t wk[] = { 25, 25, 25, 25 }, ac[] = { 50, 50 };
    so_base *b = window(100, wk, 4, ac, 2);
    so_counts *g = so_counts_new();         /* spread like the window: nothing */
    for (int i = 1; i <= 4; i++) {
        char v[8];
        snprintf(v, sizeof v, "w%d", i);
        so_counts_add(g, SO_WORKER, v, 5);
    }
    so_counts_add(g, SO_ACTION, "a", 10);
    so_counts_add(g, SO_ACTION, "b", 10);
    so_counts_finish(g);
    rd_standout *l;
    size_t n;
    CHECK(so_compute(b, g, 20, &l, &n) == SO_LISTED && n == 0 && !l);
    so_counts_free(g);
    /* a value the baseline did not see (read a moment apart): counted as the group's own */
    g = so_counts_new();
    so_counts_add(g, SO_ACTION, "new", 8);
    so_counts_finish(g);
    CHECK(so_compute(b, g, 8, &l, &n) == SO_LISTED && n == 1);
    CHECK(l[0].n_window == 8 && l[0].in_window > 0.079 && l[0].in_window < 0.081);
    so_list_free(l, n);
    so_counts_free(g);
    so_base_free(b);
    so_dim d;
    CHECK(so_dim_parse("attempt", &d) && d == SO_ATTEMPT);
    CHECK(!so_dim_parse("nope", &d) && !so_dim_parse(NULL, &d));
}

int main(void)
{
    test_rule();
    test_rank_host_and_window();
    test_spread_and_short_baseline();
    return check_done("standout");
}
