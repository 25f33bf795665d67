#include "redis_record.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static int digits(const char **p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)**p))
            return -1;
        v = v * 10 + (**p - '0');
        (*p)++;
    }
    return v;
}

/* Timezone suffix: Z, z, +hh:mm, -hhmm, or nothing (UTC). */
static bool parse_tz(const char *p, long *off)
{
    *off = 0;
    if (*p == '\0' || ((*p == 'Z' || *p == 'z') && p[1] == '\0'))
        return true;
    if (*p != '+' && *p != '-')
        return false;
    int sign = *p++ == '-' ? -1 : 1;
    int hh = digits(&p, 2);
    if (*p == ':')
        p++;
    int mm = *p ? digits(&p, 2) : 0;
    if (hh < 0 || mm < 0 || hh > 23 || mm > 59 || *p)
        return false;
    *off = sign * (hh * 3600L + mm * 60L);
    return true;
}

static bool parse_rfc3339(const char *s, double *out)
{
    const char *p = s;
    struct tm tm = { 0 };
    int y = digits(&p, 4);
    if (y < 0 || *p++ != '-') return false;
    int mo = digits(&p, 2);
    if (mo < 1 || mo > 12 || *p++ != '-') return false;
    int d = digits(&p, 2);
    if (d < 1 || d > 31 || (*p != 'T' && *p != 't' && *p != ' ')) return false;
    p++;
    int h = digits(&p, 2);
    if (h < 0 || h > 23 || *p++ != ':') return false;
    int mi = digits(&p, 2);
    if (mi < 0 || mi > 59) return false;
    int sec = 0;
    if (*p == ':') {
        p++;
        sec = digits(&p, 2);
        if (sec < 0 || sec > 60) return false;
    }
    double frac = 0, scale = 0.1;
    if (*p == '.' || *p == ',') {
        for (p++; isdigit((unsigned char)*p); p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    long off;
    if (!parse_tz(p, &off))
        return false;
    tm.tm_year = y - 1900; tm.tm_mon = mo - 1; tm.tm_mday = d;
    tm.tm_hour = h; tm.tm_min = mi; tm.tm_sec = sec;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return false;
    *out = (double)t - (double)off + frac;
    return *out > 0;
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
    return parse_rfc3339(s, out);
}

/* First problem wins: "<what><suffix>". */
static void set_why(rd_alakai_rec *r, const char *what, const char *suffix)
{
    if (!r->why[0])
        snprintf(r->why, sizeof r->why, "%s%s", what, suffix);
}

static void read_time(rd_alakai_rec *r, const cJSON *o, const char *key, double *dst)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v))
        return;
    if (cJSON_IsNumber(v))
        *dst = epoch_number(v->valuedouble);
    else if (!cJSON_IsString(v) || !alakai_parse_time(v->valuestring, dst))
        set_why(r, key, " is not a readable time");
}

/* Optional string field: absent/null → NULL; a number is accepted (codes may be
 * numeric); anything else marks the record malformed. */
static const char *opt_text(rd_alakai_rec *r, const cJSON *o, const char *key, char *num,
                            size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v))
        return NULL;
    if (cJSON_IsString(v))
        return v->valuestring;
    if (cJSON_IsNumber(v)) {
        snprintf(num, cap, "%.15g", v->valuedouble);
        return num;
    }
    set_why(r, key, " has the wrong type");
    return NULL;
}

static char *capped_dup(const char *s, size_t cap)
{
    size_t n = strlen(s);
    if (n < cap)
        return xstrdup(s);
    /* cut on a UTF-8 boundary; the sanitizer handles anything else */
    n = cap - 1;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return xstrndup(s, n);
}

static void read_name(rd_alakai_rec *r, const cJSON *o)
{
    const cJSON *snap = cJSON_GetObjectItemCaseSensitive(o, "taskSnapshot");
    if (!cJSON_IsObject(snap))
        return;
    static const char *const keys[] = { "name", "taskName", "type", "taskType", "action" };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(snap, keys[i]);
        if (cJSON_IsString(v) && v->valuestring[0]) {
            r->name = capped_dup(v->valuestring, RD_REC_NAME_CAP);
            return;
        }
    }
}

static void read_fields(rd_alakai_rec *r, const cJSON *o)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status");
    if (cJSON_IsString(st) && st->valuestring[0]) {
        snprintf(r->status, sizeof r->status, "%s", st->valuestring);
        for (char *c = r->status; *c; c++)
            *c = (char)tolower((unsigned char)*c);
    } else {
        set_why(r, st ? "status has the wrong type" : "no status", "");
    }
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(o, "attempt");
    if (cJSON_IsNumber(at) && at->valuedouble >= 1 && at->valuedouble <= 1e6 &&
        at->valuedouble == floor(at->valuedouble))
        r->attempt = (int)at->valuedouble;
    else if (at && !cJSON_IsNull(at))
        set_why(r, "attempt is not a positive integer", "");
    char num[40];
    const char *code = opt_text(r, o, "errorCode", num, sizeof num);
    if (code)
        snprintf(r->code, sizeof r->code, "%s", code);
    const char *msg = opt_text(r, o, "errorMessage", num, sizeof num);
    if (msg)
        r->error = capped_dup(msg, RD_REC_ERROR_CAP);
    read_time(r, o, "dispatchedAt", &r->dispatched_at);
    read_time(r, o, "resolvedAt", &r->resolved_at);
    read_name(r, o);
}

bool alakai_rec_decode(const char *data, size_t len, rd_alakai_rec *out)
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
        read_fields(out, root);
    }
    cJSON_Delete(root);
    free(buf);
    return out->why[0] == '\0';
}
