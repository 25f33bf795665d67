/* The last hour's drawing helpers (histdraw.h): the backlog series (the queues' sum, a gap
 * only where every queue is one) and the values on the axes. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "histdraw.h"

static const double NOW = 1767225600;

static void add(rd_history *h, double t, double q0, double q1)
{
    const char *names[] = {"a", "b"};
    double depth[] = {q0, q1};
    rd_hist_sample s = {.fail_rate = 1, .eligible = 0, .dlq = 0, .unhealthy = 0,
                        .nq = 2, .qnames = names, .qdepth = depth};
    history_add(h, t, &s);
}

static void test_backlog(void)
{
    static rd_history h;
    float v[HIST_N];
    history_init(&h);
    CHECK(!histd_series(&h, HISTD_BACKLOG, NOW, v));   /* nothing recorded */
    CHECK(!histd_series(NULL, HIST_FAIL_RATE, NOW, v));
    add(&h, NOW - 20, 3, 4);
    add(&h, NOW - 10, 5, -1);   /* b unknown: the sum of what is known */
    CHECK(histd_series(&h, HISTD_BACKLOG, NOW, v));
    CHECK(v[HIST_N - 3] == 7);
    CHECK(v[HIST_N - 2] == 5);
    CHECK(isnan(v[HIST_N - 1]));   /* no sample at now's step: a gap, not 0 */
    CHECK(isnan(v[0]));
    /* the first sample's deepest queue (b, 4) takes the first queue slot, a the next; each
     * series holds its own queue's depths */
    CHECK(histd_queue(&h, "b") == HIST_FIXED + 0);
    CHECK(histd_queue(&h, "a") == HIST_FIXED + 1);
    history_series(&h, histd_queue(&h, "a"), NOW, v, HIST_N);
    CHECK(v[HIST_N - 3] == 3 && v[HIST_N - 2] == 5);
    history_series(&h, histd_queue(&h, "b"), NOW, v, HIST_N);
    CHECK(v[HIST_N - 3] == 4 && isnan(v[HIST_N - 2]));
    CHECK(histd_queue(&h, "zz") == -1 && histd_queue(NULL, "a") == -1);
    CHECK(histd_queues(&h) && !histd_queues(NULL));
}

static void test_values(void)
{
    static const struct { float v; bool rate; const char *want; } cases[] = {
        {0, true, "0.0"}, {13.94f, true, "13.9"}, {99.9f, true, "99.9"}, {150, true, "150"},
        {0, false, "0"}, {9999, false, "9999"}, {12345, false, "12.3k"},
        {2500000, false, "2.5M"}, {NAN, false, "-"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[16];
        histd_value(cases[i].v, cases[i].rate, out, sizeof out);
        CHECK_STR(out, cases[i].want);
    }
}

int main(void)
{
    test_backlog();
    test_values();
    return check_done("histdraw");
}
