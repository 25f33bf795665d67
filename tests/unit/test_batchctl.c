/* A batch's controls (actions/batchctl.c): one row per record tail -> the state a listing
 * says, the rate and window a resume uses, what a run reads between parts; and the run's
 * lock (a second run refused, in this process too; a listing says running). */
#include "../../src/actions/batchrec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static void append(const char *path, const char *line)
{
    FILE *f = fopen(path, "a");
    fputs(line, f);
    fputc('\n', f);
    fclose(f);
}

/* lines appended after the end line -> what the record then says */
static const struct {
    const char *name;
    const char *lines[4];
    const char *state;        /* batch_info_state (no item sent: open unless paused) */
    double rate;
    int conc;
    bool now, now_paused, abandoned;   /* batchrec_control_now */
} rows[] = {
    {"no control line", {NULL}, "open", 0, 0, false, false, false},
    {"paused", {"{\"control\":\"paused\",\"at\":\"t\",\"operator\":\"o\"}"}, "paused", 0, 0, true, true, false},
    {"paused then resumed with a rate",
     {"{\"control\":\"paused\"}", "{\"control\":\"open\",\"rate\":20,\"concurrency\":16}"}, "open", 20, 16,
     true, false, false},
    {"the last line counts", {"{\"control\":\"open\",\"rate\":20}", "{\"control\":\"paused\",\"rate\":5}"},
     "paused", 5, 0, true, true, false},
    {"rate out of range: the system's", {"{\"control\":\"open\",\"rate\":1e9,\"concurrency\":65}"}, "open", 0, 0,
     true, false, false},
    {"rate not a number, window not whole", {"{\"control\":\"open\",\"rate\":\"fast\",\"concurrency\":2.5}"},
     "open", 0, 0, true, false, false},
    {"zero and negative", {"{\"control\":\"open\",\"rate\":0,\"concurrency\":-1}"}, "open", 0, 0, true, false,
     false},
    {"abandoned after a pause", {"{\"control\":\"paused\"}", "{\"abandoned\":\"t\",\"operator\":\"o\"}"},
     "abandoned", 0, 0, false, false, true},
};

static void test_rows(const char *dir)
{
    char journal[512], why[400];
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
        rd_batchrec *r = batchrec_create(journal, "sys", "op", RD_ACT_RETRY, NULL, "sel", why, sizeof why);
        CHECK_MSG(r != NULL, why);
        rd_target t = {.id = "1"};
        CHECK(batchrec_add(r, &t, why, sizeof why) && batchrec_commit(r, why, sizeof why));
        char bid[17];
        snprintf(bid, sizeof bid, "%s", batchrec_id(r));
        batchrec_free(r);
        rd_batch_info b;
        CHECK(batchrec_find(journal, bid, &b, why, sizeof why));
        for (int i = 0; rows[k].lines[i]; i++)
            append(b.path, rows[k].lines[i]);
        char *path = strdup(b.path);
        batch_info_clear(&b);
        CHECK_MSG(batchrec_find(journal, bid, &b, why, sizeof why), rows[k].name);
        CHECK_MSG(strcmp(batch_info_state(&b), rows[k].state) == 0, rows[k].name);
        CHECK_MSG(b.rate == rows[k].rate && b.concurrency == rows[k].conc, rows[k].name);
        CHECK_MSG(batch_info_open(&b) == !rows[k].abandoned, rows[k].name);
        rd_batch_ctl c;
        bool abandoned;
        CHECK_MSG(batchrec_control_now(path, &c, &abandoned) == rows[k].now, rows[k].name);
        CHECK_MSG(c.paused == rows[k].now_paused && abandoned == rows[k].abandoned, rows[k].name);
        batch_info_clear(&b);
        free(path);
    }
}

/* batchrec_control writes what batchrec_find reads back; the lock. */
static void test_write_and_lock(const char *dir)
{
    char journal[512], why[400];
    snprintf(journal, sizeof journal, "%s/lock.jsonl", dir);
    rd_batchrec *r = batchrec_create(journal, "sys", "op", RD_ACT_RETRY, NULL, "sel", why, sizeof why);
    rd_target t = {.id = "1"};
    CHECK(r && batchrec_add(r, &t, why, sizeof why) && batchrec_commit(r, why, sizeof why));
    char bid[17];
    snprintf(bid, sizeof bid, "%s", batchrec_id(r));
    batchrec_free(r);
    rd_batch_info b;
    CHECK(batchrec_find(journal, bid, &b, why, sizeof why));
    rd_batch_ctl c = {.paused = true, .rate = 12.5, .concurrency = 4};
    CHECK_MSG(batchrec_control(&b, &c, "alice", why, sizeof why), why);
    batch_info_clear(&b);
    CHECK(batchrec_find(journal, bid, &b, why, sizeof why));
    CHECK(b.paused && b.rate == 12.5 && b.concurrency == 4 && !b.running);
    CHECK(strcmp(batch_info_state(&b), "paused") == 0);
    CHECK(b.pause_reason == NULL);        /* an operator's pause: a reason is optional */
    /* the canary's or the breaker's pause: the same paused state, with its reason (clean) */
    rd_batch_ctl cp = {.paused = true, .rate = 12.5, .concurrency = 4,
                       .reason = "canary: 5 of 5 failed again \x1b]0;x\x07"};
    CHECK_MSG(batchrec_control(&b, &cp, "redrive", why, sizeof why), why);
    batch_info_clear(&b);
    CHECK(batchrec_find(journal, bid, &b, why, sizeof why));
    CHECK(b.paused && b.rate == 12.5 && b.concurrency == 4 && b.pause_reason &&
          strncmp(b.pause_reason, "canary: 5 of 5 failed again ", 28) == 0 &&
          !strchr(b.pause_reason, '\x1b'));
    rd_batch_ctl now;
    bool abandoned;
    CHECK(batchrec_control_now(b.path, &now, &abandoned) && now.paused && !abandoned &&
          now.rate == 12.5 && now.concurrency == 4);
    int fd = batchrec_lock(b.path, why, sizeof why);
    CHECK_MSG(fd >= 0, why);
    CHECK(batchrec_locked(b.path));
    why[0] = 0;
    CHECK(batchrec_lock(b.path, why, sizeof why) < 0);   /* a second run, even here */
    CHECK_MSG(strstr(why, "it is running") != NULL, why);
    rd_batch_info b2;
    CHECK(batchrec_find(journal, bid, &b2, why, sizeof why));
    CHECK(b2.running && strcmp(batch_info_state(&b2), "running") == 0 && batch_info_open(&b2));
    batch_info_clear(&b2);
    /* a control line appended while the run holds its lock (lineappend's flock is another lock) */
    rd_batch_ctl open = {.rate = 3};
    CHECK_MSG(batchrec_control(&b, &open, "bob", why, sizeof why), why);
    close(fd);
    CHECK(!batchrec_locked(b.path));
    batch_info_clear(&b);
    CHECK(batchrec_find(journal, bid, &b, why, sizeof why));
    CHECK(!b.paused && b.rate == 3 && b.concurrency == 0 && strcmp(batch_info_state(&b), "open") == 0);
    CHECK(b.pause_reason == NULL);        /* an open line clears the pause's reason */
    batch_info_clear(&b);
}

int main(void)
{
    char dir[] = "/tmp/rd-batchctl-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    test_rows(dir);
    test_write_and_lock(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_done("batchctl");
}
