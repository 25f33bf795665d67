/* The journal's writer thread (actions/jwriter.h): lines on disk in the order queued, the
 * completions on the loop in that order and never before it runs, a forgotten callback
 * never runs while its line is still written, a failure reaches its callback with why,
 * and free writes everything still queued. Group commit (issue 35): lines queued together
 * share their syncs; their completions run a slice at a time, the loop free in between. */
#include "../../src/actions/jwriter.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

enum { N = 200 };
static int order[N + 8], n_done, n_failed;
static char last_why[256];

static void on_done(bool ok, const char *why, void *ud)
{
    order[n_done++] = (int)(long)ud;
    if (!ok) {
        n_failed++;
        snprintf(last_why, sizeof last_why, "%s", why);
    }
}

static void rec_of(int k, char *target, size_t cap, rd_journal_rec *rec)
{
    snprintf(target, cap, "t%d", k);
    static const char *targets[1];
    targets[0] = target;
    *rec = (rd_journal_rec){.operator_ = "op", .system = "s", .action = "retry", .targets = targets,
                            .n_targets = 1, .result = "sending", .code = "pending"};
}

/* The targets of the file's lines, in file order, as numbers. */
static int file_targets(const char *path, int *out, int cap)
{
    FILE *f = fopen(path, "r");
    int n = 0;
    char line[512];
    while (f && fgets(line, sizeof line, f) && n < cap) {
        const char *t = strstr(line, "\"targets\":[\"t");
        out[n++] = t ? atoi(t + 13) : -1;
    }
    if (f)
        fclose(f);
    return n;
}

/* The loop's iterations it took. */
static int run_until(struct event_base *base, int want)
{
    int i = 0;
    for (; i < 2000 && n_done < want; i++)
        event_base_loop(base, EVLOOP_ONCE);
    return i;
}

int main(void)
{
    char dir[] = "/tmp/rd-jwriter-XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    char path[300], bad[300], target[32];
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    snprintf(bad, sizeof bad, "%s/journal.jsonl/x", dir);   /* its directory is a file */
    struct event_base *base = event_base_new();
    rd_jwriter *w = jwriter_new(base);
    rd_journal_rec rec;
    uint64_t forgotten = 0;
    for (int k = 0; k < N; k++) {
        rec_of(k, target, sizeof target, &rec);
        uint64_t t = jwriter_append(w, path, &rec, on_done, (void *)(long)k);
        if (k == 7)
            forgotten = t;
    }
    jwriter_forget(w, forgotten);
    CHECK(n_done == 0);                     /* completions run on the loop only */
    CHECK(jwriter_queued(w) == N);
    jwriter_drain(w);
    CHECK(n_done == 0);
    int got[N + 8];
    CHECK(file_targets(path, got, N + 8) == N);
    int in_order = 1;
    for (int k = 0; k < N; k++)
        in_order &= got[k] == k;
    CHECK(in_order);
    uint64_t syncs = 0, lines = 0;
    jwriter_stats(w, &syncs, &lines);
    CHECK(lines == N);
    /* queued faster than a sync: groups (one line and one sync each before: N) */
    CHECK_MSG(syncs >= 1 && syncs <= N / 4, "too many syncs for lines queued at once");
    int turns = run_until(base, N - 1);
    CHECK(n_done == N - 1);                 /* every one but the forgotten, in order */
    /* a slice of at most 8 completions to a callback: the loop ran between them */
    CHECK_MSG(turns >= (N - 1) / 8, "completions not run in slices");
    int cb_order = 1;
    for (int k = 0, j = 0; k < N; k++)
        if (k != 7)
            cb_order &= order[j++] == k;
    CHECK(cb_order);
    CHECK(n_failed == 0);
    CHECK(jwriter_queued(w) == 0);

    rec_of(999, target, sizeof target, &rec);   /* a failure reaches its callback */
    jwriter_append(w, bad, &rec, on_done, (void *)999L);
    run_until(base, N);
    CHECK(n_done == N && n_failed == 1 && order[N - 1] == 999);
    CHECK_MSG(strstr(last_why, "journal") != NULL, last_why);

    for (int k = N; k < N + 5; k++) {           /* free writes what is still queued */
        rec_of(k, target, sizeof target, &rec);
        jwriter_append(w, path, &rec, on_done, (void *)(long)k);
    }
    jwriter_free(w);
    CHECK(file_targets(path, got, N + 8) == N + 5 && got[N + 4] == N + 4);
    CHECK(n_done == N);                         /* and runs no callback */
    event_base_free(base);
    unlink(path);
    rmdir(dir);
    return check_done("jwriter");
}
