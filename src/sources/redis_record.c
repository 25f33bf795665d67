#include "redis_record.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    size_t stop = n > 3 ? n - 3 : 0, m = n;   /* a character is at most 4 bytes */
    while (m > stop && ((unsigned char)s[m] & 0xC0) == 0x80)
        m--;
    if (((unsigned char)s[m] & 0xC0) != 0x80)
        n = m;                    /* else invalid UTF-8: cut at the cap, never to "" */
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
