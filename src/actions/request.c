/* Routes, templates and response classification for core API actions (request.h). */
#include "request.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "../core/jsonget.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/url.h"

/* ---- names ------------------------------------------------------------------------ */

static const struct {
    const char *name, *past, *target, *forbidden;
} action_tbl[] = {
#define RD_X_(e, n, p, t, f) {n, p, t, f},
    RD_ACTION_LIST(RD_X_)
#undef RD_X_
};

static const char *const result_names[] = {
#define RD_X_(e, s) s,
    RD_RESULT_LIST(RD_X_)
#undef RD_X_
};

const char *action_name(rd_action a)
{
    return (unsigned)a < RD_ACT__COUNT ? action_tbl[a].name : "?";
}

const char *action_past(rd_action a)
{
    return (unsigned)a < RD_ACT__COUNT ? action_tbl[a].past : "?";
}

const char *action_target_kind(rd_action a)
{
    return (unsigned)a < RD_ACT__COUNT ? action_tbl[a].target : "?";
}

bool action_on_worker(rd_action a)
{
    return strcmp(action_target_kind(a), "worker") == 0;
}

bool action_from_name(const char *name, rd_action *out)
{
    for (int i = 0; name && i < RD_ACT__COUNT; i++)
        if (strcmp(name, action_tbl[i].name) == 0) {
            *out = (rd_action)i;
            return true;
        }
    return false;
}

const char *result_code_name(rd_result_code c)
{
    return (unsigned)c < RD_RES__COUNT ? result_names[c] : "?";
}

bool result_code_from_name(const char *s, rd_result_code *out)
{
    for (int i = 0; s && i < RD_RES__COUNT; i++)
        if (strcmp(s, result_names[i]) == 0) {
            *out = (rd_result_code)i;
            return true;
        }
    return false;
}

/* ---- routes ----------------------------------------------------------------------- */

static const rd_route default_routes[RD_ACT__COUNT] = {
    [RD_ACT_RETRY] = {"POST", "/executions/{id}/retry", "{\"reason\":\"{reason}\"}"},
    [RD_ACT_DRAIN] = {"POST", "/workers/{worker}/drain", "{\"reason\":\"{reason}\"}"},
    [RD_ACT_UNDRAIN] = {"POST", "/workers/{worker}/undrain", NULL},
    [RD_ACT_DEACTIVATE] = {"POST", "/workers/{worker}/deactivate",
                           "{\"reason\":\"{reason}\"}"},
    [RD_ACT_ACTIVATE] = {"POST", "/workers/{worker}/activate", NULL},
    [RD_ACT_RESOLVE] = {NULL, NULL, NULL},   /* only a profile's [action resolve] */
};

bool route_for(const rd_profile *prof, rd_action kind, rd_route *out)
{
    if ((unsigned)kind >= RD_ACT__COUNT)
        return false;
    if (profile_has_actions(prof)) {
        const rd_profile_action *pa = profile_action(prof, action_name(kind));
        if (!pa || !pa->path || !*pa->path || !pa->method || strcmp(pa->method, "none") == 0)
            return false;
        out->method = pa->method;
        out->path = pa->path;
        out->body = pa->body && *pa->body ? pa->body : NULL;
        return true;
    }
    *out = default_routes[kind];
    return out->path != NULL;
}

/* ---- templates -------------------------------------------------------------------- */

static void buf_put(char **b, size_t *len, size_t *cap, const char *s, size_t n)
{
    xgrow(b, cap, *len + n + 1, 1);
    memcpy(*b + *len, s, n);
    *len += n;
    (*b)[*len] = '\0';
}

static bool var_value(const rd_tvars *v, const char *name, size_t n, const char **out)
{
    static const char *const names[] = {"id", "task", "worker", "reason", "operator"};
    const char *vals[] = {v->id, v->task, v->worker, v->reason, v->operator_};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strlen(names[i]) == n && memcmp(names[i], name, n) == 0) {
            *out = vals[i];
            return true;
        }
    return false;
}

#define RD_DOT_WHY_ "not sent: an empty, \".\" or \"..\" path segment would reach another route"

/* A path segment that libcurl or a server removes or climbs out of: "." or "..", also
 * written with %2E (RFC 3986 and the WHATWG URL standard read it as a dot). */
static bool dot_segment(const char *s, size_t n)
{
    size_t dots = 0;
    for (size_t i = 0; i < n; dots++) {
        if (s[i] == '.')
            i++;
        else if (n - i >= 3 && s[i] == '%' && s[i + 1] == '2' && (s[i + 2] | 0x20) == 'e')
            i += 3;
        else
            return false;
    }
    return dots == 1 || dots == 2;
}

/* One placeholder's value, escaped for a URL or a JSON string; NULL with why. A URL value
 * that is empty, "." or ".." is refused: escaping leaves dots alone (they are unreserved),
 * and as a segment of its own it would send the request to another route. */
static char *var_escape(const char *name, size_t n, const char *val, bool url, char *why,
                        size_t whycap)
{
    if (!val) {
        snprintf(why, whycap, "the route needs {%.*s}, which this target lacks", (int)n, name);
        return NULL;
    }
    if (url && (!*val || strcmp(val, ".") == 0 || strcmp(val, "..") == 0)) {
        snprintf(why, whycap, "{%.*s} is %s%s%s: " RD_DOT_WHY_, (int)n, name,
                 *val ? "\"" : "empty", val, *val ? "\"" : "");
        return NULL;
    }
    char *esc = url ? url_escape_path(val) : url_escape_json(val, why, whycap);
    if (!esc)
        snprintf(why, whycap, "{%.*s} is not valid UTF-8: refused", (int)n, name);
    return esc;
}

/* The path segment out[0..n), expanded from template text seg..end holding a placeholder:
 * false with why when it became empty or a dot segment with the template's own text
 * ("%{id}" with "2e", ".%{id}" with "2E"). */
static bool segment_ok(const char *seg, const char *end, const char *out, size_t n, char *why,
                       size_t whycap)
{
    if (n && !dot_segment(out, n))
        return true;
    snprintf(why, whycap, "the path segment %.*s is %s%.*s%s: " RD_DOT_WHY_, (int)(end - seg),
             seg, n ? "\"" : "empty", (int)n, out, n ? "\"" : "");
    return false;
}

char *template_expand(const char *tmpl, const rd_tvars *v, bool url, char *why,
                      size_t whycap)
{
    char *b = NULL;
    size_t len = 0, cap = 0, seg_out = 0;
    const char *seg = tmpl;
    bool in_path = url, seg_var = false;
    buf_put(&b, &len, &cap, "", 0);
    for (const char *p = tmpl;;) {
        if (in_path && (!*p || *p == '/' || *p == '?' || *p == '#')) {
            if (seg_var && !segment_ok(seg, p, b + seg_out, len - seg_out, why, whycap))
                goto fail;
            in_path = *p == '/';
            seg = p + 1;
            seg_out = len + 1;
            seg_var = false;
        }
        if (!*p)
            break;
        const char *close = *p == '{' ? strchr(p + 1, '}') : NULL;
        size_t n = close ? (size_t)(close - p - 1) : 0;
        const char *val = NULL;
        if (close && var_value(v, p + 1, n, &val)) {
            char *esc = var_escape(p + 1, n, val, url, why, whycap);
            if (!esc)
                goto fail;
            buf_put(&b, &len, &cap, esc, strlen(esc));
            free(esc);
            seg_var = true;
            p = close + 1;
        } else {
            buf_put(&b, &len, &cap, p, 1);
            p++;
        }
    }
    return b;
fail:
    free(b);
    return NULL;
}

void idem_key_new(char out[33])
{
    unsigned char raw[16];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n > 0)
            got += (size_t)n;
        else
            break;
    }
    if (got < sizeof raw) {
        /* getrandom cannot fail on Linux ≥ 3.17 once seeded; keep a unique fallback */
        unsigned long long t = (unsigned long long)(clock_wall() * 1e9) ^
                               (unsigned long long)(clock_mono() * 1e9);
        for (size_t i = got; i < sizeof raw; i++)
            raw[i] = (unsigned char)((t >> (i % 8 * 8)) ^ (i * 131));
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

/* ---- responses -------------------------------------------------------------------- */

/* At most max bytes of s's first line: a result's message is one line, whatever the
 * server sent (a JSON "error" may hold "\n" too). */
static void first_line(char *out, size_t cap, const char *s, size_t max)
{
    size_t n = strcspn(s, "\r\n");
    snprintf(out, cap, "%.*s", (int)(n < max ? n : max), s);
}

/* The server's reason: "error" (string or {message}), "message", "detail". */
static void server_text(const cJSON *o, const rd_http_resp *resp, char *out, size_t cap)
{
    out[0] = '\0';
    const char *s = NULL;
    if (cJSON_IsObject(o)) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
        if (cJSON_IsString(e))
            s = e->valuestring;
        else if (cJSON_IsObject(e))
            s = json_str(e, "message");
        if (!s)
            s = json_str(o, "message");
        if (!s)
            s = json_str(o, "detail");
    }
    if (s)
        first_line(out, cap, s, cap);
    else if (resp->body && resp->body_len)
        first_line(out, cap, resp->body, 160);
}

static int find_attempt(const cJSON *o)
{
    if (!cJSON_IsObject(o))
        return 0;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "data");
    int n = (int)json_long(o, "attempt", 0, 999999999);
    if (!n && cJSON_IsObject(d))
        n = (int)json_long(d, "attempt", 0, 999999999);
    if (!n)
        n = (int)json_long(o, "attempts", 0, 999999999);
    if (!n && cJSON_IsObject(d))
        n = (int)json_long(d, "attempts", 0, 999999999);
    return n;
}

static void render_ok(rd_result *r, const cJSON *o)
{
    r->code = RD_RES_OK;
    r->attempt = find_attempt(o);
    const char *past = action_past(r->action);
    if (r->action == RD_ACT_RETRY && r->attempt > 0)
        snprintf(r->message, sizeof r->message, "%s: attempt %d queued", past, r->attempt);
    else if (r->action == RD_ACT_RETRY && r->http_status == 202)
        snprintf(r->message, sizeof r->message, "%s: queued", past);
    else
        snprintf(r->message, sizeof r->message, "%s", past);
}

static void render_error(rd_result *r, const cJSON *o, const rd_http_resp *resp)
{
    char txt[200];
    server_text(o, resp, txt, sizeof txt);
    const char *what = action_target_kind(r->action);
    static const char *const forbidden[] = {
#define RD_X_(e, n, p, t, f) f,
        RD_ACTION_LIST(RD_X_)
#undef RD_X_
    };
    switch (resp->status) {
    case 401:
        r->code = RD_RES_UNAUTHORIZED;
        snprintf(r->message, sizeof r->message, "not authorized");
        return;
    case 403:
        r->code = RD_RES_FORBIDDEN;
        snprintf(r->message, sizeof r->message, "your role may not %s", forbidden[r->action]);
        return;
    case 404:
        r->code = strncmp(txt, "no such route", 13) == 0 ? RD_RES_OTHER : RD_RES_NOT_FOUND;
        if (r->code == RD_RES_OTHER)
            snprintf(r->message, sizeof r->message, "core has %s", txt);
        else
            snprintf(r->message, sizeof r->message, "no such %s", what);
        return;
    case 409:
        r->code = strstr(txt, "budget") || strstr(txt, "exhausted") ? RD_RES_CONFLICT_BUDGET
                                                                    : RD_RES_CONFLICT_STATUS;
        snprintf(r->message, sizeof r->message, "%s", txt[0] ? txt : "conflict (HTTP 409)");
        return;
    case 502:
        r->code = RD_RES_BAD_GATEWAY;
        snprintf(r->message, sizeof r->message, "core could not read the store");
        return;
    default:
        r->code = RD_RES_OTHER;
        snprintf(r->message, sizeof r->message, "HTTP %ld%s%s", resp->status,
                 txt[0] ? ": " : "", txt);
        return;
    }
}

void result_from_response(rd_result *r, const rd_http_resp *resp)
{
    r->http_status = resp->status;
    r->attempt = 0;
    if (resp->status == 0) {
        if (resp->request_sent) {
            r->code = RD_RES_MAYBE_APPLIED;
            snprintf(r->message, sizeof r->message,
                     "core unreachable \xe2\x80\x94 the request may or may not have been "
                     "applied; re-send with the same key (%.100s)", resp->error);
        } else {
            r->code = RD_RES_UNREACHABLE;
            snprintf(r->message, sizeof r->message,
                     "core unreachable (not applied): %.150s", resp->error);
        }
        return;
    }
    cJSON *o = resp->body && resp->body_len && !resp->truncated
                   ? cJSON_ParseWithLength(resp->body, resp->body_len) : NULL;
    if (resp->status >= 200 && resp->status < 300)
        render_ok(r, o);
    else
        render_error(r, o, resp);
    cJSON_Delete(o);
}
