/* Batch records are files anyone with our uid could have edited (actions/batchrec.h):
 * one row per rule a record can break. A damaged record is listed as damaged, named with
 * its line and the rule, never half used; a sound one's strings are sanitized when read;
 * an item that cannot be read stops a resume before anything is sent. */
#include "../../src/actions/batchrec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

#define ID "0123456789abcdef"
#define HEAD(action) "{\"batch\":\"" ID "\",\"system\":\"sys\",\"action\":" action \
    ",\"reason\":null,\"selection\":\"status=failed\",\"created\":\"2026-01-01T00:00:00.000Z\"," \
    "\"operator\":\"op\"}\n"
#define ITEMS "[\"1001\",null,null,1,null]\n[\"1002\",null,null,0,null]\n"
#define OSC "\\u001b]0;owned\\u0007"

static const struct {
    const char *name, *text;
    const char *damage;        /* NULL: sound; else what the damage says */
    const char *items;         /* sound record whose items are damaged: what it says */
} recs[] = {
    {"sound", HEAD("\"retry\"") ITEMS "{\"total\":2}\n", NULL, NULL},
    {"escapes in every string",
     "{\"batch\":\"" ID "\",\"system\":\"s" OSC "\",\"action\":\"retry\",\"reason\":\"r" OSC
     "\",\"selection\":\"x" OSC "\\u009b31m\",\"created\":\"2026" OSC "\",\"operator\":\"o"
     OSC "\\u202e\"}\n" ITEMS "{\"total\":2}\n", NULL, NULL},
    {"action with an escape", HEAD("\"retry" OSC "\"") ITEMS "{\"total\":2}\n",
     "line 1: the header's action is not one redrive knows", NULL},
    {"unknown action", HEAD("\"nuke\"") ITEMS "{\"total\":2}\n",
     "line 1: the header's action is not one redrive knows", NULL},
    {"action a number", HEAD("7") ITEMS "{\"total\":2}\n",
     "line 1: the header's action is not one redrive knows", NULL},
    {"huge total", HEAD("\"retry\"") ITEMS "{\"total\":999999999999}\n",
     "its end line says 999999999999 items, it has 2", NULL},
    {"total 1e300", HEAD("\"retry\"") ITEMS "{\"total\":1e300}\n",
     "line 4: the end line's total is not a count", NULL},
    {"negative total", HEAD("\"retry\"") ITEMS "{\"total\":-2}\n",
     "line 4: the end line's total is not a count", NULL},
    {"fractional total", HEAD("\"retry\"") ITEMS "{\"total\":1.5}\n",
     "line 4: the end line's total is not a count", NULL},
    {"total a string", HEAD("\"retry\"") ITEMS "{\"total\":\"2\"}\n",
     "line 4: the end line's total is not a count", NULL},
    {"two end lines", HEAD("\"retry\"") ITEMS "{\"total\":2}\n{\"total\":2}\n",
     "line 5: a second end line", NULL},
    {"no end line", HEAD("\"retry\"") ITEMS, "no end line (not a complete batch record)", NULL},
    {"another batch's id",
     "{\"batch\":\"fedcba9876543210\",\"action\":\"retry\"}\n" ITEMS "{\"total\":2}\n",
     "line 1: the header's batch id is not its file name's", NULL},
    {"system a number",
     "{\"batch\":\"" ID "\",\"system\":1e300,\"action\":\"retry\"}\n" ITEMS "{\"total\":2}\n",
     "line 1: the header's system is not a string", NULL},
    {"no header", ITEMS "{\"total\":2}\n", "line 1: no header", NULL},
    {"a line not of a record", HEAD("\"retry\"") ITEMS "{\"curl\":1}\n{\"total\":2}\n",
     "line 4: not a line of a batch record", NULL},
    {"garbage", HEAD("\"retry\"") "\x1b]0;owned\x07\n" ITEMS "{\"total\":2}\n",
     "line 2: not a line of a batch record", NULL},
    {"an item after the end", HEAD("\"retry\"") ITEMS "{\"total\":2}\n[\"9\",null,null,0,null]\n",
     "line 5: an item after the end line", NULL},
    {"abandon line cut short", HEAD("\"retry\"") ITEMS "{\"total\":2}\n{\"abandoned\":\"20",
     NULL, NULL},
    /* issue 35: a batch's control lines (batchctl.c): a run's start, a pause with its reason */
    {"an open and a paused control line", HEAD("\"retry\"") ITEMS "{\"total\":2}\n"
     "{\"control\":\"open\",\"at\":\"T\",\"rate\":5,\"concurrency\":8,\"operator\":\"o\"}\n"
     "{\"control\":\"paused\",\"at\":\"T\",\"rate\":5,\"concurrency\":8,\"reason\":\"canary: " OSC
     "\",\"operator\":\"o\"}\n", NULL, NULL},
    {"a paused line before the end", HEAD("\"retry\"") ITEMS
     "{\"control\":\"paused\",\"reason\":\"x\"}\n{\"total\":2}\n",
     "line 4: not a line of a batch record", NULL},
    {"a paused line whose reason is not a string", HEAD("\"retry\"") ITEMS "{\"total\":2}\n"
     "{\"control\":\"paused\",\"reason\":7}\n",
     "line 5: a control line that cannot be read", NULL},
    {"a control line's state not a string", HEAD("\"retry\"") ITEMS "{\"total\":2}\n"
     "{\"control\":7}\n",
     "line 5: a control line that cannot be read", NULL},
    {"a control line's rate a string: the system's own", HEAD("\"retry\"") ITEMS "{\"total\":2}\n"
     "{\"control\":\"open\",\"rate\":\"fast\",\"concurrency\":8}\n", NULL, NULL},
    {"a control line's window 1e300: the system's own", HEAD("\"retry\"") ITEMS "{\"total\":2}\n"
     "{\"control\":\"open\",\"rate\":5,\"concurrency\":1e300}\n", NULL, NULL},
    {"a fingerprint with escapes (an error's text: sanitized where shown)",
     HEAD("\"retry\"") "[\"1001\",null,\"boom " OSC "\",1,null]\n[\"1002\",null,\"\",0,null]\n"
     "{\"total\":2}\n", NULL, NULL},
    {"attempt 1e300", HEAD("\"retry\"") "[\"1001\",null,null,1e300,null]\n[\"1002\",null,null,0,null]\n"
     "{\"total\":2}\n", NULL, "line 2: item 0: its attempt is not a count"},
    {"negative attempt", HEAD("\"retry\"") "[\"1001\",null,null,0,null]\n[\"1002\",null,null,-3,null]\n"
     "{\"total\":2}\n", NULL, "line 3: item 1: its attempt is not a count"},
    {"id with an escape", HEAD("\"retry\"") "[\"10" OSC "\",null,null,0,null]\n"
     "[\"1002\",null,null,0,null]\n{\"total\":2}\n", NULL, "line 2: item 0 cannot be read"},
    {"id a number", HEAD("\"retry\"") "[1001,null,null,0,null]\n[\"1002\",null,null,0,null]\n"
     "{\"total\":2}\n", NULL, "line 2: item 0 cannot be read"},
    {"item not json", HEAD("\"retry\"") "[\"1001\",null,\n[\"1002\",null,null,0,null]\n"
     "{\"total\":2}\n", NULL, "line 2: item 0 cannot be read"},
};
enum { N = sizeof recs / sizeof *recs };

static bool clean(const char *s)
{
    for (; s && *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return false;
    return true;
}

static void write_rec(const char *dir, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/batches/" ID ".batch", dir);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    chmod(path, 0600);
}

static void check_one(const char *dir, const char *journal, size_t i)
{
    char why[512], want[256];
    write_rec(dir, recs[i].text);
    rd_batch_info *v;
    size_t n;
    CHECK_MSG(batchrec_list(journal, &v, &n, why, sizeof why), recs[i].name);
    CHECK_MSG(n == 1, recs[i].name);
    if (n != 1)
        return;
    snprintf(want, sizeof want, "batch record %s/batches/" ID ".batch is damaged: %s", dir,
             recs[i].damage ? recs[i].damage : "");
    if (recs[i].damage) {
        CHECK_MSG(v[0].damaged && strcmp(v[0].damaged, want) == 0,
                  v[0].damaged ? v[0].damaged : recs[i].name);
        CHECK_MSG(strcmp(batch_info_state(&v[0]), "damaged") == 0 && !v[0].action &&
                  !v[0].system && v[0].total == 0 && strcmp(v[0].id, ID) == 0, recs[i].name);
        rd_batch_info b;
        CHECK_MSG(!batchrec_find(journal, ID, &b, why, sizeof why), recs[i].name);
        CHECK_MSG(strcmp(why, want) == 0, why);
        batch_info_clear(&b);
    } else {
        const rd_batch_info *b = &v[0];
        CHECK_MSG(!b->damaged && b->total == 2 && strcmp(b->action, "retry") == 0,
                  b->damaged ? b->damaged : recs[i].name);
        CHECK_MSG(clean(b->system) && clean(b->reason) && clean(b->selection) &&
                  clean(b->created) && clean(b->operator_), recs[i].name);
        bool paused = b->pause_reason != NULL;        /* the paused row: its reason clean */
        CHECK_MSG(!b->abandoned && strcmp(batch_info_state(b), paused ? "paused" : "open") == 0,
                  recs[i].name);
        CHECK_MSG(!paused || (clean(b->pause_reason) && b->rate == 5 && b->concurrency == 8),
                  recs[i].name);
        snprintf(want, sizeof want, "batch record %s/batches/" ID ".batch is damaged: %s", dir,
                 recs[i].items ? recs[i].items : "");
        bool ok = batchrec_check_items(b, why, sizeof why);
        CHECK_MSG(ok == !recs[i].items, recs[i].name);
        CHECK_MSG(ok || strcmp(why, want) == 0, why);
    }
    batch_infos_free(v, n);
}

int main(void)
{
    char dir[] = "/tmp/rd-batchhostile-XXXXXX", journal[600], sub[600];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    snprintf(sub, sizeof sub, "%s/batches", dir);
    CHECK(mkdir(sub, 0700) == 0);
    for (size_t i = 0; i < N; i++)
        check_one(dir, journal, i);
    /* the sanitized strings: control characters shown, not sent to a terminal */
    write_rec(dir, recs[1].text);
    rd_batch_info b;
    char why[512];
    CHECK_MSG(batchrec_find(journal, ID, &b, why, sizeof why), why);
    CHECK_STR(b.system, "s\xe2\x90\x9b]0;owned\xe2\x90\x87");
    batch_info_clear(&b);
    /* a file whose name is not a batch id */
    snprintf(sub, sizeof sub, "%s/batches/" ID ".batch", dir);
    char bad[600];
    snprintf(bad, sizeof bad, "%s/batches/0123456789abcdeZ.batch", dir);
    CHECK(rename(sub, bad) == 0);
    rd_batch_info *v;
    size_t n;
    CHECK(batchrec_list(journal, &v, &n, why, sizeof why) && n == 1);
    char want[700];
    snprintf(want, sizeof want, "batch record %s is damaged: its file name is not a batch id", bad);
    CHECK_MSG(n == 1 && v[0].damaged && strcmp(v[0].damaged, want) == 0, n ? v[0].damaged : "");
    batch_infos_free(v, n);
    /* a FIFO in a record's place: refused at once (never a hang), named */
    CHECK(unlink(bad) == 0 && mkfifo(sub, 0600) == 0);
    CHECK(batchrec_list(journal, &v, &n, why, sizeof why) && n == 1);
    CHECK_MSG(n == 1 && v[0].damaged && strstr(v[0].damaged, sub) &&
              strcmp(batch_info_state(&v[0]), "damaged") == 0, n ? v[0].damaged : "");
    batch_infos_free(v, n);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_done("batchrec_hostile");
}
