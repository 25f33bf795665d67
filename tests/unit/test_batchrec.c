/* Batch records (actions/batchrec.h): one row per journal state of an item -> its state,
 * the counts `redrive batch list` prints, and the keys a --resend-unknown re-sends with. */
#include "../../src/actions/batchrec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static void append(const char *path, const char *line)
{
    FILE *f = fopen(path, "a");
    fputs(line, f);
    fputc('\n', f);
    fclose(f);
}

/* item i: its journal lines (a pending line with key K<i>, then the outcome code given) */
static const struct {
    const char *codes;       /* space-separated codes in order, "" = no line */
    rd_bitem want;
} items[] = {
    {"", BITEM_NONE},                               /* never sent */
    {"pending", BITEM_UNKNOWN},                     /* kill -9 in flight */
    {"pending ok", BITEM_OK},
    {"pending not_found", BITEM_FAILED},
    {"pending unknown", BITEM_UNKNOWN},             /* in flight when redrive stopped */
    {"pending maybe_applied", BITEM_UNKNOWN},       /* timeout after sending */
    {"pending aborted", BITEM_NONE},                /* stopped before re-sending after a 401 */
    {"pending maybe_applied pending ok", BITEM_OK}, /* --resend-unknown, the same key */
    {"pending unreachable", BITEM_FAILED},
};
enum { N = sizeof items / sizeof *items };

static void test_states(const char *dir)
{
    char journal[512], why[256];
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    rd_batchrec *r = batchrec_create(journal, "sys", "op", RD_ACT_RETRY, NULL, "status=failed",
                                     why, sizeof why);
    CHECK_MSG(r != NULL, why);
    char ids[N][16];
    for (size_t i = 0; i < N; i++) {
        snprintf(ids[i], sizeof ids[i], "%zu", 100 + i);
        rd_target t = {.id = ids[i]};
        CHECK(batchrec_add(r, &t, why, sizeof why));
    }
    CHECK(batchrec_commit(r, why, sizeof why));
    char bid[17];
    snprintf(bid, sizeof bid, "%s", batchrec_id(r));
    batchrec_free(r);
    /* another batch's lines and a line without an item are not this batch's */
    append(journal, "{\"batch\":\"ffffffffffffffff\",\"item\":0,\"code\":\"ok\"}");
    append(journal, "not json at all");
    for (size_t i = 0; i < N; i++) {
        char codes[128], *save = NULL, line[512];
        snprintf(codes, sizeof codes, "%s", items[i].codes);
        for (char *c = strtok_r(codes, " ", &save); c; c = strtok_r(NULL, " ", &save)) {
            /* spaces after the colons: the reader does not depend on cJSON's layout */
            snprintf(line, sizeof line, "{\"batch\": \"%s\", \"item\": %zu, \"code\": \"%s\", "
                     "\"idempotency_key\": \"%032zx\"}", bid, i, c, i + 1);
            append(journal, line);
        }
    }
    rd_batch_info b;
    CHECK_MSG(batchrec_find(journal, bid, &b, why, sizeof why), why);
    CHECK(b.total == N && !b.abandoned && strcmp(b.system, "sys") == 0);
    unsigned char *st;
    rd_bitem_key *keys;
    size_t nkeys;
    CHECK(batchrec_states(journal, &b, &st, &keys, &nkeys, why, sizeof why));
    size_t ok = 0, failed = 0, unknown = 0;
    for (size_t i = 0; i < N; i++) {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "item %zu (%s)", i, items[i].codes);
        CHECK_MSG(st[i] == items[i].want, ctx);
        ok += items[i].want == BITEM_OK;
        failed += items[i].want == BITEM_FAILED;
        unknown += items[i].want == BITEM_UNKNOWN;
        bool has_key = false;
        for (size_t k = 0; k < nkeys; k++)
            if (keys[k].item == i) {
                char want[33];
                snprintf(want, sizeof want, "%032zx", i + 1);
                has_key = strcmp(keys[k].key, want) == 0;
            }
        CHECK_MSG(has_key == (items[i].want == BITEM_UNKNOWN), ctx);
    }
    CHECK(b.ok == ok && b.failed == failed && b.unknown == unknown);
    CHECK(strcmp(batch_info_state(&b), "open") == 0);
    /* the record is private, its items in order */
    struct stat sb;
    CHECK(stat(b.path, &sb) == 0 && (sb.st_mode & 0777) == 0600);
    rd_batchrd *rd = batchrd_open(b.path, why, sizeof why);
    size_t item, n = 0;
    rd_target t;
    while (rd && batchrd_next(rd, &item, &t)) {
        CHECK(item == n && strcmp(t.id, ids[n]) == 0);
        n++;
    }
    batchrd_close(rd);
    CHECK(n == N);
    CHECK(batchrec_abandon(&b, "op", why, sizeof why));
    batch_info_clear(&b);
    CHECK(batchrec_find(journal, bid, &b, why, sizeof why) && b.abandoned);
    CHECK(strcmp(batch_info_state(&b), "abandoned") == 0);
    batch_info_clear(&b);
    CHECK(!batchrec_find(journal, "0123456789abcdef", &b, why, sizeof why));
    CHECK(!batchrec_find(journal, "../etc/passwd", &b, why, sizeof why));
    free(st);
    free(keys);
}

int main(void)
{
    char dir[] = "/tmp/rd-batchrec-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    test_states(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_done("batchrec");
}
