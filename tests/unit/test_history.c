/* One system's last hour (core/history.h): the ring, gaps, queues, the file round trip,
 * a torn file and a file that is not ours. */
#include "history.h"

#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "check.h"

#define T0 1700000000.0

static rd_hist_sample plain(double fail, double elig, double dlq, double unh)
{
    rd_hist_sample s = {.fail_rate = fail, .eligible = elig, .dlq = dlq, .unhealthy = unh};
    return s;
}

static void ring_and_gaps(void)
{
    static rd_history h;
    history_init(&h);
    rd_hist_sample s = plain(2, 5, 7, 0);
    history_add(&h, T0, &s);
    s = plain(3, -1, 8, 1);                      /* eligible unknown: a gap */
    history_add(&h, T0 + 10, &s);
    s = plain(4, 6, 9, 1);                       /* same step as T0+10: replaces it */
    history_add(&h, T0 + 15, &s);
    float out[4];
    history_series(&h, HIST_FAIL_RATE, T0 + 30, out, 4);
    CHECK_NEAR(out[0], 2);
    CHECK_NEAR(out[1], 4);
    CHECK(isnan(out[2]) && isnan(out[3]));       /* nothing written: gaps, not zeros */
    history_series(&h, HIST_ELIGIBLE, T0 + 10, out, 2);
    CHECK_NEAR(out[0], 5);
    CHECK_NEAR(out[1], 6);
    s = plain(0, 0, 0, 0);                       /* a zero is a value */
    history_add(&h, T0 + 20, &s);
    history_series(&h, HIST_DLQ, T0 + 20, out, 1);
    CHECK(!isnan(out[0]) && out[0] == 0);
    float last;
    CHECK(history_last(&h, HIST_UNHEALTHY, T0 + 60, 10, &last) && last == 0);
    CHECK(!history_last(&h, HIST_UNHEALTHY, T0 + 600, 10, &last));
    /* an hour later the same slots are old: gaps */
    history_series(&h, HIST_FAIL_RATE, T0 + HIST_N * HIST_STEP_S, out, 4);
    for (int i = 0; i < 4; i++)
        CHECK(isnan(out[i]));
    /* writing an hour later reuses the slot and clears its other series */
    s = plain(9, -1, -1, -1);
    history_add(&h, T0 + HIST_N * HIST_STEP_S, &s);
    history_series(&h, HIST_DLQ, T0 + HIST_N * HIST_STEP_S, out, 1);
    CHECK(isnan(out[0]));
    /* a bad series index reads as gaps */
    history_series(&h, HIST_SERIES, T0, out, 1);
    CHECK(isnan(out[0]));
}

static void queues(void)
{
    static rd_history h;
    history_init(&h);
    const char *names[8] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    double depth[8] = {1, 80, 3, 70, 5, 60, 7, 50};
    rd_hist_sample s = plain(0, 0, 0, 0);
    s.nq = 8;
    s.qnames = names;
    s.qdepth = depth;
    history_add(&h, T0, &s);
    /* the six deepest: b d f h g e */
    CHECK(history_queue(&h, "b") >= 0 && history_queue(&h, "h") >= 0);
    CHECK(history_queue(&h, "e") >= 0 && history_queue(&h, "g") >= 0);
    CHECK(history_queue(&h, "a") < 0 && history_queue(&h, "c") < 0);
    float out[1];
    history_series(&h, history_queue(&h, "d"), T0, out, 1);
    CHECK_NEAR(out[0], 70);
    /* a new deep queue replaces the tracked one that peaked lowest (e at 5) */
    depth[0] = 500;
    history_add(&h, T0 + 10, &s);
    CHECK(history_queue(&h, "a") >= 0);
    CHECK(history_queue(&h, "e") < 0);
    float two[2];
    history_series(&h, history_queue(&h, "a"), T0 + 10, two, 2);
    CHECK(isnan(two[0]));                        /* its series starts empty */
    CHECK_NEAR(two[1], 500);
}

/* The charts' order (issue 34): the first queues seen, all shallow, took the first slots;
 * two queues that grew later are charted first, and the order follows the depths. */
static void deepest_first(void)
{
    static rd_history h;
    history_init(&h);
    const char *names[8] = {"q0", "q1", "q2", "q3", "w4", "w5", "w6", "w7"};
    double depth[8] = {0, 0, 1, 0, 0, 0, 0, 0};
    rd_hist_sample s = plain(0, 0, 0, 0);
    s.nq = 8;
    s.qnames = names;
    s.qdepth = depth;
    history_add(&h, T0, &s);
    depth[5] = 120, depth[6] = 60;
    history_add(&h, T0 + 10, &s);
    int q[HIST_QUEUES];
    int n = history_queues_deepest(&h, T0 + 10, q);
    CHECK(n == HIST_QUEUES);
    CHECK_STR(h.qname[q[0] - HIST_FIXED], "w5");
    CHECK_STR(h.qname[q[1] - HIST_FIXED], "w6");
    CHECK_STR(h.qname[q[2] - HIST_FIXED], "q2");
    CHECK(history_queue(&h, "w5") != q[0] || q[0] != HIST_FIXED);   /* not its slot's order */
    depth[5] = 0, depth[6] = 300;                  /* re-chosen as the depths change */
    history_add(&h, T0 + 20, &s);
    n = history_queues_deepest(&h, T0 + 20, q);
    CHECK_STR(h.qname[q[0] - HIST_FIXED], "w6");
    CHECK_STR(h.qname[q[1] - HIST_FIXED], "q2");
    CHECK_STR(h.qname[q[2] - HIST_FIXED], "w5");   /* 0 now, but peaked at 120: before the zeros */
    CHECK(history_queues_deepest(NULL, T0, q) == 0);
}

static char *tmpdir(void)
{
    static char dir[] = "/tmp/rd-hist-XXXXXX";
    return mkdtemp(dir);
}

static void round_trip(const char *dir)
{
    static rd_history h, back;
    char path[512], why[512];
    snprintf(path, sizeof path, "%s/hist", dir);
    history_init(&h);
    const char *names[2] = {"odd name %\x1b[31m", "plain"};
    double depth[2] = {12.5, 3};
    for (int i = 0; i < 50; i++) {
        rd_hist_sample s = plain(i % 3, i, i % 2 ? -1 : 40, 0);
        s.nq = 2;
        s.qnames = names;
        s.qdepth = depth;
        history_add(&h, T0 + i * 10, &s);
    }
    CHECK(history_save(&h, path, why, sizeof why));
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    bool damaged = true;
    CHECK(history_load(&back, path, &damaged, why, sizeof why));
    CHECK(!damaged);
    CHECK(memcmp(back.step, h.step, sizeof h.step) == 0);
    CHECK(strcmp(back.qname[history_queue(&h, names[0]) - HIST_FIXED], names[0]) == 0);
    for (int s = 0; s < HIST_SERIES; s++) {
        float a[HIST_N], b[HIST_N];
        history_series(&h, s, T0 + 490, a, HIST_N);
        history_series(&back, s, T0 + 490, b, HIST_N);
        bool same = true;
        for (int i = 0; i < HIST_N; i++)
            same &= (isnan(a[i]) && isnan(b[i])) || a[i] == b[i];
        CHECK_MSG(same, "series differs after the round trip");
    }
    /* torn: cut the file in the middle of a line; every whole line before it is kept */
    FILE *f = fopen(path, "r");
    char body[65536];
    size_t n = fread(body, 1, sizeof body, f);
    fclose(f);
    char *cut = strstr(body, "\ns ");
    for (int k = 0; k < 20 && cut; k++)
        cut = strstr(cut + 1, "\ns ");
    CHECK(cut != NULL);
    size_t keep = (size_t)(cut - body) + 6;      /* "\ns 170" — mid-line */
    CHECK(keep < n);
    int fd = open(path, O_WRONLY | O_TRUNC);
    CHECK(write(fd, body, keep) == (ssize_t)keep);
    close(fd);
    CHECK(history_load(&back, path, &damaged, why, sizeof why));
    CHECK(damaged);
    CHECK(strstr(why, "damaged history line") != NULL);
    int kept = 0;
    for (int i = 0; i < HIST_N; i++)
        kept += back.step[i] != 0;
    CHECK_MSG(kept == 20, why);    /* the s lines before the torn one */
    /* garbage in a value: refused from that line */
    fd = open(path, O_WRONLY | O_TRUNC);
    const char *bad = "redrive-history 1\ns 170000000 1 2 3 4 5 6 7 8 9 nan\n";
    CHECK(write(fd, bad, strlen(bad)) == (ssize_t)strlen(bad));
    close(fd);
    CHECK(history_load(&back, path, &damaged, why, sizeof why) && damaged);
    CHECK(back.step[170000000 % HIST_N] == 0);
    /* a file others can read is not ours to trust */
    chmod(path, 0644);
    CHECK(!history_load(&back, path, &damaged, why, sizeof why));
    CHECK(strstr(why, "history file") != NULL);
    unlink(path);
    /* a missing file: an empty history, no error */
    CHECK(history_load(&back, path, &damaged, why, sizeof why) && !damaged);
    rmdir(dir);
}

static void write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
}

/* Tampered numbers: a time, a step or a value no long or float holds is refused (the file
 * line as damage, the sample not recorded), never cast. */
static void tampered(const char *dir)
{
    static rd_history h;
    history_init(&h);
    rd_hist_sample s = plain(1e300, 2, 3, 0);
    static const double clocks[] = { 1e300, -1e300, HIST_TIME_MAX, 1e19, INFINITY };
    for (size_t i = 0; i < sizeof clocks / sizeof *clocks; i++) {
        history_add(&h, clocks[i], &s);
        float v[HIST_N];
        history_series(&h, HIST_ELIGIBLE, clocks[i], v, HIST_N);
        bool gaps = true;
        for (int k = 0; k < HIST_N; k++)
            gaps &= isnan(v[k]);
        CHECK_MSG(gaps, "a series at an absurd time is all gaps");
    }
    for (int k = 0; k < HIST_N; k++)
        CHECK(h.step[k] == 0);
    history_add(&h, T0, &s);                      /* a value beyond a float: its top */
    float top = 0;
    CHECK(history_last(&h, HIST_FAIL_RATE, T0, 1, &top) && top == FLT_MAX);
    char path[512], why[512];
    snprintf(path, sizeof path, "%s/tampered", dir);
    static const char *const lines[] = {
        "s 170000000 1e300 2 3 4 5 6 7 8 9 10\n",           /* > FLT_MAX */
        "s 170000000 3.5e38 2 3 4 5 6 7 8 9 10\n",
        "s 170000000 1e-300 2 3 4 5 6 7 8 9 -1e300\n",
        "s 9223372036854775807 1 2 3 4 5 6 7 8 9 10\n",     /* a step no time has */
        "s 10000000000 1 2 3 4 5 6 7 8 9 10\n",
        "s 99999999999999999999999 1 2 3 4 5 6 7 8 9 10\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        char text[256];
        snprintf(text, sizeof text, "redrive-history 1\n%s", lines[i]);
        write_file(path, text);
        bool damaged = false;
        CHECK_MSG(history_load(&h, path, &damaged, why, sizeof why) && damaged, lines[i]);
        for (int k = 0; k < HIST_N; k++)
            CHECK_MSG(h.step[k] == 0, lines[i]);
    }
    /* a damaged queue name leaves the name read before it whole, not half overwritten */
    write_file(path, "redrive-history 1\nq 0 aaaaaaaa\nq 0 bb%ZZ\n");
    bool hurt = false;
    CHECK(history_load(&h, path, &hurt, why, sizeof why) && hurt);
    CHECK_STR(h.qname[0], "aaaaaaaa");
    /* the largest step a time below HIST_TIME_MAX has is still read */
    write_file(path, "redrive-history 1\ns 9999999999 1 2 3 4 5 6 7 8 9 3.4e38\n");
    bool damaged = true;
    CHECK(history_load(&h, path, &damaged, why, sizeof why) && !damaged);
    CHECK(h.step[9999999999L % HIST_N] == 9999999999L);
    unlink(path);
    rmdir(dir);
}

/* A sample that is a bound keeps its mark: in the ring, in the file (written as the
 * screens print it), in the JSON's "bounds" and the text's "now"; a gap has none; a mark
 * the file cannot hold is damage. */
static void bounds(const char *dir)
{
    static rd_history h, back;
    history_init(&h);
    rd_hist_sample s = plain(1.5, 6000, 3, 0);
    s.mark[HIST_ELIGIBLE] = HIST_UPPER;
    history_add(&h, T0, &s);
    s.mark[HIST_ELIGIBLE] = HIST_LOWER;
    s.eligible = 97;
    history_add(&h, T0 + 10, &s);
    s.mark[HIST_ELIGIBLE] = HIST_EXACT;
    s.eligible = 40;
    history_add(&h, T0 + 20, &s);
    s.mark[HIST_ELIGIBLE] = HIST_UPPER;
    s.eligible = -1;                               /* unknown: a gap, never a bound */
    history_add(&h, T0 + 30, &s);
    unsigned char mk[4];
    history_marks(&h, HIST_ELIGIBLE, T0 + 30, mk, 4);
    CHECK(mk[0] == HIST_UPPER && mk[1] == HIST_LOWER && mk[2] == HIST_EXACT && mk[3] == HIST_EXACT);
    history_marks(&h, HIST_DLQ, T0 + 30, mk, 4);
    CHECK(mk[0] == HIST_EXACT && mk[1] == HIST_EXACT);
    float v;
    rd_hist_mark m = HIST_EXACT;
    CHECK(history_newest(&h, HIST_ELIGIBLE, T0 + 10, 3, &v, &m) && v == 97 && m == HIST_LOWER);
    CHECK(history_count_marked(&h, HIST_ELIGIBLE, T0 + 30, HIST_UPPER) == 1);
    char note[96], txt[32];
    history_bounds_note(&h, HIST_ELIGIBLE, T0 + 30, note, sizeof note);
    CHECK_STR(note, "  (<=: 1 upper bound, +: 1 lower bound)");
    history_bounds_note(&h, HIST_DLQ, T0 + 30, note, sizeof note);
    CHECK_STR(note, "");
    history_mark_text(HIST_UPPER, "6000", txt, sizeof txt);
    CHECK_STR(txt, "<=6000");
    history_mark_text(HIST_LOWER, "97", txt, sizeof txt);
    CHECK_STR(txt, "97+");

    /* the file: written as "<=6000" and "97+", read back the same */
    char path[512], why[512];
    snprintf(path, sizeof path, "%s/bounds", dir);
    CHECK(history_save(&h, path, why, sizeof why));
    FILE *f = fopen(path, "r");
    char body[65536];
    size_t n = fread(body, 1, sizeof body - 1, f);
    fclose(f);
    body[n] = '\0';
    CHECK(strstr(body, " 1.5 <=6000 3 0 ") != NULL);
    CHECK(strstr(body, " 1.5 97+ 3 0 ") != NULL);
    bool damaged = true;
    CHECK(history_load(&back, path, &damaged, why, sizeof why) && !damaged);
    CHECK(memcmp(back.mark, h.mark, sizeof h.mark) == 0);
    /* marks it cannot be: refused as damage */
    static const char *const bad[] = {
        "s 170000000 1 <=2+ 3 4 5 6 7 8 9 10\n", "s 170000000 1 <=<=2 3 4 5 6 7 8 9 10\n",
        "s 170000000 1 2++ 3 4 5 6 7 8 9 10\n", "s 170000000 1 <=- 3 4 5 6 7 8 9 10\n",
        "s 170000000 1 -+ 3 4 5 6 7 8 9 10\n", "s 170000000 1 <= 3 4 5 6 7 8 9 10\n",
        "s 170000000 1 <=-2 3 4 5 6 7 8 9 10\n", "s 170000000 1 + 3 4 5 6 7 8 9 10\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[256];
        snprintf(text, sizeof text, "redrive-history 1\n%s", bad[i]);
        write_file(path, text);
        CHECK_MSG(history_load(&back, path, &damaged, why, sizeof why) && damaged, bad[i]);
        CHECK_MSG(back.step[170000000 % HIST_N] == 0, bad[i]);
    }

    /* the JSON names the bounds, the text marks "now" and counts them */
    cJSON *o = cJSON_CreateObject();
    history_json(o, &h, T0 + 20);
    char *js = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(o, "history"), "bounds"));
    char want[128];
    snprintf(want, sizeof want, "{\"retry_eligible\":[[%.0f,\"upper\"],[%.0f,\"lower\"]]}", T0, T0 + 10);
    CHECK_STR(js, want);
    free(js);
    cJSON_Delete(o);
    char *t = history_to_text(&h, T0 + 10, 40, true);
    CHECK(strstr(t, "retry-eligible           now 97+      max 6000  (<=: 1 upper bound, +: 1 lower bound)\n") != NULL);
    CHECK(strstr(t, "DLQ                      now 3        max 3\n") != NULL);
    free(t);
    unlink(path);
}

int main(void)
{
    ring_and_gaps();
    queues();
    deepest_first();
    round_trip(tmpdir());
    static char bdir[] = "/tmp/rd-hist-b-XXXXXX";
    bounds(mkdtemp(bdir));
    rmdir(bdir);
    static char tdir[] = "/tmp/rd-hist-XXXXXX";
    tampered(mkdtemp(tdir));
    return check_done("history");
}
