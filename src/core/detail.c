/* One execution in full: a source's row as one JSON object, and its text for the pane. */
#include "detail.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonget.h"
#include "sanitize.h"
#include "textutil.h"
#include "xalloc.h"

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && strcmp(s + n - k, tail) == 0;
}

static bool is_int_key(const char *k)
{
    return strcmp(k, "attempt") == 0 || strcmp(k, "max_attempts") == 0 ||
           strcmp(k, "chain_length") == 0;
}

/* One column's value: a number for times and counts, embedded JSON for an object or an
 * array, else the string. */
static cJSON *row_value(const char *k, const char *v)
{
    if (!v)
        return cJSON_CreateNull();
    if (ends_with(k, "_at") || is_int_key(k)) {
        char *end = NULL;
        double d = strtod(v, &end);
        if (end != v && !*end && isfinite(d))
            return cJSON_CreateNumber(d);
    }
    const char *p = v + strspn(v, " \t\r\n");
    if (*p == '{' || *p == '[') {
        cJSON *j = cJSON_Parse(v);
        if (j)
            return j;
    }
    return cJSON_CreateString(v);
}

char *detail_from_row(const char *const *names, const char *const *vals, size_t n)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < n; i++)
        if (names[i] && !cJSON_GetObjectItemCaseSensitive(o, names[i]))
            cJSON_AddItemToObject(o, names[i], row_value(names[i], vals[i]));
    char *t = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!t)
        abort();   /* cJSON fails on OOM only */
    char *out = xstrdup(t);
    cJSON_free(t);
    return out;
}

/* cJSON indents with tabs (and puts one after each key's colon): two spaces an indent
 * level read better and stay aligned, one space after a colon. */
static char *untab(const char *text)
{
    size_t tabs = 0, n = 0;
    for (const char *p = text; *p; p++)
        tabs += *p == '\t';
    char *out = xmalloc(strlen(text) + tabs + 1);
    bool indent = true;
    for (const char *p = text; *p; p++) {
        if (*p == '\t') {
            out[n++] = ' ';
            if (indent)
                out[n++] = ' ';
        } else
            out[n++] = *p;
        indent = *p == '\n' || (indent && *p == '\t');
    }
    out[n] = 0;
    return out;
}

static char *pretty_item(const cJSON *j)
{
    char *t = cJSON_Print(j);
    if (!t)
        abort();
    char *out = untab(t);
    cJSON_free(t);
    return out;
}

char *detail_pretty_json(const char *raw)
{
    cJSON *j = raw ? cJSON_Parse(raw) : NULL;
    if (!j)
        return NULL;
    char *out = pretty_item(j);
    cJSON_Delete(j);
    return out;
}

static void utc_text(double t, char *out, size_t cap)
{
    if (!(t > 0) || t > 253402300799.0) {
        snprintf(out, cap, "-");
        return;
    }
    time_t s = (time_t)t;
    struct tm tm;
    gmtime_r(&s, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(out, cap, "%s.%03dZ", base, (int)((t - (double)s) * 1000) % 1000);
}

static const char *str_or(const cJSON *o, const char *k, const char *def)
{
    const char *s = json_str(o, k);
    return s ? s : def;
}

/* A value as text: a string as is, anything else as compact JSON. */
static char *value_text(const cJSON *v)
{
    if (cJSON_IsString(v))
        return xstrdup(v->valuestring);
    char *t = cJSON_PrintUnformatted(v);
    if (!t)
        abort();
    char *out = xstrdup(t);
    cJSON_free(t);
    return out;
}

static void head_lines(text_buf *b, const cJSON *o)
{
    text_buf_printf(b, "execution %s  %s  status %s\n", str_or(o, "id", "-"), str_or(o, "name", "-"),
         str_or(o, "status", "-"));
    long at = json_long(o, "attempt", -1, 1000000000), mx = json_long(o, "max_attempts", -1, 1000000000);
    long len = json_long(o, "chain_length", -1, 1000000000);
    char a[32] = "-", m[40] = "", l[48] = "";
    if (at >= 0)
        snprintf(a, sizeof a, "%ld", at);
    if (mx >= 0)
        snprintf(m, sizeof m, " of %ld allowed", mx);
    if (len >= 0)
        snprintf(l, sizeof l, ", %ld attempt%s in all", len, len == 1 ? "" : "s");
    text_buf_printf(b, "chain position: attempt %s%s  chain root %s%s\n", a, m, str_or(o, "chain_root", str_or(o, "id", "-")), l);
    text_buf_printf(b, "worker %s%s%s\n", str_or(o, "worker", "-"), json_str(o, "parent_id") ? "  parent " : "",
         str_or(o, "parent_id", ""));
    if (json_str(o, "reason"))
        text_buf_printf(b, "reason %s\n", json_str(o, "reason"));
}

static void time_lines(text_buf *b, const cJSON *o)
{
    text_buf_str(b, "\ntimes (UTC):\n");
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        if (!it->string || !ends_with(it->string, "_at"))
            continue;
        char t[48];
        utc_text(cJSON_IsNumber(it) ? it->valuedouble : 0, t, sizeof t);
        text_buf_printf(b, "  %-20s %s\n", it->string, t);
    }
}

static void section(text_buf *b, const char *title, const cJSON *v)
{
    text_buf_printf(b, "\n%s:\n", title);
    if (!v || cJSON_IsNull(v)) {
        text_buf_str(b, "  (none)\n");
        return;
    }
    char *t = cJSON_IsObject(v) || cJSON_IsArray(v) ? pretty_item(v) : value_text(v);
    text_buf_str(b, t);
    text_buf_str(b, "\n");
    free(t);
}

static bool standard(const char *k)
{
    static const char *const keys[] = {"id", "name", "status", "worker", "attempt", "max_attempts",
                                       "chain_root", "chain_length", "parent_id", "reason", "error", "backtrace",
                                       "params", "result"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcmp(k, keys[i]) == 0)
            return true;
    return ends_with(k, "_at");
}

char *detail_text(const char *json, unsigned san)
{
    cJSON *o = json ? cJSON_Parse(json) : NULL;
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return xstrdup("(no record)");
    }
    text_buf b = {0};
    text_buf_str(&b, "");
    head_lines(&b, o);
    time_lines(&b, o);
    section(&b, "error", cJSON_GetObjectItemCaseSensitive(o, "error"));
    section(&b, "backtrace", cJSON_GetObjectItemCaseSensitive(o, "backtrace"));
    section(&b, "parameters", cJSON_GetObjectItemCaseSensitive(o, "params"));
    section(&b, "result", cJSON_GetObjectItemCaseSensitive(o, "result"));
    const cJSON *it;
    cJSON_ArrayForEach(it, o)
        if (it->string && !standard(it->string) && !cJSON_IsNull(it))
            section(&b, it->string, it);
    cJSON_Delete(o);
    char *clean = sanitize_str(b.p, san | SAN_KEEP_NL);
    free(b.p);
    return clean;
}

char *detail_payload(const char *json)
{
    cJSON *o = json ? cJSON_Parse(json) : NULL;
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return NULL;
    }
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "params");
    char *t = cJSON_PrintUnformatted(p && !cJSON_IsNull(p) ? p : o);
    cJSON_Delete(o);
    if (!t)
        abort();
    char *out = xstrdup(t);
    cJSON_free(t);
    return out;
}
