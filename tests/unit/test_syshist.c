/* A system's last hour kept by its session (session/syshist.h): the file's name, a sample
 * only while every source answers (else a gap), DLQ queues out of the backlog, the save at
 * close and the load at the next open. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "../../src/core/xalloc.h"
#include "../../src/session/syshist.h"

static const double NOW = 1767225600;

static void test_path(void)
{
    setenv("XDG_STATE_HOME", "/st", 1);
    char *p = syshist_path("prod eu/1");
    CHECK_STR(p, "/st/redrive/history/prod%20eu%2F1.hist");
    free(p);
    p = syshist_path(".x");            /* never a hidden name or a path part */
    CHECK_STR(p, "/st/redrive/history/%2Ex.hist");
    free(p);
    setenv("XDG_STATE_HOME", "relative", 1);
    setenv("HOME", "/h", 1);
    p = syshist_path("a");
    CHECK_STR(p, "/h/.local/state/redrive/history/a.hist");
    free(p);
    unsetenv("XDG_STATE_HOME");
    unsetenv("HOME");
    CHECK(syshist_path("a") == NULL);
}

static rd_model *model(void)
{
    rd_model *m = model_new();
    model_source_ok(m, "postgresql", NOW - 1);
    model_set_failing_rate(m, 2.5);
    model_dlq_total(m, "rabbitmq", 7);
    rd_queue *q = xcalloc(2, sizeof *q);
    q[0] = (rd_queue){ xstrdup("work"), 40, 40, 0, 1, -1, -1, false, NULL, -1, 0, 0, 0, false, NULL, 0, false, 0, NULL, NULL };
    q[1] = (rd_queue){ xstrdup("dead"), 9, 9, 0, 0, -1, -1, true, NULL, -1, 0, 0, 0, false, NULL, 0, false, 0, NULL, NULL };
    model_set_queues(m, "rabbitmq", q, 2);
    return m;
}

static void test_sample_save_load(void)
{
    char dir[] = "/tmp/rd-syshist-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    setenv("XDG_STATE_HOME", dir, 1);
    rd_model *m = model();
    char why[300];
    rd_syshist *h = syshist_open("sys", NULL, m, NULL, why, sizeof why);
    CHECK_STR(why, "");                          /* no file yet: an empty hour, no word */
    syshist_sample(h, NOW);
    float v;
    CHECK(history_last(syshist_get(h), HIST_FAIL_RATE, NOW, 1, &v) && v == 2.5f);
    CHECK(history_last(syshist_get(h), HIST_DLQ, NOW, 1, &v) && v == 7);
    CHECK(history_queue(syshist_get(h), "work") >= 0);
    CHECK(history_queue(syshist_get(h), "dead") == -1);   /* a DLQ is the DLQ series */
    rd_hist_mark mk = HIST_UPPER;
    CHECK(history_newest(syshist_get(h), HIST_DLQ, NOW, 1, &v, &mk) && mk == HIST_EXACT);
    /* the store's retry-eligible count as the fleet marks it: "<=" (may include superseded
     * failures), "+" (stopped at its cap) */
    model_set_store_figures(m, 6000, false, true, 0);
    syshist_sample(h, NOW + 20);
    CHECK(history_newest(syshist_get(h), HIST_ELIGIBLE, NOW + 20, 1, &v, &mk) && v == 6000 && mk == HIST_UPPER);
    model_set_store_figures(m, 100000, true, false, 0);
    syshist_sample(h, NOW + 30);
    CHECK(history_newest(syshist_get(h), HIST_ELIGIBLE, NOW + 30, 1, &v, &mk) && v == 100000 && mk == HIST_LOWER);
    model_set_store_figures(m, 40, false, false, 0);
    syshist_sample(h, NOW + 40);
    CHECK(history_newest(syshist_get(h), HIST_ELIGIBLE, NOW + 40, 1, &v, &mk) && v == 40 && mk == HIST_EXACT);
    model_source_fail(m, "postgresql", "down", NOW + 10);
    syshist_sample(h, NOW + 10);                 /* a source down: a gap, not its old values */
    CHECK(!history_last(syshist_get(h), HIST_FAIL_RATE, NOW + 10, 1, &v));
    syshist_free(h);                             /* saved at close */

    char *path = syshist_path("sys");
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    rd_history back;
    CHECK(syshist_read("sys", &back, why, sizeof why) && !why[0]);
    CHECK(history_last(&back, HIST_FAIL_RATE, NOW, 1, &v) && v == 2.5f);
    CHECK(!history_last(&back, HIST_FAIL_RATE, NOW + 10, 1, &v));

    chmod(path, 0644);                           /* readable by others: refused, said, unused */
    h = syshist_open("sys", NULL, m, NULL, why, sizeof why);
    CHECK(strstr(why, path) != NULL);
    CHECK(!history_last(syshist_get(h), HIST_FAIL_RATE, NOW, 1, &v));
    model_source_ok(m, "postgresql", NOW + 19);
    syshist_sample(h, NOW + 20);
    CHECK(history_last(syshist_get(h), HIST_FAIL_RATE, NOW + 20, 1, &v));   /* kept in memory */
    syshist_free(h);                             /* and never written over */
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
    unlink(path);
    free(path);
    model_free(m);
}

static rd_worker *workers(rd_health h7, const char *status7)
{
    rd_worker *w = xcalloc(2, sizeof *w);
    w[0] = (rd_worker){ .id = xstrdup("6"), .name = xstrdup("w-6"), .status = xstrdup("active"),
                        .health = RD_HEALTH_HEALTHY, .queue_depth = -1 };
    w[1] = (rd_worker){ .id = xstrdup("7"), .name = xstrdup("w-7"), .status = xstrdup(status7),
                        .health = h7, .queue_depth = -1 };
    return w;
}

/* The workers that turned unhealthy or draining between two samples become the ring's
 * events (the onset of a group is set against them); the first sample only learns who is
 * already so; a worker still unhealthy is no new event; they survive the save. */
static void test_worker_events(void)
{
    char dir[] = "/tmp/rd-syshist-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    setenv("XDG_STATE_HOME", dir, 1);
    rd_model *m = model();
    model_set_workers(m, workers(RD_HEALTH_UNHEALTHY, "active"), 2);
    char why[300];
    rd_syshist *h = syshist_open("ev", NULL, m, NULL, why, sizeof why);
    rd_hist_event ev[HIST_EVENTS];
    syshist_sample(h, NOW);                      /* already unhealthy at the start: no event */
    CHECK(history_events(syshist_get(h), NOW - 3600, NOW + 3600, ev, HIST_EVENTS) == 0);
    model_set_workers(m, workers(RD_HEALTH_HEALTHY, "active"), 2);
    syshist_sample(h, NOW + 10);
    model_set_workers(m, workers(RD_HEALTH_UNHEALTHY, "draining"), 2);
    syshist_sample(h, NOW + 20);                 /* turned unhealthy and draining */
    syshist_sample(h, NOW + 30);                 /* still so: nothing new */
    size_t n = history_events(syshist_get(h), NOW - 3600, NOW + 3600, ev, HIST_EVENTS);
    CHECK(n == 2);
    CHECK(n == 2 && ev[0].kind == HEV_DRAINING && strcmp(ev[0].name, "w-7") == 0 &&
          ev[0].step == (long)((NOW + 20) / HIST_STEP_S));
    CHECK(n == 2 && ev[1].kind == HEV_UNHEALTHY && strcmp(ev[1].name, "w-7") == 0);
    syshist_free(h);
    rd_history back;
    CHECK(syshist_read("ev", &back, why, sizeof why) && !why[0]);
    CHECK(history_events(&back, NOW - 3600, NOW + 3600, ev, HIST_EVENTS) == 2);
    char *path = syshist_path("ev");
    unlink(path);
    free(path);
    model_free(m);
}

int main(void)
{
    test_path();
    test_sample_save_load();
    test_worker_events();
    return check_done("syshist");
}
