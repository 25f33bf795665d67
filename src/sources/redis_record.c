#include "redis_record.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/detail.h"
#include "../core/rfc3339.h"
#include "../core/xalloc.h"

void alakai_rec_clear(rd_alakai_rec *r)
{
    free(r->error);
    free(r->name);
    memset(r, 0, sizeof *r);
}

int alakai_field_num(const char *s, size_t len)
{
    if (len == 0 || len > 6 || s[0] == '0')
        return -1;
    int v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static double epoch_number(double v)
{
    if (!isfinite(v) || v <= 0)
        return 0;
    if (v > 1e11)
        v /= 1000.0;              /* milliseconds */
    return v > 1e11 ? 0 : v;      /* still absurd → unknown */
}

bool alakai_parse_time(const char *s, double *out)
{
    *out = 0;
    if (!s || !*s)
        return false;
    char *end;
    double v = strtod(s, &end);
    if (end != s && *end == '\0' && !strchr(s, '-')) {
        *out = epoch_number(v);
        return *out > 0;
    }
    if (rfc3339_parse(s, out) && *out > 0)
        return true;
    *out = 0;                     /* before 1970: unreadable, not a negative time */
    return false;
}

/* First problem wins: "<what><suffix>". */
static void set_why(rd_alakai_rec *r, const char *what, const char *suffix)
{
    if (!r->why[0])
        snprintf(r->why, sizeof r->why, "%s%s", what, suffix);
}

/* One member's value as either reader found it: strings are spans (never NUL-terminated
 * in the scanner's case, never containing a NUL in either case). */
typedef enum { RV_ABSENT, RV_NULL, RV_STRING, RV_NUMBER, RV_OBJECT, RV_OTHER } rv_kind;
typedef struct rv {
    rv_kind kind;
    const char *s;
    size_t len;
    double num;
} rv;

/* The members a record is read from, top level first (first occurrence of each key),
 * then the name: the first of taskSnapshot's name keys that is a non-empty string. */
enum { RK_STATUS, RK_ATTEMPT, RK_CODE, RK_MESSAGE, RK_DISPATCHED, RK_RESOLVED, RK_SNAPSHOT,
       RK__COUNT };
static const char *const rec_keys[RK__COUNT] = {
    "status", "attempt", "errorCode", "errorMessage", "dispatchedAt", "resolvedAt",
    "taskSnapshot",
};
enum { NK__COUNT = 5 };
static const char *const name_keys[NK__COUNT] = { "name", "taskName", "type", "taskType",
                                                  "action" };

static void read_time(rd_alakai_rec *r, const rv *v, const char *key, double *dst)
{
    if (v->kind == RV_ABSENT || v->kind == RV_NULL)
        return;
    if (v->kind == RV_NUMBER) {
        *dst = epoch_number(v->num);
        return;
    }
    bool ok = false;
    if (v->kind == RV_STRING) {
        char small[64];
        char *text = v->len < sizeof small ? small : xmalloc(v->len + 1);
        memcpy(text, v->s, v->len);
        text[v->len] = '\0';
        ok = alakai_parse_time(text, dst);
        if (text != small)
            free(text);
    }
    if (!ok)
        set_why(r, key, " is not a readable time");
}

/* Optional string member: absent/null → false; a number is accepted (codes may be
 * numeric) as its %.15g text in num; anything else marks the record malformed. */
static bool opt_text(rd_alakai_rec *r, const rv *v, const char *key, char *num, size_t cap,
                     const char **out, size_t *len)
{
    if (v->kind == RV_STRING) {
        *out = v->s;
        *len = v->len;
        return true;
    }
    if (v->kind == RV_NUMBER) {
        snprintf(num, cap, "%.15g", v->num);
        *out = num;
        *len = strlen(num);
        return true;
    }
    if (v->kind != RV_ABSENT && v->kind != RV_NULL)
        set_why(r, key, " has the wrong type");
    return false;
}

static char *capped_dup(const char *s, size_t n, size_t cap)
{
    if (n < cap)
        return xstrndup(s, n);
    /* cut on a UTF-8 boundary; the sanitizer handles anything else */
    n = cap - 1;
    size_t stop = n > 3 ? n - 3 : 0, m = n;   /* a character is at most 4 bytes */
    while (m > stop && ((unsigned char)s[m] & 0xC0) == 0x80)
        m--;
    if (((unsigned char)s[m] & 0xC0) != 0x80)
        n = m;                    /* else invalid UTF-8: cut at the cap, never to "" */
    return xstrndup(s, n);
}

/* Both readers end here: the same rules whichever found the members. */
static void read_fields(rd_alakai_rec *r, const rv *v, const rv *name)
{
    const rv *st = &v[RK_STATUS];
    if (st->kind == RV_STRING && st->len > 0) {
        snprintf(r->status, sizeof r->status, "%.*s", (int)st->len, st->s);
        for (char *c = r->status; *c; c++)
            *c = (char)tolower((unsigned char)*c);
    } else {
        set_why(r, st->kind != RV_ABSENT ? "status has the wrong type" : "no status", "");
    }
    const rv *at = &v[RK_ATTEMPT];
    if (at->kind == RV_NUMBER && at->num >= 1 && at->num <= 1e6 && at->num == floor(at->num))
        r->attempt = (int)at->num;
    else if (at->kind != RV_ABSENT && at->kind != RV_NULL)
        set_why(r, "attempt is not a positive integer", "");
    char num[40];
    const char *text;
    size_t len;
    if (opt_text(r, &v[RK_CODE], "errorCode", num, sizeof num, &text, &len))
        snprintf(r->code, sizeof r->code, "%.*s", (int)len, text);
    if (opt_text(r, &v[RK_MESSAGE], "errorMessage", num, sizeof num, &text, &len))
        r->error = capped_dup(text, len, RD_REC_ERROR_CAP);
    read_time(r, &v[RK_DISPATCHED], "dispatchedAt", &r->dispatched_at);
    read_time(r, &v[RK_RESOLVED], "resolvedAt", &r->resolved_at);
    if (name->kind == RV_STRING)
        r->name = capped_dup(name->s, name->len, RD_REC_NAME_CAP);
}

/* ---- the reader through cJSON (every record the scanner declines) ------------------ */

static rv rv_of(const cJSON *item)
{
    if (!item)
        return (rv){ .kind = RV_ABSENT };
    if (cJSON_IsNull(item))
        return (rv){ .kind = RV_NULL };
    if (cJSON_IsString(item))
        return (rv){ .kind = RV_STRING, .s = item->valuestring, .len = strlen(item->valuestring) };
    if (cJSON_IsNumber(item))
        return (rv){ .kind = RV_NUMBER, .num = item->valuedouble };
    return (rv){ .kind = cJSON_IsObject(item) ? RV_OBJECT : RV_OTHER };
}

static void read_tree(rd_alakai_rec *r, const cJSON *o)
{
    rv v[RK__COUNT], name = { .kind = RV_ABSENT };
    for (int k = 0; k < RK__COUNT; k++)
        v[k] = rv_of(cJSON_GetObjectItemCaseSensitive(o, rec_keys[k]));
    const cJSON *snap = cJSON_GetObjectItemCaseSensitive(o, "taskSnapshot");
    for (int k = 0; k < NK__COUNT && cJSON_IsObject(snap); k++) {
        rv n = rv_of(cJSON_GetObjectItemCaseSensitive(snap, name_keys[k]));
        if (n.kind == RV_STRING && n.len > 0) {
            name = n;
            break;
        }
    }
    read_fields(r, v, &name);
}

bool alakai_rec_decode_tree(const char *data, size_t len, rd_alakai_rec *out)
{
    memset(out, 0, sizeof *out);
    out->attempt = -1;
    char *buf = xmalloc(len + 1);
    memcpy(buf, data, len);
    buf[len] = '\0';
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(buf, len + 1, &end, 1);
    if (!root) {
        snprintf(out->why, sizeof out->why, "invalid JSON at byte %zu",
                 end && end >= buf ? (size_t)(end - buf) : (size_t)0);
    } else if (!cJSON_IsObject(root)) {
        snprintf(out->why, sizeof out->why, "record is not a JSON object");
    } else {
        read_tree(out, root);
    }
    cJSON_Delete(root);
    free(buf);
    return out->why[0] == '\0';
}

/* ---- the scanner: the usual record without building a tree ------------------------- *
 * A validating pass over the bytes that keeps only the members read_fields wants. It
 * declines (and cJSON reads the record) on anything where matching cJSON exactly would take
 * more than a scan: a \u escape (one-character escapes are read), a control byte other
 * than tab/LF/CR, a byte-order mark, a number with '.', 'e' or '+' (cJSON reads those
 * through the locale), nesting deeper than FJ_DEPTH, and every input that is not valid
 * JSON (cJSON's message says where). Whatever it accepts, cJSON accepts with the same members:
 * fuzz_alakai_record compares the two on every input. */
enum { FJ_DEPTH = 32 };

typedef struct fj_tab {            /* where an object's members go (first occurrence) */
    const char *const *keys;
    int n;
    rv *vals;
    int child;                     /* the key whose object value fills `sub`, -1 none */
    const struct fj_tab *sub;
} fj_tab;

typedef struct fj {
    const char *p, *end;
    int depth;
    char *unescaped;               /* strings with escapes, written out (record's length) */
    size_t used, cap;
} fj;

static void fj_ws(fj *f)
{
    while (f->p < f->end && (*f->p == ' ' || *f->p == '\t' || *f->p == '\n' || *f->p == '\r'))
        f->p++;
}

/* The one-character escapes, as cJSON reads them; \u (and anything else) is declined. */
static int fj_escape(char c)
{
    switch (c) {
    case '"': case '\\': case '/': return c;
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return -1;
    }
}

/* A string's bytes: a span of the record, or (with escapes) its text written out into the
 * scan's buffer, which the whole record's length always holds. */
static bool fj_string(fj *f, const char **s, size_t *len)
{
    if (f->p >= f->end || *f->p != '"')
        return false;
    const char *start = f->p + 1, *q = start;
    while (q < f->end && *q != '"' && *q != '\\')
        q++;
    if (q < f->end && *q == '"') {
        *s = start;
        *len = (size_t)(q - start);
        f->p = q + 1;
        return true;
    }
    if (!f->unescaped)
        f->unescaped = xmalloc(f->cap);
    char *out = f->unescaped + f->used;
    size_t n = (size_t)(q - start);
    memcpy(out, start, n);
    while (q < f->end && *q != '"') {
        if (*q != '\\') {
            out[n++] = *q++;
            continue;
        }
        int c = q + 1 < f->end ? fj_escape(q[1]) : -1;
        if (c < 0)
            return false;
        out[n++] = (char)c;
        q += 2;
    }
    if (q >= f->end)
        return false;
    f->used += n;
    *s = out;
    *len = n;
    f->p = q + 1;
    return true;
}

/* cJSON's number: up to 63 characters of [0-9+-eE.], then strtod over them. */
static bool fj_number(fj *f, double *out)
{
    char buf[64];
    size_t n = 0;
    while (n < sizeof buf - 1 && f->p + n < f->end) {
        char c = f->p[n];
        if (c == '.' || c == 'e' || c == 'E' || c == '+')
            return false;         /* declined: cJSON goes through the locale */
        if (!((c >= '0' && c <= '9') || c == '-'))
            break;
        buf[n++] = c;
    }
    buf[n] = '\0';
    char *stop;
    *out = strtod(buf, &stop);
    if (stop == buf)
        return false;
    f->p += stop - buf;
    return true;
}

static bool fj_literal(fj *f, const char *word, size_t n)
{
    if ((size_t)(f->end - f->p) < n || memcmp(f->p, word, n) != 0)
        return false;
    f->p += n;
    return true;
}

static bool fj_value(fj *f, rv *out, const fj_tab *tab);

/* A container's opening ('{' or '['): -1 invalid (too deep), 1 empty (closed), 0 items
 * follow. After each item: -1 invalid, 1 closed, 0 another item follows. */
static int fj_open(fj *f, char close)
{
    if (++f->depth > FJ_DEPTH)
        return -1;
    f->p++;
    fj_ws(f);
    if (f->p < f->end && *f->p == close) {
        f->p++;
        f->depth--;
        return 1;
    }
    return 0;
}

static int fj_next(fj *f, char close)
{
    fj_ws(f);
    if (f->p >= f->end)
        return -1;
    if (*f->p == close) {
        f->p++;
        f->depth--;
        return 1;
    }
    return *f->p++ == ',' ? 0 : -1;
}

static bool fj_object(fj *f, const fj_tab *tab)
{
    int state = fj_open(f, '}');
    while (state == 0) {
        const char *key;
        size_t klen;
        fj_ws(f);
        if (!fj_string(f, &key, &klen))
            return false;
        fj_ws(f);
        if (f->p >= f->end || *f->p != ':')
            return false;
        f->p++;
        int slot = -1;
        for (int k = 0; tab && k < tab->n && slot < 0; k++)
            if (tab->vals[k].kind == RV_ABSENT && strlen(tab->keys[k]) == klen &&
                memcmp(tab->keys[k], key, klen) == 0)
                slot = k;
        rv ignored;
        if (!fj_value(f, slot >= 0 ? &tab->vals[slot] : &ignored,
                      slot >= 0 && slot == tab->child ? tab->sub : NULL))
            return false;
        state = fj_next(f, '}');
    }
    return state == 1;
}

static bool fj_array(fj *f)
{
    int state = fj_open(f, ']');
    while (state == 0) {
        rv ignored;
        if (!fj_value(f, &ignored, NULL))
            return false;
        state = fj_next(f, ']');
    }
    return state == 1;
}

/* One value; its members go to tab when it is an object and tab is given. */
static bool fj_value(fj *f, rv *out, const fj_tab *tab)
{
    fj_ws(f);
    if (f->p >= f->end)
        return false;
    char c = *f->p;
    *out = (rv){ .kind = RV_OTHER };
    if (c == '"') {
        out->kind = RV_STRING;
        return fj_string(f, &out->s, &out->len);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        out->kind = RV_NUMBER;
        return fj_number(f, &out->num);
    }
    if (c == '{') {
        out->kind = RV_OBJECT;
        return fj_object(f, tab);
    }
    if (c == '[')
        return fj_array(f);
    if (c == 'n') {
        out->kind = RV_NULL;
        return fj_literal(f, "null", 4);
    }
    if (c == 't')
        return fj_literal(f, "true", 4);
    if (c == 'f')
        return fj_literal(f, "false", 5);
    return false;
}

static bool fj_plain(const char *data, size_t len)
{
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)data[i];
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
            return false;
    }
    return true;
}

bool alakai_rec_scan(const char *data, size_t len, rd_alakai_rec *out, bool *valid)
{
    if (!fj_plain(data, len))
        return false;
    rv v[RK__COUNT], snap[NK__COUNT];
    for (int k = 0; k < RK__COUNT; k++)
        v[k] = (rv){ .kind = RV_ABSENT };
    for (int k = 0; k < NK__COUNT; k++)
        snap[k] = (rv){ .kind = RV_ABSENT };
    const fj_tab sub = { name_keys, NK__COUNT, snap, -1, NULL };
    const fj_tab top = { rec_keys, RK__COUNT, v, RK_SNAPSHOT, &sub };
    fj f = { .p = data, .end = data + len, .cap = len };
    fj_ws(&f);
    bool read = f.p < f.end && *f.p == '{' && fj_object(&f, &top);
    fj_ws(&f);
    if (!read || f.p != f.end) {
        free(f.unescaped);
        return false;             /* not an object, or not valid: cJSON says which */
    }
    rv name = { .kind = RV_ABSENT };
    for (int k = 0; k < NK__COUNT && v[RK_SNAPSHOT].kind == RV_OBJECT; k++)
        if (snap[k].kind == RV_STRING && snap[k].len > 0) {
            name = snap[k];
            break;
        }
    memset(out, 0, sizeof *out);
    out->attempt = -1;
    read_fields(out, v, &name);
    free(f.unescaped);
    *valid = out->why[0] == '\0';
    return true;
}

bool alakai_rec_decode(const char *data, size_t len, rd_alakai_rec *out)
{
    bool valid;
    if (alakai_rec_scan(data, len, out, &valid))
        return valid;
    return alakai_rec_decode_tree(data, len, out);
}

char *alakai_rec_detail(const char *id, const char *data, size_t len, int attempts, int max_attempts)
{
    rd_alakai_rec rec;
    memset(&rec, 0, sizeof rec);
    bool ok = data && alakai_rec_decode(data, len, &rec);
    cJSON *o = data ? cJSON_ParseWithLength(data, len) : NULL;
    const cJSON *snap = cJSON_GetObjectItemCaseSensitive(o, "taskSnapshot");
    char *params = snap ? cJSON_PrintUnformatted(snap) : NULL;
    char *raw = data ? xstrndup(data, len) : NULL;
    char at[16], n[16], mx[16], disp[32], res[32];
    snprintf(at, sizeof at, "%d", rec.attempt > 0 ? rec.attempt : attempts);
    snprintf(n, sizeof n, "%d", attempts);
    snprintf(mx, sizeof mx, "%d", max_attempts);
    snprintf(disp, sizeof disp, "%.3f", rec.dispatched_at);
    snprintf(res, sizeof res, "%.3f", rec.resolved_at);
    const char *names[] = {"id", "name", "status", "attempt", "max_attempts", "chain_root", "chain_length",
                           "reason", "error", "params", "result", "dispatched_at", "resolved_at", "malformed"};
    const char *vals[] = {id, rec.name, ok && rec.status[0] ? rec.status : "unknown", at,
                          max_attempts > 0 ? mx : NULL, id, n, rec.code[0] ? rec.code : NULL, rec.error,
                          params, raw, rec.dispatched_at > 0 ? disp : NULL,
                          rec.resolved_at > 0 ? res : NULL,
                          ok ? NULL : data ? rec.why : "the record is too large: not fetched"};
    char *out = detail_from_row(names, vals, sizeof names / sizeof *names);
    cJSON_free(params);
    cJSON_Delete(o);
    free(raw);
    alakai_rec_clear(&rec);
    return out;
}
