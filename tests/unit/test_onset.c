/* core/onset and the ring's events (history.h): a group's onset against the history, one
 * row per boundary — the window's first minute, no samples, the minute before, a queue's
 * jump at and below its factor and minimum, the DLQ, other groups within a minute — its
 * text, and the events kept across a save and a load. */
#include "onset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static const double T0 = 1800000000.0;    /* a minute's start: 2027-01-15 08:00:00 UTC */

static void fill(rd_history *h, double from, double to, double dlq_before, double dlq_after, double q_before,
                 double q_after, double switch_at)
{
    const char *names[] = { "billing" };
    for (double t = from; t < to; t += HIST_STEP_S) {
        double depth = t < switch_at ? q_before : q_after;
        rd_hist_sample s = { .fail_rate = 1, .eligible = 0, .dlq = t < switch_at ? dlq_before : dlq_after,
                             .unhealthy = 0, .nq = 1, .qnames = names, .qdepth = &depth };
        history_add(h, t, &s);
    }
}

static void test_onset_rows(void)
{
    static rd_history h;
    history_init(&h);
    double onset = T0 + 600;                       /* the group's first minute */
    fill(&h, T0, T0 + 900, 3, 7, 10, 50, onset - 20);
    history_event(&h, onset - 50, HEV_UNHEALTHY, "w-7");
    history_event(&h, onset - 130, HEV_UNHEALTHY, "w-early");      /* before the minute before */
    history_event(&h, onset + 60, HEV_DRAINING, "w-late");         /* after the onset minute */
    rd_group g[4] = {
        { .fp = "a", .first_seen = onset + 7, .count = 9 },
        { .fp = "b", .first_seen = onset + 59, .count = 3 },       /* the same minute */
        { .fp = "c", .first_seen = onset + 61, .count = 3 },       /* the next minute: within 60 s */
        { .fp = "d", .first_seen = onset + 121, .count = 3 },      /* two minutes on: not counted */
    };
    rd_onset o;
    onset_of(&h, g, 4, 0, T0 - 3000, &o);
    CHECK(o.state == ONSET_KNOWN && o.at == onset);
    CHECK(o.n == 4);
    CHECK(o.with[0].kind == ONS_WORKER_UNHEALTHY && strcmp(o.with[0].name, "w-7") == 0 && o.with[0].at == onset - 50);
    CHECK(o.with[1].kind == ONS_QUEUE_DEPTH && o.with[1].from == 10 && o.with[1].to == 50);
    CHECK(o.with[2].kind == ONS_DLQ_GROWTH && o.with[2].from == 3 && o.with[2].to == 7);
    CHECK(o.with[3].kind == ONS_GROUPS_STARTED && o.with[3].count == 2);
    char t[512];
    onset_text(&o, false, t, sizeof t);
    CHECK_STR(t, "started 08:10 \u2014 08:09 worker w-7 unhealthy \u00b7 queue billing depth \u00d75 \u00b7 DLQ +4 "
                 "\u00b7 2 other groups started");
    /* the window's first minute: no onset claimed */
    onset_of(&h, g, 4, 0, onset + 7 - 59, &o);
    CHECK(o.state == ONSET_BEFORE_WINDOW && o.n == 0);
    onset_of(&h, g, 4, 0, onset + 7 - 60, &o);
    CHECK(o.state == ONSET_KNOWN);
    /* no ring, or no sample of those minutes */
    onset_of(NULL, g, 4, 0, T0 - 3000, &o);
    CHECK(o.state == ONSET_NO_HISTORY && o.n == 1 && o.with[0].kind == ONS_GROUPS_STARTED);
    onset_text(&o, false, t, sizeof t);
    CHECK_STR(t, "started 08:10 \u2014 no history of those minutes \u00b7 2 other groups started");
    rd_group late = { .fp = "z", .first_seen = T0 + 3 * 3600, .count = 5 };
    onset_of(&h, &late, 1, 0, T0, &o);
    CHECK(o.state == ONSET_NO_HISTORY && o.n == 0);
}

static void test_queue_thresholds(void)
{
    static const struct { double before, after; bool jump; } rows[] = {
        { 10, 20, true },      /* ×2, +10: both at their minimum */
        { 10, 19, false },     /* below ×2 */
        { 5, 10, false },      /* ×2 but +5 */
        { 0, 10, true },       /* from empty: 0→10 */
        { 0, 9, false },
        { 40, 30, false },     /* fell */
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        static rd_history h;
        history_init(&h);
        double onset = T0 + 600;
        fill(&h, T0, T0 + 900, 1, 1, rows[i].before, rows[i].after, onset - 30);
        rd_group g = { .fp = "a", .first_seen = onset + 1, .count = 9 };
        rd_onset o;
        onset_of(&h, &g, 1, 0, T0, &o);
        char msg[32];
        snprintf(msg, sizeof msg, "row %zu", i);
        CHECK_MSG(o.state == ONSET_KNOWN, msg);
        CHECK_MSG((o.n == 1 && o.with[0].kind == ONS_QUEUE_DEPTH) == rows[i].jump, msg);
        if (rows[i].jump && rows[i].before == 0) {
            char t[256];
            onset_text(&o, false, t, sizeof t);
            CHECK_STR(t, "started 08:10 \u2014 queue billing depth 0\u219210");
        }
        if (!rows[i].jump) {
            char t[256];
            onset_text(&o, false, t, sizeof t);
            CHECK_STR(t, "started 08:10 \u2014 nothing else changed in the history");
        }
    }
}

static void test_events_ring_and_file(void)
{
    static rd_history h, back;
    history_init(&h);
    fill(&h, T0, T0 + 60, 0, 0, 0, 0, 0);
    for (int i = 0; i < HIST_EVENTS + 5; i++) {     /* the oldest five fall out of the ring */
        char name[32];
        snprintf(name, sizeof name, "w-%d", i);
        history_event(&h, T0 + i, i % 2 ? HEV_DRAINING : HEV_UNHEALTHY, name);
    }
    history_event(&h, T0 + 100, HEV_UNHEALTHY, "evil\x1b[2J\n \xe2\x80\xae");
    rd_hist_event ev[HIST_EVENTS];
    size_t n = history_events(&h, T0, T0 + 1000, ev, HIST_EVENTS);
    CHECK(n == HIST_EVENTS);
    for (size_t i = 0; i < n; i++)                   /* w-0..w-5 fell out (w-5 by the hostile one) */
        CHECK(strcmp(ev[i].name, "w-5") != 0 && strcmp(ev[i].name, "w-0") != 0);
    CHECK(ev[0].step == (long)(T0 / HIST_STEP_S) && ev[0].kind == HEV_DRAINING && strcmp(ev[0].name, "w-7") == 0);
    CHECK(strcmp(ev[n - 1].name, "evil\x1b[2J\n \xe2\x80\xae") == 0);
    char dir[] = "/tmp/rd-onset-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[64], why[300];
    snprintf(path, sizeof path, "%s/h.hist", dir);
    CHECK(history_save(&h, path, why, sizeof why));
    bool damaged = true;
    CHECK(history_load(&back, path, &damaged, why, sizeof why) && !damaged);
    rd_hist_event ev2[HIST_EVENTS];
    size_t n2 = history_events(&back, T0, T0 + 1000, ev2, HIST_EVENTS);
    CHECK(n2 == n);
    for (size_t i = 0; i < n && i < n2; i++)
        CHECK(ev[i].step == ev2[i].step && ev[i].kind == ev2[i].kind && strcmp(ev[i].name, ev2[i].name) == 0);
    /* a damaged event line keeps every line before it */
    FILE *f = fopen(path, "a");
    CHECK(f != NULL);
    if (f) {
        fputs("e 12 x bad\n", f);
        fclose(f);
    }
    CHECK(history_load(&back, path, &damaged, why, sizeof why) && damaged);
    CHECK(history_events(&back, T0, T0 + 1000, ev2, HIST_EVENTS) == n);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    test_onset_rows();
    test_queue_thresholds();
    test_events_ring_and_file();
    return check_done("onset");
}
