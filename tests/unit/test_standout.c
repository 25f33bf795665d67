/* core/standout: the rule of what stands out about a group against its window, one row
 * per boundary — the member and share minimums, the lift, the window's minimum, the
 * ranking, a host saying what its worker says, a baseline that saw fewer than the group —
 * and the texts the console and the text snapshot show. */
#include "standout.h"

#include <math.h>
#include <stdio.h>
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

/* One group: n_a failures on worker a, the rest on w2; the window has wa executions on a. */
static so_state run(const so_base *b, const char *a, size_t n_a, size_t members, double *lift, bool *listed)
{
    so_counts *g = so_counts_new();
    so_counts_add(g, SO_WORKER, a, n_a);
    so_counts_add(g, SO_WORKER, "w2", members - n_a);
    so_counts_finish(g);
    rd_standout *l;
    size_t n;
    so_state st = so_compute(b, g, members, &l, &n);
    *listed = false;
    for (size_t k = 0; k < n; k++)
        if (l[k].dim == SO_WORKER && strcmp(l[k].value, a) == 0) {
            *listed = true;
            *lift = l[k].lift;
        }
    so_list_free(l, n);
    so_counts_free(g);
    return st;
}

static void test_rule(void)
{
    /* the window: 100 executions, w1 30 of them, w9 exactly the group's own on it */
    static const size_t wk[] = { 30, 30, 20, 20 }, ac[] = { 50, 50 };
    so_base *b = window(100, wk, 4, ac, 2);
    CHECK(so_base_records(b, SO_WORKER) && so_base_records(b, SO_HOST) && so_base_records(b, SO_ACTION));
    CHECK(!so_base_records(b, SO_QUEUE) && !so_base_records(b, SO_VERSION));
    CHECK(so_counts_get(NULL, SO_WORKER, "w1") == 0);
    static const struct {
        const char *w;
        size_t n_w, members;
        so_state st;
        bool listed;
        double lift;               /* in_group / share of the window's others; 0: infinite */
    } rows[] = {
        { "w1", 4, 4, SO_FEW_MEMBERS, false, 0 },     /* the group too small */
        { "w1", 4, 10, SO_LISTED, false, 0 },         /* 4 members on it: below 5 */
        { "w1", 10, 20, SO_LISTED, true, 2.0 },       /* 50 % over 20/80: lift exactly 2 */
        { "w1", 9, 20, SO_LISTED, false, 0 },         /* 45 % over 21/80: 1.71 */
        { "w9", 5, 25, SO_LISTED, true, 0 },          /* 20 % of the group, none of the others */
        { "w9", 5, 26, SO_LISTED, false, 0 },         /* 19.2 % */
        { "w9", 6, 31, SO_LISTED, false, 0 },         /* 19.4 % */
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char msg[64];
        snprintf(msg, sizeof msg, "row %zu", i);
        so_base *bb = b;
        if (strcmp(rows[i].w, "w9") == 0) {          /* w9: only the group's own failures */
            bb = so_base_new();
            so_base_add(bb, SO_WORKER, "w9", rows[i].n_w);
            so_base_add(bb, SO_WORKER, "w2", 100 - rows[i].n_w);
            so_base_total(bb, 100, false);
            so_base_finish(bb);
        }
        double lift = -1;
        bool listed;
        CHECK_MSG(run(bb, rows[i].w, rows[i].n_w, rows[i].members, &lift, &listed) == rows[i].st, msg);
        CHECK_MSG(listed == rows[i].listed, msg);
        if (listed && rows[i].lift > 0)
            CHECK_MSG(fabs(lift - rows[i].lift) < 1e-9, msg);
        if (listed && rows[i].lift == 0)
            CHECK_MSG(isinf(lift), msg);
        if (bb != b)
            so_base_free(bb);
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
    /* w1: 90 % against 1 of the 90 others (lift 81); b: 100 % against 10 of 90 (9) */
    CHECK(l[0].dim == SO_WORKER && strcmp(l[0].value, "w1") == 0 && l[0].n_group == 9 && l[0].n_window == 10);
    CHECK(fabs(l[0].lift - 81.0) < 1e-9);
    CHECK(l[1].dim == SO_ACTION && strcmp(l[1].value, "b") == 0 && fabs(l[1].lift - 9.0) < 1e-9);
    char t[200];
    so_item_text(&l[0], 3600, true, t, sizeof t);
    CHECK_STR(t, "90 % on worker w1 (1.1 % of the hour's other executions)");
    so_item_text(&l[1], 3600, false, t, sizeof t);
    CHECK_STR(t, "100 % b (11 %)");
    so_item_text(&l[1], 21600, true, t, sizeof t);
    CHECK_STR(t, "100 % b (11 % of the window's other executions)");
    so_list_free(l, n);
    /* 19 other executions are not compared; no baseline is unknown */
    so_base_total(b, SO_MIN_WINDOW - 1 + 10, false);
    CHECK(so_compute(b, g, 10, &l, &n) == SO_FEW_WINDOW && n == 0 && !l);
    so_state_text(SO_FEW_WINDOW, b, 10, t, sizeof t);
    CHECK_STR(t, "too few other executions in the window to compare (19 < 20)");
    so_base_total(b, SO_MIN_WINDOW + 10, false);
    CHECK(so_compute(b, g, 10, &l, &n) == SO_LISTED);
    so_list_free(l, n);
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
    CHECK(l[0].n_window == 8 && l[0].in_window == 0 && isinf(l[0].lift));
    char t[200];
    so_item_text(&l[0], 3600, true, t, sizeof t);
    CHECK_STR(t, "100 % new (0 % of the hour's other executions)");
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
