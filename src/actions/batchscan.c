/* The state of a batch's items, read back from the journal (batchrec.h): one pass over
 * its lines, a damaged line read in pieces (journal_piece_end), an item whose state
 * cannot be read made unknown, never "not sent". */
#include "batchrec_priv.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/fsperm.h"
#include "../core/xalloc.h"
#include "actions_priv.h"
#include "journal.h"

enum { DMG_MAX = 256 };   /* damaged pieces told by their target, per batch */

/* A damaged piece of a batch that gives its target but not its item's number. */
typedef struct scan_dmg {
    char *target;
    char key[33];
} scan_dmg;

/* The scan's view of one batch: its states and (when asked) its unknown items' keys. */
typedef struct scan_batch {
    rd_batch_info *info;
    unsigned char *st;
    rd_bitem_key *keys;
    size_t nkeys, capkeys;
    bool want_keys;
    scan_dmg *dmg;
    size_t ndmg, capdmg;
    bool blind;          /* a damaged piece that gives neither item nor target */
} scan_batch;

static void key_set(scan_batch *s, size_t item, const char *key, bool keep)
{
    size_t k = s->nkeys;
    while (k-- > 0 && s->keys[k].item != item)
        ;
    if (k == (size_t)-1 && keep && key && strlen(key) == 32) {
        xgrow(&s->keys, &s->capkeys, s->nkeys + 1, sizeof *s->keys);
        k = s->nkeys++;
    }
    if (k == (size_t)-1)
        return;
    if (!keep) {
        s->keys[k] = s->keys[--s->nkeys];
        return;
    }
    if (key && strlen(key) == 32) {
        s->keys[k].item = item;
        memcpy(s->keys[k].key, key, 33);
    }
}

static bool has_key(const scan_batch *s, size_t item)
{
    for (size_t k = 0; k < s->nkeys; k++)
        if (s->keys[k].item == item)
            return true;
    return false;
}

/* Item i may have been sent (its line is damaged): unknown unless an outcome was read, with
 * the damaged line's key when it has none yet. */
static void mark_unknown(scan_batch *s, size_t i, const char *key)
{
    if (s->st[i] == BITEM_OK || s->st[i] == BITEM_FAILED || s->st[i] == BITEM_HELD)
        return;
    s->st[i] = BITEM_UNKNOWN;
    if (s->want_keys && key && key[0] && !has_key(s, i))
        key_set(s, i, key, true);
}

/* ---- a damaged piece, read as text ---- */

/* Where the value of "key" starts in p[0..len) (after the colon and blanks), or NULL. */
static const char *raw_value(const char *p, size_t len, const char *key)
{
    char pat[40];
    int n = snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *end = p + len;
    for (const char *q = p; (q = memmem(q, (size_t)(end - q), pat, (size_t)n)); q++) {
        const char *v = q + n;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        if (v >= end || *v != ':')
            continue;
        for (v++; v < end && (*v == ' ' || *v == '\t'); v++)
            ;
        return v < end ? v : NULL;
    }
    return NULL;
}

/* A string value at v (a quote) up to its closing quote, without escapes; NULL if cut. */
static char *raw_string(const char *v, const char *end)
{
    if (!v || v >= end || *v != '"')
        return NULL;
    const char *q = ++v;
    while (q < end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
        q++;
    return q < end && *q == '"' ? xstrndup(v, (size_t)(q - v)) : NULL;
}

/* "item": a number whole (followed by what ends a value inside a line: a number cut at a
 * line's end may have had more digits, it is not read). */
static bool raw_item(const char *p, size_t len, size_t total, size_t *item)
{
    const char *v = raw_value(p, len, "item"), *end = p + len;
    size_t n = 0, digits = 0;
    for (; v && v < end && *v >= '0' && *v <= '9' && digits < 15; v++, digits++)
        n = n * 10 + (size_t)(*v - '0');
    if (!v || !digits || v >= end || !*v || !strchr(",} \t", *v) || n >= total)
        return false;
    *item = n;
    return true;
}

static void raw_key(const char *p, size_t len, char key[33])
{
    char *k = raw_string(raw_value(p, len, "idempotency_key"), p + len);
    bool ok = k && strlen(k) == 32 && strspn(k, "0123456789abcdef") == 32;
    snprintf(key, 33, "%s", ok ? k : "");
    free(k);
}

/* A piece that names the batch and whose item's state cannot be read: its item unknown
 * now, or its target kept for after the scan, or (neither readable) every item not sent. */
static void scan_damaged(scan_batch *s, const char *p, size_t len)
{
    char key[33];
    size_t item;
    raw_key(p, len, key);
    if (raw_item(p, len, s->info->total, &item)) {
        mark_unknown(s, item, key);
        return;
    }
    const char *t = raw_value(p, len, "targets");
    while (t && t < p + len && (*t == '[' || *t == ' '))
        t++;
    char *target = raw_string(t, p + len);
    if (!target || s->ndmg >= DMG_MAX) {
        free(target);
        s->blind = true;
        return;
    }
    xgrow(&s->dmg, &s->capdmg, s->ndmg + 1, sizeof *s->dmg);
    s->dmg[s->ndmg].target = target;
    memcpy(s->dmg[s->ndmg++].key, key, 33);
}

/* After the scan: the items the damaged pieces told by their target, or all not sent. */
static void resolve_damaged(scan_batch *s)
{
    if (s->blind)
        for (size_t i = 0; i < s->info->total; i++)
            if (s->st[i] == BITEM_NONE)
                mark_unknown(s, i, NULL);
    char ignored[256];
    rd_batchrd *rd = s->ndmg ? batchrd_open(s->info->path, ignored, sizeof ignored) : NULL;
    size_t item;
    rd_target t;
    while (rd && batchrd_next(rd, &item, &t)) {
        char *text = action_target_text(t.id, t.parent);
        for (size_t k = 0; k < s->ndmg && item < s->info->total; k++)
            if (s->st[item] == BITEM_NONE && strcmp(s->dmg[k].target, text) == 0)
                mark_unknown(s, item, s->dmg[k].key);
        free(text);
    }
    batchrd_close(rd);
    for (size_t k = 0; k < s->ndmg; k++)
        free(s->dmg[k].target);
    free(s->dmg);
    s->dmg = NULL;
    s->ndmg = s->capdmg = 0;
}

/* ---- the journal's lines ---- */

/* One journal line of a batch item: its item's state after it. false when the line names
 * the batch but its item or code cannot be read. */
static bool scan_line(scan_batch *s, const cJSON *o)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, "item");
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(o, "code");
    double d = cJSON_IsNumber(it) ? it->valuedouble : -1;
    if (!(d >= 0 && d < (double)s->info->total && d == (double)(size_t)d) ||
        !cJSON_IsString(code))
        return false;
    size_t i = (size_t)d;
    const char *c = code->valuestring;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "idempotency_key");
    const char *key = cJSON_IsString(k) ? k->valuestring : NULL;
    rd_bitem st;
    if (!strcmp(c, "pending") || !strcmp(c, "unknown") || !strcmp(c, "maybe_applied"))
        st = BITEM_UNKNOWN;
    else if (!strcmp(c, "ok"))
        st = BITEM_OK;
    else if (!strcmp(c, "aborted"))
        st = BITEM_NONE;         /* journaled, stopped before being sent again */
    else if (!strcmp(c, "held"))
        st = BITEM_HELD;         /* no longer eligible at send time: never sent */
    else
        st = BITEM_FAILED;
    s->st[i] = (unsigned char)st;
    if (s->want_keys)
        key_set(s, i, key, st == BITEM_UNKNOWN);
    return true;
}

/* The batch of v[0..n) a piece names ("batch":"ID"), or NULL. */
static scan_batch *piece_batch(scan_batch *v, size_t n, const char *p, size_t len)
{
    const char *b = raw_value(p, len, "batch");
    if (!b || p + len - b < 18 || *b != '"' || b[17] != '"')
        return NULL;
    for (size_t k = 0; k < n; k++)
        if (memcmp(b + 1, v[k].info->id, 16) == 0)
            return &v[k];
    return NULL;
}

static void scan_piece(scan_batch *v, size_t n, const char *p, size_t len)
{
    scan_batch *s = piece_batch(v, n, p, len);
    if (!s)
        return;
    cJSON *o = cJSON_ParseWithLength(p, len);
    const cJSON *bid = cJSON_GetObjectItemCaseSensitive(o, "batch");
    bool named = cJSON_IsString(bid) && strcmp(bid->valuestring, s->info->id) == 0;
    if (!cJSON_IsObject(o) || (named && !scan_line(s, o)))
        scan_damaged(s, p, len);
    cJSON_Delete(o);
}

/* One line of the journal: whole, or in pieces when it does not parse (a fragment with
 * the next line glued to it). */
static void scan_text(scan_batch *v, size_t n, const char *line, size_t len)
{
    if (!memmem(line, len, "\"batch\"", 7))
        return;
    if (journal_piece_end(line, len) == len || journal_line_parses(line, len)) {
        scan_piece(v, n, line, len);
        return;
    }
    for (size_t off = 0, k; off < len; off += k) {
        k = journal_piece_end(line + off, len - off);
        scan_piece(v, n, line + off, k);
    }
}

/* One pass over the journal for the batches v[0..n). */
static bool scan_journal(const char *journal, scan_batch *v, size_t n, char *why, size_t whycap)
{
    char *def = NULL;
    if (!journal && !(journal = def = journal_default_path()))
        return true;
    int fd = fsperm_open(journal, O_RDONLY, 0, "journal", FSP_REGULAR, NULL, why, whycap);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    bool missing = fd < 0 && errno == ENOENT;
    free(def);
    if (!f) {
        if (fd >= 0)
            close(fd);
        return missing;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0)
        scan_text(v, n, line, (size_t)len);
    free(line);
    fclose(f);
    for (size_t k = 0; k < n; k++)
        resolve_damaged(&v[k]);
    return true;
}

static void count_states(rd_batch_info *b, const unsigned char *st)
{
    b->ok = b->failed = b->unknown = b->held = 0;
    for (size_t i = 0; i < b->total; i++) {
        b->held += st[i] == BITEM_HELD;
        b->ok += st[i] == BITEM_OK;
        b->failed += st[i] == BITEM_FAILED;
        b->unknown += st[i] == BITEM_UNKNOWN;
    }
}

bool batchscan_count(const char *journal, rd_batch_info *v, size_t n, char *why,
                     size_t whycap)
{
    scan_batch *s = xcalloc(n ? n : 1, sizeof *s);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].damaged)
            continue;
        s[m].info = &v[i];
        s[m++].st = xcalloc(v[i].total ? v[i].total : 1, 1);
    }
    bool ok = scan_journal(journal, s, m, why, whycap);
    for (size_t i = 0; i < m; i++) {
        count_states(s[i].info, s[i].st);
        free(s[i].st);
    }
    free(s);
    return ok;
}

bool batchrec_states(const char *journal, const rd_batch_info *b, unsigned char **states,
                     rd_bitem_key **keys, size_t *nkeys, char *why, size_t whycap)
{
    rd_batch_info copy = *b;
    scan_batch s = {.info = &copy, .st = xcalloc(b->total ? b->total : 1, 1), .want_keys = true};
    bool ok = scan_journal(journal, &s, 1, why, whycap);
    *states = s.st;
    *keys = s.keys;
    *nkeys = s.nkeys;
    return ok;
}
