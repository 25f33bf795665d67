/* Batch records (actions/batchrec.h): one row per journal state of an item -> its state,
 * the counts `redrive batch list` prints, and the keys a --resend-unknown re-sends with. */
#include "../../src/actions/batchrec.h"
#include "../../src/actions/journal.h"

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
    {"held", BITEM_HELD},                           /* no longer eligible at send time */
    {"pending unknown held", BITEM_HELD},           /* held by a later run's check */
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
    size_t ok = 0, failed = 0, unknown = 0, held = 0;
    for (size_t i = 0; i < N; i++) {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "item %zu (%s)", i, items[i].codes);
        CHECK_MSG(st[i] == items[i].want, ctx);
        ok += items[i].want == BITEM_OK;
        failed += items[i].want == BITEM_FAILED;
        unknown += items[i].want == BITEM_UNKNOWN;
        held += items[i].want == BITEM_HELD;
        bool has_key = false;
        for (size_t k = 0; k < nkeys; k++)
            if (keys[k].item == i) {
                char want[33];
                snprintf(want, sizeof want, "%032zx", i + 1);
                has_key = strcmp(keys[k].key, want) == 0;
            }
        CHECK_MSG(has_key == (items[i].want == BITEM_UNKNOWN), ctx);
    }
    CHECK(b.ok == ok && b.failed == failed && b.unknown == unknown && b.held == held && held == 2);
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

/* ---- damaged journal lines ------------------------------------------------------------ */

static void append_raw(const char *path, const char *bytes, size_t len)
{
    FILE *f = fopen(path, "a");
    fwrite(bytes, 1, len, f);
    fclose(f);
}

/* Item `item`'s journal line as redrive writes it (JSON and a newline). */
static char *item_line(const char *bid, const char *target, const char *code, size_t item,
                       const char *key)
{
    const char *targets[] = {target};
    rd_journal_rec rec = {.operator_ = "op", .system = "sys", .action = "retry",
                          .targets = targets, .n_targets = 1, .idempotency_key = key,
                          .result = "sending", .code = code, .batch = bid, .has_item = true,
                          .item = item};
    return journal_line(&rec);
}

static void put_line(const char *journal, const char *bid, size_t item, const char *code)
{
    char target[16], key[33];
    snprintf(target, sizeof target, "%zu", 100 + item);
    snprintf(key, sizeof key, "%032zx", item + 1);
    char *l = item_line(bid, target, code, item, key);
    append_raw(journal, l, strlen(l));
    free(l);
}

/* Item `item`'s pending line cut just before `at` (a write the disk stopped), + tail. */
static void put_cut(const char *journal, const char *bid, size_t item, const char *at,
                    const char *tail)
{
    char target[16], key[33];
    snprintf(target, sizeof target, "%zu", 100 + item);
    snprintf(key, sizeof key, "%032zx", item + 1);
    char *l = item_line(bid, target, "pending", item, key);
    const char *cut = strstr(l, at);
    CHECK_MSG(cut != NULL, at);
    append_raw(journal, l, cut ? (size_t)(cut - l) : 0);
    append_raw(journal, tail, strlen(tail));
    free(l);
}

/* Item `item`'s pending line with `from` replaced by `to` (a damaged or tampered line). */
static void put_edited(const char *journal, const char *bid, size_t item, const char *from,
                       const char *to)
{
    char target[16], key[33], buf[1024];
    snprintf(target, sizeof target, "%zu", 100 + item);
    snprintf(key, sizeof key, "%032zx", item + 1);
    char *l = item_line(bid, target, "pending", item, key);
    const char *at = strstr(l, from);
    CHECK_MSG(at != NULL, from);
    snprintf(buf, sizeof buf, "%.*s%s%s", at ? (int)(at - l) : 0, l, to,
             at ? at + strlen(from) : "");
    append_raw(journal, buf, strlen(buf));
    free(l);
}

static char *new_batch(const char *journal, size_t n, char bid[17])
{
    char why[256];
    rd_batchrec *r = batchrec_create(journal, "sys", "op", RD_ACT_RETRY, NULL, "status=failed",
                                     why, sizeof why);
    CHECK_MSG(r != NULL, why);
    for (size_t i = 0; i < n; i++) {
        char id[16];
        snprintf(id, sizeof id, "%zu", 100 + i);
        rd_target t = {.id = id};
        CHECK(batchrec_add(r, &t, why, sizeof why));
    }
    CHECK(batchrec_commit(r, why, sizeof why));
    snprintf(bid, 17, "%s", batchrec_id(r));
    batchrec_free(r);
    return bid;
}

/* want[i]: 'o' ok, 'n' none, 'u' unknown with key K<i>, '?' unknown without a key */
static void check_items(const char *journal, const char *bid, const char *want)
{
    char why[256];
    rd_batch_info b;
    CHECK_MSG(batchrec_find(journal, bid, &b, why, sizeof why), why);
    unsigned char *st = NULL;
    rd_bitem_key *keys = NULL;
    size_t nkeys = 0, n = strlen(want), ok = 0, unknown = 0;
    CHECK(b.total == n);
    CHECK(batchrec_states(journal, &b, &st, &keys, &nkeys, why, sizeof why));
    for (size_t i = 0; i < n && i < b.total; i++) {
        char ctx[64], key[33] = "";
        snprintf(ctx, sizeof ctx, "item %zu: want %c, state %d", i, want[i], st[i]);
        rd_bitem w = want[i] == 'o' ? BITEM_OK : want[i] == 'n' ? BITEM_NONE : BITEM_UNKNOWN;
        CHECK_MSG(st[i] == w, ctx);
        for (size_t k = 0; k < nkeys; k++)
            if (keys[k].item == i)
                snprintf(key, sizeof key, "%s", keys[k].key);
        char wkey[33] = "";
        if (want[i] == 'u')
            snprintf(wkey, sizeof wkey, "%032zx", i + 1);
        CHECK_MSG(strcmp(key, wkey) == 0, ctx);
        ok += w == BITEM_OK;
        unknown += w == BITEM_UNKNOWN;
    }
    CHECK(b.ok == ok && b.unknown == unknown && b.failed == 0);
    free(st);
    free(keys);
    batch_info_clear(&b);
}

/* A fragment with the next line glued to it, lines damaged in the middle, tampered item
 * numbers: the glued line is read whole; an item a damaged line names (by its number, else
 * by its target) is unknown, with the key of that line; a fragment that names no batch is
 * no item's. */
static void test_damaged_lines(const char *dir)
{
    char journal[512], bid[17];
    snprintf(journal, sizeof journal, "%s/damaged.jsonl", dir);
    new_batch(journal, 13, bid);
    put_line(journal, bid, 0, "pending");
    put_line(journal, bid, 0, "ok");
    /* item 1: the disk filled up before the batch id; item 2's pending line glued to it */
    put_cut(journal, bid, 1, "\"code\"", "");
    put_line(journal, bid, 2, "pending");
    /* item 3: cut after the batch id, before its number; item 4 glued */
    put_cut(journal, bid, 3, "\"item\"", "");
    put_line(journal, bid, 4, "pending");
    /* item 5: damaged in the middle, its number whole */
    put_edited(journal, bid, 5, "\"http_status\":0", "\"http_status\":0x");
    /* item 12: cut in its number ("item":1|2): not item 1, told by its target */
    put_cut(journal, bid, 12, "2}", "\n");
    /* tampered numbers: told by their targets */
    put_edited(journal, bid, 8, "\"item\":8}", "\"item\":1e300}");
    put_edited(journal, bid, 9, "\"item\":9}", "\"item\":-1}");
    put_edited(journal, bid, 10, "\"item\":10}", "\"item\":\"10\"}");
    check_items(journal, bid, "onuuuunnuuunu");

    /* the journal's own reader: the glued line is an entry of its own, the fragment another */
    rd_journal_entry *e;
    size_t n;
    char why[256];
    CHECK(journal_read_tail(journal, 100, &e, &n, why, sizeof why));
    size_t whole = 0, malformed = 0;
    for (size_t i = 0; i < n; i++) {
        whole += !e[i].malformed && e[i].idempotency_key &&
                 (!strcmp(e[i].idempotency_key, "00000000000000000000000000000003") ||
                  !strcmp(e[i].idempotency_key, "00000000000000000000000000000005"));
        malformed += e[i].malformed;
    }
    CHECK_MSG(whole == 2, "items 2 and 4, glued to fragments, read whole");
    CHECK(malformed == 4);   /* the fragments of items 1, 3, 12 and the damaged item 5 */
    journal_entries_free(e, n);
}

/* A damaged line that names the batch and neither an item nor a target: any item not sent
 * may be it, every one of them is unknown (no key to re-send it with). */
static void test_damaged_blind(const char *dir)
{
    char journal[512], bid[17], line[256];
    snprintf(journal, sizeof journal, "%s/blind.jsonl", dir);
    new_batch(journal, 3, bid);
    put_line(journal, bid, 0, "pending");
    put_line(journal, bid, 0, "ok");
    snprintf(line, sizeof line, "{\"time\":\"2026-01-01T00:00:00.000Z\",\"batch\":\"%s\","
             "\"code\":\"pend\n", bid);
    append_raw(journal, line, strlen(line));
    check_items(journal, bid, "o??");
}

int main(void)
{
    char dir[] = "/tmp/rd-batchrec-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    test_states(dir);
    test_damaged_lines(dir);
    test_damaged_blind(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_done("batchrec");
}
