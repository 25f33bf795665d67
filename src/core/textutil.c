#include "textutil.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsperm.h"
#include "xalloc.h"

char *text_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

void text_strip_comment(char *v)
{
    bool q = false;
    for (char *c = v; *c; c++) {
        if (*c == '"') {
            q = !q;
        } else if (!q && (*c == '#' || *c == ';') && c > v &&
                   isspace((unsigned char)c[-1])) {
            *c = '\0';
            return;
        }
    }
}

static char *read_stream(FILE *f, size_t max, size_t *len, char *why, size_t whycap)
{
    char *buf = xmalloc(max + 1);
    size_t n = fread(buf, 1, max + 1, f);
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad || n > max) {
        snprintf(why, whycap, bad ? "read error" : "file too large (over %zu bytes)", max);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

char *text_read_file_len(const char *path, size_t max, size_t *len, char *why, size_t whycap)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, whycap, "cannot read: %s", strerror(errno));
        return NULL;
    }
    return read_stream(f, max, len, why, whycap);
}

char *text_read_fd_len(int fd, size_t max, size_t *len, char *why, size_t whycap)
{
    *len = 0;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(why, whycap, "cannot read: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    return read_stream(f, max, len, why, whycap);
}

char *text_read_file(const char *path, size_t max, char *why, size_t whycap)
{
    size_t len;
    return text_read_file_len(path, max, &len, why, whycap);
}

char *text_base64(const void *data, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = data;
    char *out = xmalloc((n + 2) / 3 * 4 + 1), *o = out;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        *o++ = tab[v >> 18 & 63];
        *o++ = tab[v >> 12 & 63];
        *o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? tab[v & 63] : '=';
    }
    *o = 0;
    return out;
}

/* mkdir -p for the directory part of path (fsperm_mkdirs); the last directory gets 0700. */
bool text_make_parent_dirs(const char *path, char *why, size_t whycap)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    bool ok = true;
    if (slash && slash != dir) {
        *slash = '\0';
        ok = fsperm_mkdirs(dir, why, whycap);
    }
    /* tighten our own directory only: a file put straight into /tmp (or any shared
     * directory) must never make that directory 0700 */
    const char *base = ok && slash && slash != dir ? strrchr(dir, '/') : NULL;
    struct stat st;
    if (base && strcmp(base + 1, "redrive") == 0 && lstat(dir, &st) == 0 &&
        S_ISDIR(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 077))
        chmod(dir, 0700);
    free(dir);
    return ok;
}

char *text_data_dir(void)
{
    const char *data = getenv("XDG_DATA_HOME");
    if (data && data[0] == '/')
        return xasprintf("%s/redrive", data);
    const char *home = getenv("HOME");
    if (home && home[0])
        return xasprintf("%s/.local/share/redrive", home);
    return NULL;
}

/* "scheme://" starts at p, after blanks. */
static bool at_scheme(const char *p)
{
    p += strspn(p, " \t");
    size_t n = 0;
    while (isalnum((unsigned char)p[n]) || p[n] == '+' || p[n] == '-' || p[n] == '.')
        n++;
    return n && strncmp(p + n, "://", 3) == 0;
}

/* The end of the item that starts at p. */
static const char *item_end(const char *p, text_list_rule rule)
{
    if (rule == TEXT_LIST_WORDS)
        return p + strcspn(p, ", \t");
    while (*p && !(*p == ',' && at_scheme(p + 1)))
        p++;
    return p;
}

size_t text_split_list(const char *list, text_list_rule rule, text_span *out, size_t max)
{
    size_t n = 0;
    for (const char *p = list ? list : ""; *p;) {
        p += strspn(p, rule == TEXT_LIST_WORDS ? ", \t" : " \t");
        const char *e = item_end(p, rule), *t = e;
        while (t > p && (t[-1] == ' ' || t[-1] == '\t'))
            t--;
        if (t > p || rule == TEXT_LIST_URLS) {   /* an empty URL: the parser's error */
            if (n < max)
                out[n] = (text_span){ p, (size_t)(t - p) };
            n++;
        }
        p = *e == ',' && rule == TEXT_LIST_URLS ? e + 1 : e;
    }
    return n;
}

text_span *text_split_all(const char *list, text_list_rule rule, size_t *n)
{
    *n = text_split_list(list, rule, NULL, 0);
    text_span *v = xcalloc(*n ? *n : 1, sizeof *v);
    text_split_list(list, rule, v, *n);
    return v;
}

void text_buf_add(text_buf *b, const char *s, size_t n)
{
    xgrow(&b->p, &b->cap, b->n + n + 1, 1);
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void text_buf_str(text_buf *b, const char *s)
{
    text_buf_add(b, s, strlen(s));
}

void text_buf_printf(text_buf *b, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    size_t n = k < 0 ? 0 : (size_t)k;
    xgrow(&b->p, &b->cap, b->n + n + 1, 1);
    vsnprintf(b->p + b->n, n + 1, fmt, ap2);
    va_end(ap2);
    b->n += n;
}

void text_buf_rtrim(text_buf *b)
{
    while (b->n && b->p[b->n - 1] == ' ')
        b->p[--b->n] = '\0';
}

/* v (>= 1000) as "14.8k" (level 1) or "15k" (level 2). */
static void short_number(double v, int level, char *out, size_t cap)
{
    static const char unit[] = "kMGTPE";
    double u = v;
    for (int i = 0; i < 6; i++) {
        u /= 1000;
        int dec = level == 1 && u < 99.95 ? 1 : 0;
        char t[24];
        snprintf(t, sizeof t, "%.*f", dec, u);
        if (strtod(t, NULL) < 1000 || i == 5) {
            snprintf(out, cap, "%s%c", t, unit[i]);
            return;
        }
    }
}

bool text_short_numbers(const char *in, int level, char *out, size_t cap)
{
    if (!out || !cap)
        return false;
    size_t o = 0;
    bool any = false;
    out[0] = 0;
    for (const char *p = in ? in : ""; *p && o + 1 < cap;) {
        size_t digits = strspn(p, "0123456789");
        bool after_word = p > in && (isalnum((unsigned char)p[-1]) || p[-1] == '.' || p[-1] == '_');
        if (digits < 4 || after_word || isalpha((unsigned char)p[digits]) || p[digits] == '_') {
            size_t n = digits ? digits : 1;
            if (o + n >= cap)
                break;
            memcpy(out + o, p, n);
            o += n;
            p += n;
            out[o] = 0;
            continue;
        }
        size_t len = digits;
        if (p[len] == '.' && isdigit((unsigned char)p[len + 1]))
            len += 1 + strspn(p + len + 1, "0123456789");
        char num[64], t[40];
        snprintf(num, sizeof num, "%.*s", (int)(len < sizeof num ? len : sizeof num - 1), p);
        short_number(strtod(num, NULL), level, t, sizeof t);
        size_t n = strlen(t);
        if (o + n >= cap)
            break;
        memcpy(out + o, t, n + 1);
        o += n;
        p += len;
        any = true;
    }
    return any;
}

void text_tm(double t, bool local, struct tm *tm)
{
    time_t s = (time_t)t;
    if (local)
        localtime_r(&s, tm);
    else
        gmtime_r(&s, tm);
}
