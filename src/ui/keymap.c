#include "keymap.h"

#include <curses.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/datafile.h"
#include "../core/ini.h"
#include "../core/textutil.h"
#include "../core/xalloc.h"

typedef struct km_bind {
    ui_key seq[KM_SEQ_MAX];
    int n;
    ui_action act;
    int line;          /* 0 = built-in default */
} km_bind;

struct ui_keymap {
    km_bind *b;
    size_t n, cap;
    char *name;
};

static const struct { const char *name; ui_key key; } key_names[] = {
    {"enter", UK_FN | KEY_ENTER}, {"return", UK_FN | KEY_ENTER},
    {"escape", 27}, {"esc", 27}, {"tab", 9}, {"btab", UK_FN | KEY_BTAB},
    {"shift-tab", UK_FN | KEY_BTAB}, {"space", ' '}, {"plus", '+'},
    {"backspace", UK_FN | KEY_BACKSPACE}, {"up", UK_FN | KEY_UP},
    {"down", UK_FN | KEY_DOWN}, {"left", UK_FN | KEY_LEFT}, {"right", UK_FN | KEY_RIGHT},
    {"pgup", UK_FN | KEY_PPAGE}, {"ppage", UK_FN | KEY_PPAGE}, {"pageup", UK_FN | KEY_PPAGE},
    {"pgdn", UK_FN | KEY_NPAGE}, {"npage", UK_FN | KEY_NPAGE}, {"pagedown", UK_FN | KEY_NPAGE},
    {"home", UK_FN | KEY_HOME}, {"end", UK_FN | KEY_END}, {"insert", UK_FN | KEY_IC},
    {"delete", UK_FN | KEY_DC},
};

bool key_parse(const char *s, ui_key *out)
{
    if (!s || !*s)
        return false;
    if (strncmp(s, "alt-", 4) == 0 || strncmp(s, "M-", 2) == 0) {
        ui_key k;
        if (!key_parse(s + (s[0] == 'M' ? 2 : 4), &k) || (k & UK_ALT))
            return false;
        *out = UK_ALT | k;
        return true;
    }
    if ((strncmp(s, "ctrl-", 5) == 0 || strncmp(s, "C-", 2) == 0)) {
        const char *c = s + (s[0] == 'C' ? 2 : 5);
        if (strcmp(c, "space") == 0) { *out = 0; return true; }
        if (c[0] && !c[1] && ((c[0] >= 'a' && c[0] <= 'z') || strchr("@[\\]^_", c[0]))) {
            *out = c[0] & 0x1f;
            return true;
        }
        return false;
    }
    for (size_t i = 0; i < sizeof key_names / sizeof *key_names; i++)
        if (strcmp(s, key_names[i].name) == 0) {
            *out = key_names[i].key;
            return true;
        }
    if (s[0] == 'f' && s[1] >= '1' && s[1] <= '9') {
        int n = atoi(s + 1);
        if (n >= 1 && n <= 12) {
            *out = UK_FN | KEY_F(n);
            return true;
        }
    }
    /* a single UTF-8 character */
    unsigned char c = (unsigned char)s[0];
    size_t len = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (!len || strlen(s) != len || (len == 1 && c < 0x21) || c == 0x7f)
        return false;
    ui_key k = len == 1 ? c : (c & (0xff >> (len + 1)));
    for (size_t i = 1; i < len; i++) {
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            return false;
        k = (k << 6) | ((unsigned char)s[i] & 0x3f);
    }
    *out = k;
    return true;
}

static void put_utf8(ui_key k, char *out, size_t cap)
{
    char b[5] = {0};
    if (k < 0x80) b[0] = (char)k;
    else if (k < 0x800) { b[0] = (char)(0xc0 | (k >> 6)); b[1] = (char)(0x80 | (k & 0x3f)); }
    else if (k < 0x10000) {
        b[0] = (char)(0xe0 | (k >> 12)); b[1] = (char)(0x80 | ((k >> 6) & 0x3f));
        b[2] = (char)(0x80 | (k & 0x3f));
    } else {
        b[0] = (char)(0xf0 | (k >> 18)); b[1] = (char)(0x80 | ((k >> 12) & 0x3f));
        b[2] = (char)(0x80 | ((k >> 6) & 0x3f)); b[3] = (char)(0x80 | (k & 0x3f));
    }
    snprintf(out, cap, "%s", b);
}

void key_text(ui_key k, bool compact, char *out, size_t cap)
{
    if (k & UK_ALT) {
        char rest[32];
        key_text(k & ~UK_ALT, compact, rest, sizeof rest);
        snprintf(out, cap, "%s%s", compact ? "M-" : "alt-", rest);
        return;
    }
    if (k == ' ') { snprintf(out, cap, "%s", compact ? "spc" : "space"); return; }
    if (k == 27) { snprintf(out, cap, "%s", compact ? "esc" : "escape"); return; }
    if (k == '+') { snprintf(out, cap, "%s", compact ? "+" : "plus"); return; }
    if (k == 9) { snprintf(out, cap, "tab"); return; }
    if (k >= 0 && k < 0x20) {
        snprintf(out, cap, compact ? "^%c" : "ctrl-%c", k == 0 ? '@' : (char)(k | 0x60));
        return;
    }
    if (k & UK_FN) {
        for (size_t i = 0; i < sizeof key_names / sizeof *key_names; i++)
            if (key_names[i].key == k) {
                snprintf(out, cap, "%s", key_names[i].name);
                return;
            }
        for (int n = 1; n <= 12; n++)
            if (k == (UK_FN | KEY_F(n))) {
                snprintf(out, cap, "f%d", n);
                return;
            }
        snprintf(out, cap, "key-%d", k & ~UK_FN);
        return;
    }
    put_utf8(k, out, cap);
}

ui_key key_from_curses(int rc, unsigned ch)
{
    if (rc == KEY_CODE_YES) {
        if ((int)ch == KEY_ENTER) return UK_FN | KEY_ENTER;
        return UK_FN | (int)ch;
    }
    if (ch == '\r' || ch == '\n')
        return UK_FN | KEY_ENTER;
    if (ch == 127 || ch == 8)
        return UK_FN | KEY_BACKSPACE;
    return (ui_key)ch;
}

static void bind_add(ui_keymap *km, const ui_key *seq, int n, ui_action a, int line)
{
    xgrow(&km->b, &km->cap, km->n + 1, sizeof *km->b);
    km_bind *b = &km->b[km->n++];
    memset(b, 0, sizeof *b);
    memcpy(b->seq, seq, (size_t)n * sizeof *seq);
    b->n = n;
    b->act = a;
    b->line = line;
}

static void bind_remove_action(ui_keymap *km, ui_action a)
{
    size_t j = 0;
    for (size_t i = 0; i < km->n; i++)
        if (km->b[i].act != a)
            km->b[j++] = km->b[i];
    km->n = j;
}

/* "ctrl-x+r" or "ctrl-x r" (quoted) → seq; false on a bad key. */
static bool seq_parse(char *tok, ui_key *seq, int *n)
{
    *n = 0;
    if (strlen(tok) > 1 && strchr(tok, '+'))
        for (char *p = tok; *p; p++)
            if (*p == '+')
                *p = ' ';
    for (char *save = NULL, *k = strtok_r(tok, " ", &save); k; k = strtok_r(NULL, " ", &save)) {
        if (*n >= KM_SEQ_MAX || !key_parse(k, &seq[*n]))
            return false;
        (*n)++;
    }
    return *n > 0;
}

/* The built-in bindings, parsed from the action list once: every keymap starts as a copy
 * (parsing them was most of what a new keymap cost). */
static const ui_keymap *keymap_builtin(void)
{
    static ui_keymap built;
    static bool done;
    if (done)
        return &built;
    for (int a = 0; a < UA__COUNT; a++) {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", actlist_info((ui_action)a)->keys);
        for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
            ui_key seq[KM_SEQ_MAX];
            int n;
            char tok[64];
            snprintf(tok, sizeof tok, "%s", t);
            if (seq_parse(tok, seq, &n))
                bind_add(&built, seq, n, (ui_action)a, 0);
        }
    }
    done = true;
    return &built;
}

static void keymap_defaults(ui_keymap *km)
{
    const ui_keymap *d = keymap_builtin();
    xgrow(&km->b, &km->cap, d->n, sizeof *km->b);
    memcpy(km->b, d->b, d->n * sizeof *km->b);
    km->n = d->n;
}

ui_keymap *keymap_new(void)
{
    ui_keymap *km = xcalloc(1, sizeof *km);
    km->name = xstrdup("built-in");
    keymap_defaults(km);
    return km;
}

void keymap_free(ui_keymap *km)
{
    if (!km)
        return;
    free(km->b);
    free(km->name);
    free(km);
}

const char *keymap_name(const ui_keymap *km)
{
    return km->name;
}

static bool same_scope(ui_action a, ui_action b)
{
    return ((actlist_info(a)->flags ^ actlist_info(b)->flags) & (UA_DIALOG | UA_HSCROLL)) == 0;
}

/* Same sequence, or one a prefix of the other. */
static bool seq_clash(const km_bind *a, const km_bind *b)
{
    int n = a->n < b->n ? a->n : b->n;
    return memcmp(a->seq, b->seq, (size_t)n * sizeof *a->seq) == 0;
}

/* A binding's keys, space-separated (compact: the short names key_text gives). */
static void bind_text(const km_bind *b, bool compact, char *out, size_t cap)
{
    out[0] = 0;
    for (int i = 0; i < b->n; i++) {
        char k[32];
        key_text(b->seq[i], compact, k, sizeof k);
        size_t l = strlen(out);
        snprintf(out + l, cap - l, "%s%s", i ? " " : "", k);
    }
}

/* Conflict order: a file binding beats a built-in default, an earlier line a later one,
 * and on one line the earlier key. */
static int rank_cmp(const void *pa, const void *pb, void *ctx)
{
    const km_bind *b = ctx;
    size_t i = *(const size_t *)pa, j = *(const size_t *)pb;
    long li = b[i].line ? b[i].line : (long)INT_MAX + 1, lj = b[j].line ? b[j].line : (long)INT_MAX + 1;
    if (li != lj)
        return li < lj ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Bindings that stayed, chained by a hash of their first key (a clash needs the same first
 * key): a chain lists them in the order they stayed, so the winner named is the first. */
enum { KM_BUCKETS = 64 };

static unsigned first_key_bucket(const km_bind *b)
{
    return ((unsigned)b->seq[0] * 2654435761u) >> 26;   /* the top 6 bits: 64 buckets */
}

/* Report clashes and drop the losers: in conflict order, a binding stays unless it
 * clashes with one that stayed before it. Kept bindings keep their order (the file's
 * order shows in help); a binding is compared only with the kept ones sharing its first
 * key's bucket, so a hostile file costs O(n * same-key bindings), not O(n * kept). */
static void keymap_check(ui_keymap *km, ini_reader *r)
{
    if (km->n < 2)
        return;
    size_t *order = xcalloc(km->n, sizeof *order);
    size_t *next = xcalloc(km->n, sizeof *next);     /* chain links, index + 1; 0 ends */
    size_t head[KM_BUCKETS] = { 0 }, tail[KM_BUCKETS] = { 0 };
    bool *keep = xcalloc(km->n, sizeof *keep);
    for (size_t i = 0; i < km->n; i++)
        order[i] = i;
    qsort_r(order, km->n, sizeof *order, rank_cmp, km->b);
    for (size_t o = 0; o < km->n; o++) {
        const km_bind *a = &km->b[order[o]];
        unsigned h = first_key_bucket(a);
        const km_bind *winner = NULL;
        for (size_t k = head[h]; k && !winner; k = next[k - 1]) {
            const km_bind *b = &km->b[k - 1];
            if (a->seq[0] == b->seq[0] && seq_clash(a, b) && same_scope(a->act, b->act))
                winner = b;
        }
        if (!winner) {
            keep[order[o]] = true;
            if (tail[h])
                next[tail[h] - 1] = order[o] + 1;
            else
                head[h] = order[o] + 1;
            tail[h] = order[o] + 1;
        } else if (a->line > 0) {
            char s[64];
            bind_text(a, false, s, sizeof s);
            ini_error(r, a->line, "key '%s' for '%s' conflicts with '%s'", s,
                      actlist_info(a->act)->name, actlist_info(winner->act)->name);
        }
    }
    size_t j = 0;
    for (size_t i = 0; i < km->n; i++)
        if (keep[i])
            km->b[j++] = km->b[i];
    km->n = j;
    free(keep);
    free(next);
    free(order);
}

/* "action = key ..." (l->name, l->value); errors go through the reader. */
static void keymap_pair(ui_keymap *km, ini_reader *r, const ini_line *l)
{
    const char *name = l->name;
    ui_action a = actlist_find(name);
    if (a == UA_NONE) {
        ini_error(r, l->line, "unknown action '%s'", name);
        return;
    }
    bind_remove_action(km, a);
    const char *p = l->value;
    while (*p) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        char tok[64];
        size_t n = 0;
        char end = *p == '"' ? '"' : ' ';
        if (end == '"') p++;
        while (*p && *p != end && !(end == ' ' && *p == '\t') && n < sizeof tok - 1)
            tok[n++] = *p++;
        tok[n] = 0;
        if (*p == '"') p++;
        if (strcmp(tok, "none") == 0)
            continue;
        ui_key seq[KM_SEQ_MAX];
        int sn;
        char copy[64];
        snprintf(copy, sizeof copy, "%s", tok);
        if (!seq_parse(copy, seq, &sn)) {
            ini_error(r, l->line, "bad key '%s' for '%s'", tok, name);
            continue;
        }
        bind_add(km, seq, sn, a, l->line);
    }
}

/* No sections, whole-line comments only: '#' and ';' are keys too. */
static const ini_format keymap_format = { 0, NULL };

bool keymap_parse_len(ui_keymap *km, const char *path, const char *text, size_t len,
                      rd_diags *d)
{
    ini_reader r;
    ini_open(&r, path, text, len, &keymap_format, d);
    ini_line l;
    while (ini_next(&r, &l)) {
        if (l.kind == INI_TEXT)
            ini_error(&r, l.line, "expected 'action = key ...'");
        else if (l.kind == INI_PAIR)
            keymap_pair(km, &r, &l);
    }
    ini_close(&r);
    keymap_check(km, &r);
    return r.errors == 0;
}

bool keymap_parse(ui_keymap *km, const char *path, const char *text, rd_diags *d)
{
    return keymap_parse_len(km, path, text, text ? strlen(text) : 0, d);
}

bool keymap_load(ui_keymap *km, const char *name, rd_diags *d)
{
    char *path = datafile_locate(DATA_KEYMAPS, name, d);
    if (!path)
        return false;
    char why[128];
    size_t len;
    char *text = text_read_file_len(path, DATAFILE_MAX_BYTES, &len, why, sizeof why);
    bool ok = false;
    if (!text)
        diags_add(d, path, 0, "%s", why);
    else {
        ok = keymap_parse_len(km, path, text, len, d);
        free(km->name);
        km->name = xstrdup(name);
    }
    free(text);
    free(path);
    return ok;
}

km_match keymap_match(const ui_keymap *km, const ui_key *seq, int n, unsigned scope, ui_action *out)
{
    km_match best = KM_NONE;
    for (size_t i = 0; i < km->n; i++) {
        const km_bind *b = &km->b[i];
        unsigned in = actlist_info(b->act)->flags & (UA_DIALOG | UA_HSCROLL);
        if (in != scope || b->n < n || memcmp(b->seq, seq, (size_t)n * sizeof *seq) != 0)
            continue;
        if (b->n == n) {
            *out = b->act;
            return KM_ACTION;
        }
        best = KM_PREFIX;
    }
    return best;
}

bool keymap_first(const ui_keymap *km, ui_action a, char *out, size_t cap)
{
    for (size_t i = 0; i < km->n; i++)
        if (km->b[i].act == a) {
            bind_text(&km->b[i], true, out, cap);
            return true;
        }
    out[0] = 0;
    return false;
}

void keymap_all(const ui_keymap *km, ui_action a, char *out, size_t cap)
{
    out[0] = 0;
    for (size_t i = 0; i < km->n; i++) {
        if (km->b[i].act != a)
            continue;
        char t[64];
        bind_text(&km->b[i], true, t, sizeof t);
        size_t l = strlen(out);
        snprintf(out + l, cap - l, "%s%s", l ? ", " : "", t);
    }
}
