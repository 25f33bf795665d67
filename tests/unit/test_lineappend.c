/* Appending a line that a failed write leaves no trace of (actions/lineappend.h), for the
 * journal and a batch record's abandon line. A real short write: RLIMIT_FSIZE lets the
 * file grow only so far (write returns what fitted, the next write fails with EFBIG), as a
 * full disk does with ENOSPC. */
#include "../../src/actions/batchrec.h"
#include "../../src/actions/journal.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "check.h"

static off_t size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    static char buf[65536];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    return buf;
}

/* The file may grow `room` bytes past its size now (0: no limit). */
static void limit_growth(const char *path, off_t room)
{
    struct rlimit r;
    getrlimit(RLIMIT_FSIZE, &r);
    r.rlim_cur = room ? (rlim_t)(size_of(path) + room) : r.rlim_max;
    CHECK(setrlimit(RLIMIT_FSIZE, &r) == 0);
}

static bool append_retry(const char *journal, const char *target, char *why, size_t whycap)
{
    const char *targets[] = {target};
    rd_journal_rec rec = {.operator_ = "op", .system = "sys", .action = "retry",
                          .targets = targets, .n_targets = 1,
                          .idempotency_key = "0123456789abcdef0123456789abcdef",
                          .result = "sending", .code = "pending"};
    return journal_append(journal, &rec, why, whycap);
}

static bool parses(const char *l)
{
    cJSON *o = cJSON_Parse(l);
    bool ok = cJSON_IsObject(o);
    cJSON_Delete(o);
    return ok;
}

/* Every line of the file parses, except `fragment` (NULL: none), which is a line of its
 * own; the file ends in a newline. The number of lines. */
static size_t check_lines(const char *path, const char *fragment)
{
    char *text = slurp(path);
    size_t n = 0, len = strlen(text);
    CHECK(len > 0 && text[len - 1] == '\n');
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        n++;
        bool frag = fragment && strcmp(l, fragment) == 0;
        CHECK_MSG(frag || parses(l), l);
    }
    return n;
}

static void test_journal(const char *dir)
{
    char journal[512], why[256];
    snprintf(journal, sizeof journal, "%s/state/journal.jsonl", dir);
    CHECK(append_retry(journal, "1", why, sizeof why));
    CHECK(append_retry(journal, "2", why, sizeof why));
    off_t before = size_of(journal);
    /* the disk fills up 40 bytes into the next line: refused, nothing of it left */
    limit_growth(journal, 40);
    CHECK(!append_retry(journal, "3", why, sizeof why));
    limit_growth(journal, 0);
    CHECK_MSG(strstr(why, "cannot write journal") && strstr(why, "File too large"), why);
    CHECK(size_of(journal) == before);
    CHECK(check_lines(journal, NULL) == 2);
    /* the next line is whole, on its own line */
    CHECK(append_retry(journal, "4", why, sizeof why));
    CHECK(check_lines(journal, NULL) == 3);
    /* a fragment left by a crash (or by an older redrive): the next line starts anew */
    const char frag[] = "{\"time\":\"2026-01-01T00:00:00.000Z\",\"operator\":\"o";
    FILE *f = fopen(journal, "a");
    fputs(frag, f);
    fclose(f);
    CHECK(append_retry(journal, "5", why, sizeof why));
    CHECK(check_lines(journal, frag) == 5);
    rd_journal_entry *e;
    size_t n;
    CHECK(journal_read_tail(journal, 10, &e, &n, why, sizeof why));
    CHECK(n == 5 && e[3].malformed && !e[4].malformed && e[4].n_targets == 1 &&
          strcmp(e[4].targets[0], "5") == 0);
    journal_entries_free(e, n);
}

static void test_abandon(const char *dir)
{
    char journal[512], why[256];
    snprintf(journal, sizeof journal, "%s/state/journal.jsonl", dir);
    rd_batchrec *r = batchrec_create(journal, "sys", "op", RD_ACT_RETRY, NULL, "status=failed",
                                     why, sizeof why);
    rd_target t = {.id = "1"};
    CHECK(r && batchrec_add(r, &t, why, sizeof why) && batchrec_commit(r, why, sizeof why));
    char bid[17];
    snprintf(bid, sizeof bid, "%s", batchrec_id(r));
    batchrec_free(r);
    rd_batch_info b;
    CHECK(batchrec_find(journal, bid, &b, why, sizeof why));
    off_t before = size_of(b.path);
    limit_growth(b.path, 10);
    CHECK(!batchrec_abandon(&b, "op", why, sizeof why));
    limit_growth(b.path, 0);
    CHECK_MSG(strstr(why, "cannot write the batch record") && strstr(why, "File too large"), why);
    CHECK(size_of(b.path) == before);
    batch_info_clear(&b);
    /* the record is whole: not abandoned, not damaged; then abandoned for good */
    CHECK_MSG(batchrec_find(journal, bid, &b, why, sizeof why), why);
    CHECK(!b.abandoned && !b.damaged);
    CHECK(batchrec_abandon(&b, "op", why, sizeof why));
    batch_info_clear(&b);
    CHECK(batchrec_find(journal, bid, &b, why, sizeof why) && b.abandoned);
    batch_info_clear(&b);
}

/* Valid UTF-8 (no overlong or surrogate check needed here: the sequences' shape). */
static int utf8_valid(const unsigned char *p)
{
    while (*p) {
        int n = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2
              : (*p & 0xf8) == 0xf0 ? 3 : -1;
        if (n < 0)
            return 0;
        for (int k = 1; k <= n; k++)
            if ((p[k] & 0xc0) != 0x80)
                return 0;
        p += n + 1;
    }
    return 1;
}

/* A hostile task's invalid bytes (a fingerprint, an id) never make the journal line
 * invalid JSON for other readers: each is written as U+FFFD, the rest kept. */
static void test_utf8_line(void)
{
    const char *targets[] = {"task-\xff\xfe"};
    rd_journal_rec rec = {.operator_ = "alice", .system = "alakai", .action = "retry",
                          .targets = targets, .n_targets = 1, .result = "ok \xc3",
                          .code = "ok", .fp = "Boom \x80\x81 at h\xc3\xa9llo"};
    char *line = journal_line(&rec);
    CHECK(line != NULL);
    CHECK(line && utf8_valid((const unsigned char *)line));
    CHECK(line && strstr(line, "\"fp\":\"Boom \xef\xbf\xbd\xef\xbf\xbd at h\xc3\xa9llo\"") != NULL);
    CHECK(line && strstr(line, "\"targets\":[\"task-\xef\xbf\xbd\xef\xbf\xbd\"]") != NULL);
    free(line);
}

int main(void)
{
    signal(SIGXFSZ, SIG_IGN);   /* past the limit: EFBIG, not a signal */
    char dir[] = "/tmp/rd-lineappend-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    test_journal(dir);
    test_abandon(dir);
    test_utf8_line();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_done("lineappend");
}
