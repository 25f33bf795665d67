/* Messages that never quote a referenced secret value (see redact.h). */
#include "redact.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textutil.h"
#include "xalloc.h"

enum { MAX_PIECES = 1024 };

typedef struct piece {
    char *text;
    const char *part;            /* "host", "password", "dbname", ... */
} piece;

typedef struct pieces {
    piece p[MAX_PIECES];
    size_t n;
    bool at_in_userinfo;
} pieces;

static const char DELIMS[] = "@:/,;?&=# \t'\"\\[]";

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void add_one(pieces *ps, const char *s, size_t n, const char *part)
{
    const char *nul = memchr(s, '\0', n);   /* a decoded %00 ends a piece */
    if (nul)
        n = (size_t)(nul - s);
    if (n == 0 || ps->n >= MAX_PIECES)
        return;
    for (size_t i = 0; i < ps->n; i++)
        if (strlen(ps->p[i].text) == n && memcmp(ps->p[i].text, s, n) == 0)
            return;
    ps->p[ps->n++] = (piece){xstrndup(s, n), part};
}

/* s[0..n) as a whole, its percent-decoded form, and each piece between delimiters. */
static void add_part(pieces *ps, const char *s, size_t n, const char *part)
{
    add_one(ps, s, n, part);
    char *dec = xmalloc(n + 1), *o = dec;
    for (size_t i = 0; i < n; i++) {
        int hi = i + 2 < n ? hexval(s[i + 1]) : -1, lo = hi >= 0 ? hexval(s[i + 2]) : -1;
        if (s[i] == '%' && hi >= 0 && lo >= 0) {
            *o++ = (char)(hi << 4 | lo);
            i += 2;
        } else {
            *o++ = s[i];
        }
    }
    *o = '\0';
    const char *srcs[2] = {s, dec};
    size_t lens[2] = {n, (size_t)(o - dec)};
    add_one(ps, dec, lens[1], part);
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < lens[k];) {
            size_t m = 0;
            while (i + m < lens[k] && !strchr(DELIMS, srcs[k][i + m]))
                m++;
            if (m < lens[k])
                add_one(ps, srcs[k] + i, m, part);
            i += m ? m : 1;
        }
    memset(dec, 0, n + 1);
    free(dec);
}

static void split_hosts(pieces *ps, const char *h, size_t n)
{
    while (n) {
        size_t k = 0;
        while (k < n && h[k] != ',')
            k++;
        const char *colon = NULL;
        if (h[0] == '[') {
            const char *close = memchr(h, ']', k);
            colon = close && close + 1 < h + k && close[1] == ':' ? close + 1 : NULL;
        } else {
            colon = memchr(h, ':', k);
        }
        size_t hn = colon ? (size_t)(colon - h) : k;
        add_part(ps, h, hn, "host");
        if (colon)
            add_part(ps, colon + 1, (size_t)(h + k - colon - 1), "port");
        h += k < n ? k + 1 : k;
        n -= k < n ? k + 1 : k;
    }
}

static void query_parts(pieces *ps, const char *q)
{
    while (*q) {
        size_t n = strcspn(q, "&;");
        const char *eq = memchr(q, '=', n);
        if (eq)
            add_part(ps, eq + 1, (size_t)(q + n - eq - 1), "query");
        add_part(ps, q, n, "query");
        q += n;
        q += *q != '\0';
    }
}

static void url_parts(pieces *ps, const char *v)
{
    const char *a = strstr(v, "://") + 3;
    size_t sn = (size_t)(a - 3 - v);
    for (size_t i = 0; i < sn; i++)
        if (!(isalnum((unsigned char)v[i]) || v[i] == '+' || v[i] == '-' || v[i] == '.')) {
            add_part(ps, v, sn, "scheme");   /* not a scheme: text before "://" */
            break;
        }
    size_t n = strcspn(a, "/?#");
    const char *at = NULL;
    for (const char *p = a; p < a + n; p++)
        if (*p == '@')
            at = p;
    if (at) {
        const char *colon = memchr(a, ':', (size_t)(at - a));
        size_t un = colon ? (size_t)(colon - a) : (size_t)(at - a);
        add_part(ps, a, un, "user");
        if (colon)
            add_part(ps, colon + 1, (size_t)(at - colon - 1), "password");
        ps->at_in_userinfo = memchr(a, '@', (size_t)(at - a)) != NULL;
        n -= (size_t)(at + 1 - a);
        a = at + 1;
    }
    split_hosts(ps, a, n);
    const char *path = a + n;
    if (*path == '/') {
        size_t pn = strcspn(path + 1, "?#");
        add_part(ps, path + 1, pn, "path");
        add_part(ps, path, pn + 1, "path");
        path += pn + 1;
    }
    if (*path == '?') {
        size_t qn = strcspn(path + 1, "#");
        char *q = xstrndup(path + 1, qn);
        query_parts(ps, q);
        free(q);
        path += qn + 1;
    }
    if (*path == '#')
        add_part(ps, path + 1, strlen(path + 1), "fragment");
}

/* libpq "key = value key='quoted value'": each value named by its key. */
static bool conninfo_parts(pieces *ps, const char *v)
{
    static const char *const known[] = {"host", "hostaddr", "port", "user", "password",
                                        "dbname", "sslmode", "options", "service", NULL};
    bool any = false;
    while (*v) {
        v += strspn(v, " \t\r\n");
        size_t kn = strcspn(v, "= \t");
        const char *e = v + kn;
        e += strspn(e, " \t");
        if (!kn || *e != '=') {
            if (any)                       /* junk after the settings: a piece too */
                add_part(ps, v, strlen(v), "value");
            return any;
        }
        const char *part = "setting";
        for (size_t i = 0; known[i]; i++)
            if (strlen(known[i]) == kn && memcmp(known[i], v, kn) == 0)
                part = known[i];
        if (!strcmp(part, "setting"))
            add_part(ps, v, kn, part);    /* not a keyword we know: maybe not a key at all */
        e++;
        e += strspn(e, " \t");
        const char *val = e;
        if (*e == '\'') {
            for (e++; *e && *e != '\''; e++)
                if (*e == '\\' && e[1])
                    e++;
            add_part(ps, val + 1, (size_t)(e - val - 1), part);
            e += *e == '\'';
        } else {
            e += strcspn(e, " \t\r\n");
            if (!strcmp(part, "host") || !strcmp(part, "hostaddr") || !strcmp(part, "port"))
                split_hosts(ps, val, (size_t)(e - val));
            add_part(ps, val, (size_t)(e - val), part);
        }
        any = true;
        v = e;
    }
    return any;
}

/* A list of URLs ("redis://replica:6380, redis://primary:6379"): each item's parts. */
static void url_list_parts(pieces *ps, const char *v)
{
    size_t n;
    text_span *sp = text_split_all(v, TEXT_LIST_URLS, &n);
    for (size_t i = 0; i < n; i++) {
        char *item = xstrndup(sp[i].s, sp[i].len);
        if (strstr(item, "://"))
            url_parts(ps, item);
        else
            add_part(ps, item, strlen(item), "value");
        memset(item, 0, strlen(item));
        free(item);
    }
    free(sp);
}

static int by_length(const void *a, const void *b)
{
    size_t x = strlen(((const piece *)a)->text), y = strlen(((const piece *)b)->text);
    return x < y ? 1 : x > y ? -1 : 0;
}

static bool word_char(char c)
{
    return isalnum((unsigned char)c) || (unsigned char)c >= 0x80;
}

/* A piece matches at msg+i when its letters do not run on into the neighbours'. */
static bool match_at(const char *msg, size_t i, const char *t, size_t n)
{
    if (strncmp(msg + i, t, n) != 0)
        return false;
    if (word_char(t[0]) && i > 0 && word_char(msg[i - 1]))
        return false;
    return !(word_char(t[n - 1]) && word_char(msg[i + n]));
}

static void put(char *out, size_t cap, size_t *o, const char *s, size_t n)
{
    for (size_t k = 0; k < n && *o + 1 < cap; k++)
        out[(*o)++] = s[k];
}

void redact_ref(const char *msg, const char *value, const char *ref, char *out, size_t cap)
{
    if (!cap)
        return;
    pieces ps = {.n = 0};
    if (value && *value) {
        if (strstr(value, "://"))
            url_list_parts(&ps, value);
        else if (!conninfo_parts(&ps, value))
            add_part(&ps, value, strlen(value), "value");
        add_one(&ps, value, strlen(value), "value");
    }
    qsort(ps.p, ps.n, sizeof *ps.p, by_length);
    size_t o = 0;
    bool hit = false;
    for (size_t i = 0; msg && msg[i];) {
        size_t k = 0;
        while (k < ps.n && !match_at(msg, i, ps.p[k].text, strlen(ps.p[k].text)))
            k++;
        if (k == ps.n) {
            put(out, cap, &o, msg + i, 1);
            i++;
            continue;
        }
        char name[160];
        int len = snprintf(name, sizeof name, "the %s part of %s", ps.p[k].part,
                           ref ? ref : "the reference");
        put(out, cap, &o, name, len > 0 ? (size_t)len : 0);
        i += strlen(ps.p[k].text);
        hit = true;
    }
    static const char hint[] = " (encode @ in the password as %40)";
    if (hit && ps.at_in_userinfo)
        put(out, cap, &o, hint, sizeof hint - 1);
    out[o] = '\0';
    for (size_t k = 0; k < ps.n; k++) {
        memset(ps.p[k].text, 0, strlen(ps.p[k].text));
        free(ps.p[k].text);
    }
}
