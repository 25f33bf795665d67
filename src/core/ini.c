#include "ini.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textutil.h"
#include "xalloc.h"

void ini_open(ini_reader *r, const char *path, const char *text, size_t len,
              const ini_format *fmt, rd_diags *d)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->d = d;
    r->cur = text ? text : "";
    r->end = r->cur + (text ? len : 0);
    if (fmt)
        r->fmt = *fmt;
}

void ini_set_raw(ini_reader *r, bool raw)
{
    r->raw = raw;
}

void ini_verror(ini_reader *r, int line, const char *fmt, va_list ap)
{
    char msg[400];
    vsnprintf(msg, sizeof msg, fmt, ap);
    diags_add(r->d, r->path, line, "%s", msg);
    r->errors++;
}

void ini_error(ini_reader *r, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ini_verror(r, line, fmt, ap);
    va_end(ap);
}

void ini_close(ini_reader *r)
{
    free(r->buf);
    r->buf = NULL;
    r->cap = 0;
}

/* "[name args]" in t (trimmed, starts with '['); body is scratch space as long. */
static void header(ini_reader *r, char *t, char *body, ini_line *out)
{
    out->kind = INI_SECTION;
    char *close = strrchr(t, ']');
    if (!close || text_trim(close + 1)[0]) {
        if (r->fmt.header_usage)
            ini_error(r, r->line, "bad section header (expected %s)", r->fmt.header_usage);
        else
            ini_error(r, r->line, "bad section header");
        return;
    }
    *close = '\0';
    out->text = text_trim(t + 1);
    strcpy(body, out->text);
    char *sp = body;
    while (*sp && !isspace((unsigned char)*sp))
        sp++;
    out->value = text_trim(sp);
    *sp = '\0';
    out->name = body;
}

static void pair_or_text(ini_reader *r, char *t, ini_line *out)
{
    char *eq = strchr(t, '=');
    if (!eq) {
        out->kind = INI_TEXT;
        out->text = t;
        return;
    }
    *eq = '\0';
    out->kind = INI_PAIR;
    out->name = text_trim(t);
    if (r->fmt.flags & INI_COMMENTS)
        text_strip_comment(eq + 1);
    out->value = text_trim(eq + 1);
}

/* Classifies the line now in r->buf; false when it is blank or a comment. */
static bool classify(ini_reader *r, size_t n, ini_line *out)
{
    char *line = r->buf;
    const char *lead = line;
    while (isspace((unsigned char)*lead))
        lead++;
    bool is_header = (r->fmt.flags & INI_SECTIONS) &&
                     ((r->fmt.flags & INI_HEADER_COL0) ? line[0] == '[' : *lead == '[');
    if (r->raw && !is_header) {
        out->kind = INI_RAW;
        out->text = line;
        return true;
    }
    char *t = text_trim(line);
    if (!*t || *t == '#' || *t == ';')
        return false;
    if (is_header)
        header(r, t, r->buf + n + 1, out);
    else
        pair_or_text(r, t, out);
    return true;
}

bool ini_next(ini_reader *r, ini_line *out)
{
    while (r->cur < r->end) {
        const char *s = r->cur;
        const char *nl = memchr(s, '\n', (size_t)(r->end - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(r->end - s);
        r->cur = nl ? nl + 1 : r->end;
        r->line++;
        if (n && s[n - 1] == '\r')
            n--;
        memset(out, 0, sizeof *out);
        out->line = r->line;
        if (memchr(s, '\0', n)) {
            ini_error(r, r->line, "NUL byte");
            out->kind = INI_BAD;
            return true;
        }
        /* the line, then as much room again for a header's split copy */
        xgrow(&r->buf, &r->cap, 2 * n + 2, 1);
        memcpy(r->buf, s, n);
        r->buf[n] = '\0';
        if (classify(r, n, out))
            return true;
    }
    return false;
}
