/* The saves' writer thread (session/bgwrite.c) and the last-known snapshot written on it
 * (snapcache_save_bg): jobs in order, a failure said once, free runs what is queued; the
 * copy handed to the thread writes the same file as the model it was taken from, which may
 * change or go meanwhile; the file is 0600, renamed whole, never through a link. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "../../src/core/model_json.h"
#include "../../src/core/xalloc.h"
#include "../../src/session/bgwrite.h"
#include "../../src/session/snapcache.h"

static const double NOW = 1767225600;

typedef struct { char log[64]; } order_log;
typedef struct { order_log *o; char c; bool ok; } order_job;

static bool order_run(void *arg, char *why, size_t whycap)
{
    order_job *j = arg;
    usleep(2000);
    size_t n = strlen(j->o->log);
    j->o->log[n] = j->c;
    j->o->log[n + 1] = 0;
    if (!j->ok)
        snprintf(why, whycap, "job %c failed", j->c);
    return j->ok;
}

static void test_order_and_failure(void)
{
    order_log o = {""};
    rd_bgwrite *w = bgwrite_new();
    char why[300];
    CHECK(!bgwrite_busy(w) && !bgwrite_failed(w, why, sizeof why));
    order_job jobs[4] = {{&o, 'a', true}, {&o, 'b', false}, {&o, 'c', false}, {&o, 'd', true}};
    for (int i = 0; i < 3; i++)
        CHECK(bgwrite_queue(w, order_run, NULL, &jobs[i], why, sizeof why));
    CHECK(bgwrite_busy(w));
    bgwrite_drain(w);
    CHECK(!bgwrite_busy(w));
    CHECK_STR(o.log, "abc");
    CHECK(bgwrite_failed(w, why, sizeof why));
    CHECK_STR(why, "job c failed");                     /* the newest failure, once */
    CHECK(!bgwrite_failed(w, why, sizeof why));
    CHECK(bgwrite_queue(w, order_run, NULL, &jobs[3], why, sizeof why));
    bgwrite_free(w);                                    /* runs what is queued first */
    CHECK_STR(o.log, "abcd");
}

static rd_model *model(void)
{
    rd_model *m = model_new();
    model_source_ok(m, "postgresql", NOW - 1);
    rd_progress p = {.active = true, .done = 10, .total = 100, .share = -1};
    model_source_progress(m, "postgresql", &p);
    model_set_failing_rate(m, 2.5);
    model_dlq_total(m, "rabbitmq", 7);
    model_dlq_total(m, "postgresql", 3);
    rd_execution *e = xcalloc(2, sizeof *e);
    e[0] = (rd_execution){.id = xstrdup("41"), .name = xstrdup("core.http"), .status = xstrdup("failed"),
                          .attempt = 2, .max_attempts = 3, .error = xstrdup("boom \"quoted\""),
                          .worker = xstrdup("w1"), .created_at = NOW - 60, .retry_of = xstrdup("40")};
    e[1] = (rd_execution){.id = xstrdup("42"), .status = xstrdup("running"), .attempt = 1,
                          .max_attempts = -1, .created_at = NOW - 5};
    model_set_execs(m, e, 2, true);
    rd_worker *w = xcalloc(1, sizeof *w);
    *w = (rd_worker){.id = xstrdup("w1"), .name = xstrdup("worker one"), .status = xstrdup("active"),
                     .tags = xstrdup("py3"), .heartbeat_at = NOW - 2, .queue_depth = 4, .in_flight = 1,
                     .capacity = 8, .failure_rate = 0.25, .consecutive_failures = 0, .has_metrics = true};
    model_set_workers(m, w, 1);
    rd_queue *q = xcalloc(2, sizeof *q);
    q[0] = (rd_queue){xstrdup("work"), 40, 40, 0, 1, -1, -1, false, xstrdup("dlx"), -1, 0, 0, 0, false, NULL, 0, false, 0, NULL, NULL};
    q[1] = (rd_queue){xstrdup("dead"), 9, 9, 0, 0, -1, -1, true, NULL, -1, 0, 0, 0, false, NULL, 0, false, 0, NULL, NULL};
    model_set_queues(m, "rabbitmq", q, 2);
    rd_count *c = xcalloc(2, sizeof *c);
    c[0] = (rd_count){"failed", 12, false, false};
    c[1] = (rd_count){"completed", 10000, true, true};
    model_set_counts(m, c, 2);
    return m;
}

static void test_copy_writes_the_same(void)
{
    rd_model *m = model();
    char *want = model_to_json_at(m, "cache", NOW);
    rd_model *copy = model_copy_cache(m);
    model_free(m);                                      /* the copy owns what it writes */
    char *got = model_to_json_at(copy, "cache", NOW);
    CHECK_STR(got, want);
    CHECK(strstr(got, "boom") && strstr(got, "worker one") && strstr(got, "\"dead\""));
    free(got);
    free(want);
    model_free(copy);
}

static size_t entries(const char *dir)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void test_snapcache_on_the_thread(void)
{
    char dir[] = "/tmp/rd-bgwrite-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char *sub = xasprintf("%s/redrive", dir);
    char *path = xasprintf("%s/sys.json", sub);
    rd_model *m = model();
    char *want = model_to_json_at(m, "cache", NOW);
    rd_bgwrite *w = bgwrite_new();
    char why[300];
    CHECK(snapcache_save_bg(w, path, "sys", m, NOW, why, sizeof why));
    model_set_failing_rate(m, 99);                      /* after the copy: not in the file */
    model_free(m);
    bgwrite_drain(w);
    CHECK(!bgwrite_failed(w, why, sizeof why));
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    CHECK(stat(sub, &st) == 0 && (st.st_mode & 0777) == 0700);
    CHECK(entries(sub) == 1);                           /* renamed: no temporary left */
    rd_model *back = model_new();
    double at = 0;
    CHECK(snapcache_load(path, "sys", back, &at, why, sizeof why) == SNAPCACHE_LOADED);
    CHECK(at == NOW);
    CHECK(back->failing_rate == 2.5 && back->execs.n == 2 && back->workers.n == 1);
    model_free(back);

    /* a link at the temporary name: refused (O_NOFOLLOW), said once, the file unchanged */
    char *tmp = xasprintf("%s.%ld.tmp", path, (long)getpid());
    char *target = xasprintf("%s/target", dir);
    CHECK(symlink(target, tmp) == 0);
    m = model();
    model_set_failing_rate(m, 5);
    CHECK(snapcache_save_bg(w, path, "sys", m, NOW + 60, why, sizeof why));
    model_free(m);
    bgwrite_drain(w);
    CHECK(bgwrite_failed(w, why, sizeof why));
    CHECK(strstr(why, tmp) != NULL);
    CHECK(access(target, F_OK) != 0);
    back = model_new();
    CHECK(snapcache_load(path, "sys", back, &at, why, sizeof why) == SNAPCACHE_LOADED);
    CHECK(at == NOW && back->failing_rate == 2.5);
    model_free(back);
    bgwrite_free(w);
    unlink(tmp);
    unlink(path);
    rmdir(sub);
    rmdir(dir);
    free(want);
    free(tmp);
    free(target);
    free(path);
    free(sub);
}

int main(void)
{
    test_order_and_failure();
    test_copy_writes_the_same();
    test_snapcache_on_the_thread();
    return check_done("bgwrite");
}
