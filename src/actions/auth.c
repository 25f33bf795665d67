/* Credentials for the core API (see auth.h). */
#include "auth.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/jsonget.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/http.h"
#include "../io/secret.h"
#include "../io/url.h"
#include "../io/loop.h"

enum { AUTH_MARGIN_S = 30, AUTH_HTTP_TIMEOUT_MS = 10000, AUTH_CMD_TIMEOUT_S = 30 };

typedef struct auth_waiter {
    struct auth_waiter *next;
    rd_auth_cb cb;
    void *ud;
} auth_waiter;

struct rd_auth {
    rd_loop *base;
    rd_http *http;
    const rd_system_cfg *cfg;
    rd_auth_mode mode;
    char *token;             /* bearer / access token / API key */
    double token_exp;        /* epoch seconds, 0 = no known expiry */
    double token_got;        /* when it was obtained (for the refresh margin) */
    char *refresh;           /* jwt-login refresh token */
    uint64_t token_hash;     /* FNV-1a of the last token installed (never shown) */
    unsigned long serial;    /* bumped when a token different from the last is installed */
    char *identity;
    bool busy, waiting_password, me_started;
    bool read_only;          /* never authenticates (auth_set_read_only) */
    uint64_t http_id, me_id;
    rd_secret *secret;       /* token/password reference or token_command running */
    auth_waiter *waiters;
    rd_event *deliver;   /* zero timer: flush waiters when credentials are ready */
    bool last_ok;
    char last_why[256];
    long login_status;       /* the core's answer to the last POST /auth/login, 0 = none */
    rd_auth_prompt prompt;
    void *prompt_ud;
};

static void acquire(rd_auth *a);
static void do_login(rd_auth *a);

/* ---- JWT claims ------------------------------------------------------------------- */

static char *b64url_decode(const char *s, size_t n, size_t *outlen)
{
    static const char tbl[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char *out = xmalloc(n * 3 / 4 + 4);
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '=')
            break;
        const char *p = memchr(tbl, s[i], 64);
        if (!p) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)(p - tbl);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    out[o] = '\0';
    *outlen = o;
    return out;
}

/* Reads exp and sub/email from a JWT without verifying it (the server does that). */
static bool jwt_claims(const char *tok, double *exp, char **ident)
{
    const char *d1 = strchr(tok, '.');
    const char *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
    if (!d2)
        return false;
    size_t len;
    char *json = b64url_decode(d1 + 1, (size_t)(d2 - d1 - 1), &len);
    if (!json)
        return false;
    cJSON *o = cJSON_ParseWithLength(json, len);
    free(json);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return false;
    }
    double e = json_num(o, "exp", 0);   /* "exp": 1e999 is not "never expires" */
    if (e > 0)
        *exp = e;
    static const char *const keys[] = {"sub", "email", "preferred_username", "login"};
    const char *v = ident ? json_first_str(o, keys, sizeof keys / sizeof *keys) : NULL;
    if (v) {
        free(*ident);
        *ident = xstrndup(v, 128);
    }
    cJSON_Delete(o);
    return true;
}

bool auth_jwt_claims(const char *tok, double *exp, char **ident)
{
    return jwt_claims(tok, exp, ident);
}

/* ---- state ------------------------------------------------------------------------ */

static rd_auth_mode parse_mode(const char *s)
{
    if (!s || !*s || strcmp(s, "none") == 0)
        return AUTH_NONE;
    if (strcmp(s, "bearer") == 0) return AUTH_BEARER;
    if (strcmp(s, "token-command") == 0) return AUTH_TOKEN_CMD;
    if (strcmp(s, "jwt-login") == 0) return AUTH_JWT_LOGIN;
    if (strcmp(s, "api-key") == 0) return AUTH_API_KEY;
    if (strcmp(s, "dev-user") == 0) return AUTH_DEV_USER;
    return AUTH_INVALID;
}

static void on_deliver(int fd, short what, void *arg);

rd_auth *auth_new(rd_loop *base, rd_http *http, const rd_system_cfg *cfg)
{
    rd_auth *a = xcalloc(1, sizeof *a);
    a->base = base;
    a->http = http;
    a->cfg = cfg;
    a->mode = parse_mode(cfg->core.auth);
    a->deliver = loop_timer_new(base, on_deliver, a);
    if (a->mode == AUTH_DEV_USER && cfg->core.dev_user)
        a->identity = xasprintf("dev:%s", cfg->core.dev_user);
    else if (a->mode == AUTH_JWT_LOGIN && cfg->core.login)
        a->identity = xstrdup(cfg->core.login);
    return a;
}

/* A new token is in a->token: count it when it differs from the one before. */
static void token_installed(rd_auth *a)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)a->token; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    if (h != a->token_hash || a->serial == 0)
        a->serial++;
    a->token_hash = h;
}

static void drop_token(rd_auth *a)
{
    secret_free(a->token);
    a->token = NULL;
    a->token_exp = 0;
}

/* Renew this long before exp: 30 s, or a tenth of a short lifetime. */
static bool token_fresh(const rd_auth *a)
{
    if (!a->token)
        return false;
    if (a->token_exp == 0)
        return true;
    double life = a->token_exp - a->token_got, margin = AUTH_MARGIN_S;
    if (life > 0 && life / 10 < margin)
        margin = life / 10;
    return clock_wall() < a->token_exp - margin;
}

void auth_free(rd_auth *a)
{
    if (!a)
        return;
    if (a->http_id)
        http_cancel(a->http, a->http_id);
    if (a->me_id)
        http_cancel(a->http, a->me_id);
    secret_cancel(a->secret);
    drop_token(a);
    secret_free(a->refresh);
    while (a->waiters) {
        auth_waiter *w = a->waiters;
        a->waiters = w->next;
        free(w);
    }
    loop_event_free(a->deliver);
    free(a->identity);
    free(a);
}

rd_auth_mode auth_mode(const rd_auth *a) { return a->mode; }
unsigned long auth_serial(const rd_auth *a) { return a->serial; }
const char *auth_identity(const rd_auth *a) { return a->identity; }
bool auth_identity_coming(const rd_auth *a) { return a->me_id != 0; }
bool auth_has_token(const rd_auth *a) { return a->token != NULL; }

void auth_set_prompt(rd_auth *a, rd_auth_prompt fn, void *ud)
{
    a->prompt = fn;
    a->prompt_ud = ud;
}

void auth_set_read_only(rd_auth *a)
{
    a->read_only = true;
}

/* "auth = MODE needs WHAT" unless the setting is there (set, and not empty unless
 * empty_ok). */
static bool mode_has(const char *val, bool empty_ok, const char *mode, const char *what,
                     char *why, size_t whycap)
{
    if (val && (empty_ok || *val))
        return true;
    snprintf(why, whycap, "auth = %s needs %s", mode, what);
    return false;
}

bool auth_check(const rd_auth *a, char *why, size_t whycap)
{
    const rd_system_cfg *c = a->cfg;
    switch (a->mode) {
    case AUTH_INVALID:
        snprintf(why, whycap, "unknown auth mode '%s' (bearer, token-command, jwt-login, "
                 "api-key, dev-user or none)", c->core.auth);
        return false;
    case AUTH_BEARER:
    case AUTH_API_KEY:
        return mode_has(c->core.token, true, c->core.auth,
                        "token = env:NAME, file:PATH or cmd:COMMAND", why, whycap);
    case AUTH_TOKEN_CMD:
        return mode_has(c->core.token_command, false, "token-command", "token_command", why,
                        whycap);
    case AUTH_JWT_LOGIN:
        return mode_has(c->core.login, false, "jwt-login", "login", why, whycap);
    case AUTH_DEV_USER:
        if (!mode_has(c->core.dev_user, false, "dev-user", "dev_user", why, whycap))
            return false;
        if (!c->local || !url_host_is_loopback(c->core.url)) {
            snprintf(why, whycap, "dev-user is refused: only for a loopback core URL on a "
                     "system marked local = true");
            return false;
        }
        return true;
    case AUTH_NONE:
        return true;
    }
    return false;
}

static bool creds_valid(const rd_auth *a)
{
    switch (a->mode) {
    case AUTH_NONE:
    case AUTH_DEV_USER:
        return true;
    case AUTH_BEARER:
    case AUTH_API_KEY:
        return a->token != NULL;
    case AUTH_TOKEN_CMD:
    case AUTH_JWT_LOGIN:
        return token_fresh(a);
    case AUTH_INVALID:
        break;
    }
    return false;
}

/* ---- waiters ---------------------------------------------------------------------- */

static void on_deliver(int fd, short what, void *arg)
{
    rd_auth *a = arg;
    (void)fd; (void)what;
    /* take the list: callbacks may add new waiters */
    auth_waiter *list = a->waiters;
    a->waiters = NULL;
    bool ok = a->last_ok;
    char why[sizeof a->last_why];
    memcpy(why, a->last_why, sizeof why);
    while (list) {
        auth_waiter *w = list;
        list = w->next;
        rd_auth_cb cb = w->cb;
        void *ud = w->ud;
        free(w);
        cb(ok, ok ? NULL : why, ud);
    }
}

static void finish(rd_auth *a, bool ok, const char *why)
{
    a->busy = false;
    a->waiting_password = false;
    a->last_ok = ok;
    snprintf(a->last_why, sizeof a->last_why, "%s", ok ? "" : (why ? why : "failed"));
    loop_timer_in(a->deliver, 0);
}

void auth_ensure(rd_auth *a, rd_auth_cb cb, void *ud)
{
    auth_waiter *w = xcalloc(1, sizeof *w);
    w->cb = cb;
    w->ud = ud;
    auth_waiter **tail = &a->waiters;
    while (*tail)
        tail = &(*tail)->next;
    *tail = w;
    if (a->busy)
        return;
    char why[256];
    if (a->read_only) {
        finish(a, false, "read-only: the core is never logged in to");
        return;
    }
    if (!auth_check(a, why, sizeof why)) {
        finish(a, false, why);
        return;
    }
    if (creds_valid(a)) {
        finish(a, true, NULL);
        return;
    }
    a->busy = true;
    acquire(a);
}

void auth_forget(rd_auth *a, void *ud)
{
    for (auth_waiter **p = &a->waiters; *p;) {
        if ((*p)->ud == ud) {
            auth_waiter *w = *p;
            *p = w->next;
            free(w);
        } else {
            p = &(*p)->next;
        }
    }
}

void auth_invalidate(rd_auth *a)
{
    if (a->mode == AUTH_NONE || a->mode == AUTH_DEV_USER || a->busy)
        return;
    drop_token(a);
    a->me_started = false;
}

size_t auth_headers(const rd_auth *a, char **hdrs, size_t cap)
{
    if (cap == 0 || a->read_only)
        return 0;
    switch (a->mode) {
    case AUTH_BEARER:
    case AUTH_TOKEN_CMD:
    case AUTH_JWT_LOGIN:
        if (!a->token)
            return 0;
        hdrs[0] = xasprintf("Authorization: Bearer %s", a->token);
        return 1;
    case AUTH_API_KEY:
        if (!a->token)
            return 0;
        hdrs[0] = xasprintf("%s: %s", a->cfg->core.api_key_header && *a->cfg->core.api_key_header
                                          ? a->cfg->core.api_key_header : "X-API-Key", a->token);
        return 1;
    case AUTH_DEV_USER:
        hdrs[0] = xasprintf("x-dev-user: %s", a->cfg->core.dev_user);
        return 1;
    case AUTH_NONE:
    case AUTH_INVALID:
        break;
    }
    return 0;
}

/* ---- identity via /auth/me (opaque tokens) ---------------------------------------- */

static void on_me(const rd_http_resp *r, void *ud)
{
    rd_auth *a = ud;
    a->me_id = 0;
    if (r->status != 200 || !r->body)
        return;
    cJSON *o = cJSON_ParseWithLength(r->body, r->body_len);
    const cJSON *d = json_obj(o, "data");
    static const char *const keys[] = {"login", "identity", "sub", "email", "name"};
    const char *v = json_first_str(d ? d : o, keys, sizeof keys / sizeof *keys);
    if (v) {
        free(a->identity);
        a->identity = xstrndup(v, 128);
    }
    cJSON_Delete(o);
}

static void learn_identity(rd_auth *a)
{
    if (a->token && jwt_claims(a->token, &a->token_exp, &a->identity) && a->identity)
        return;
    if (a->identity || a->me_started || a->mode == AUTH_NONE || !a->cfg->core.url)
        return;
    a->me_started = true;
    char *url = url_join(a->cfg->core.url, "/auth/me");
    char *h[2] = {0};
    auth_headers(a, h, 1);
    const char *hdrs[] = {h[0], "Accept: application/json", NULL};
    rd_http_req req = {.method = "GET", .url = url, .headers = hdrs,
                       .cacert = a->cfg->http.cacert, .timeout_ms = AUTH_HTTP_TIMEOUT_MS,
                       .max_body = 65536, .credential = true, .insecure_ok = a->cfg->http.insecure};
    a->me_id = http_start(a->http, &req, on_me, a);
    secret_free(h[0]);
    free(url);
}

static void got_token(rd_auth *a, const char *tok)
{
    drop_token(a);
    a->token = xstrdup(tok);
    token_installed(a);
    double exp = 0;
    if (a->mode == AUTH_TOKEN_CMD || a->mode == AUTH_JWT_LOGIN)
        jwt_claims(a->token, &exp, NULL);
    a->token_exp = exp;
    a->token_got = clock_wall();
    learn_identity(a);
    finish(a, true, NULL);
}

static void on_token(bool ok, const char *tok, const char *why, void *ud)
{
    rd_auth *a = ud;
    a->secret = NULL;
    if (!ok) {
        char msg[sizeof a->last_why], at[160];
        config_key_where(a->cfg, a->mode == AUTH_TOKEN_CMD ? "token_command" : "token", at,
                         sizeof at);
        snprintf(msg, sizeof msg, "%.150s: %.100s", at, why);
        finish(a, false, msg);
        return;
    }
    got_token(a, tok);
}

/* ---- jwt-login -------------------------------------------------------------------- */

/* The core's token response ({"data": {...}} or bare). false, with why: not JSON, no
 * access_token, or an expires_in below 0 or not finite (1e999 reads as inf): the response
 * is refused whole and the credentials held stay as they were. */
static bool parse_tokens(rd_auth *a, const rd_http_resp *r, char *why, size_t cap)
{
    cJSON *o = r->body ? cJSON_ParseWithLength(r->body, r->body_len) : NULL;
    const cJSON *d = json_obj(o, "data");
    if (!d)
        d = o;
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(d, "access_token");
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(d, "refresh_token");
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(d, "expires_in");
    bool ok = false;
    if (!o)
        snprintf(why, cap, "the core's token response is not JSON");
    else if (!cJSON_IsString(at) || !at->valuestring[0])
        snprintf(why, cap, "the core's token response has no access_token");
    else if (cJSON_IsNumber(ex) && !(isfinite(ex->valuedouble) && ex->valuedouble >= 0))
        snprintf(why, cap, "the core's token response has expires_in %s; its token is not used",
                 isfinite(ex->valuedouble) ? "below 0" : "out of range (not a finite number)");
    else
        ok = true;
    if (ok) {
        drop_token(a);
        a->token = xstrdup(at->valuestring);
        token_installed(a);
        double exp = 0;
        jwt_claims(a->token, &exp, &a->identity);
        if (cJSON_IsNumber(ex) && ex->valuedouble > 0)   /* 0 or absent: the JWT's exp */
            exp = clock_wall() + ex->valuedouble;
        a->token_exp = exp;
        a->token_got = clock_wall();
        if (cJSON_IsString(rt) && rt->valuestring[0]) {
            secret_free(a->refresh);
            a->refresh = xstrdup(rt->valuestring);
        }
    }
    if (cJSON_IsString(at))
        secret_wipe(at->valuestring, strlen(at->valuestring));
    if (cJSON_IsString(rt))
        secret_wipe(rt->valuestring, strlen(rt->valuestring));
    cJSON_Delete(o);
    if (r->body)
        secret_wipe(r->body, r->body_len);
    return ok;
}

static void post_json(rd_auth *a, const char *path, const char *body, rd_http_cb cb)
{
    char *url = url_join(a->cfg->core.url, path);
    const char *hdrs[] = {"Accept: application/json", NULL};
    rd_http_req req = {.method = "POST", .url = url, .body = body, .headers = hdrs,
                       .cacert = a->cfg->http.cacert, .timeout_ms = AUTH_HTTP_TIMEOUT_MS,
                       .max_body = 65536, .credential = true, .insecure_ok = a->cfg->http.insecure};
    a->http_id = http_start(a->http, &req, cb, a);
    free(url);
    if (!a->http_id) {
        char why[240];
        snprintf(why, sizeof why, "login request not sent: %.200s", http_why(a->http));
        finish(a, false, why);
    }
}

static void on_login(const rd_http_resp *r, void *ud)
{
    rd_auth *a = ud;
    a->http_id = 0;
    a->login_status = r->status;
    char why[256], bad[200];
    if (r->status == 200 && parse_tokens(a, r, bad, sizeof bad)) {
        finish(a, true, NULL);
        return;
    }
    if (r->status == 200)
        snprintf(why, sizeof why, "login: %s", bad);
    else if (r->status == 401 || r->status == 403)
        snprintf(why, sizeof why, "login refused for '%s' (HTTP %ld)", a->cfg->core.login,
                 r->status);
    else if (r->status == 0)
        snprintf(why, sizeof why, "login: core unreachable: %.150s", r->error);
    else
        snprintf(why, sizeof why, "login failed (HTTP %ld)", r->status);
    finish(a, false, why);
}

static void login_with(rd_auth *a, const char *password)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "login", a->cfg->core.login);
    cJSON_AddStringToObject(o, "password", password);
    char *body = cJSON_PrintUnformatted(o);
    cJSON *pw = cJSON_GetObjectItemCaseSensitive(o, "password");
    secret_wipe(pw->valuestring, strlen(pw->valuestring));
    cJSON_Delete(o);
    post_json(a, "/auth/login", body, on_login);
    secret_free(body);
}

static void on_password(bool ok, const char *pw, const char *why, void *ud)
{
    rd_auth *a = ud;
    a->secret = NULL;
    if (!ok) {
        char msg[sizeof a->last_why], at[160];
        config_key_where(a->cfg, "password", at, sizeof at);
        snprintf(msg, sizeof msg, "%.150s: %.100s", at, why);
        finish(a, false, msg);
        return;
    }
    login_with(a, pw);
}

static void do_login(rd_auth *a)
{
    if (!a->cfg->core.password) {
        if (!a->prompt) {
            finish(a, false, "no password source: set password = cmd:/env:/file: or run "
                             "where redrive can prompt");
            return;
        }
        a->waiting_password = true;
        char prompt[200];
        snprintf(prompt, sizeof prompt, "password for %s@%s: ", a->cfg->core.login,
                 a->cfg->name ? a->cfg->name : "core");
        a->prompt(prompt, a->prompt_ud);
        return;
    }
    a->secret = secret_resolve(a->base, a->cfg->core.password, 0, AUTH_CMD_TIMEOUT_S,
                               on_password, a);
}

void auth_supply_password(rd_auth *a, const char *password)
{
    if (!a->waiting_password)
        return;
    a->waiting_password = false;
    if (!password) {
        finish(a, false, "password prompt cancelled");
        return;
    }
    login_with(a, password);
}

static void on_refresh(const rd_http_resp *r, void *ud)
{
    rd_auth *a = ud;
    a->http_id = 0;
    char why[200];
    if (r->status == 200 && parse_tokens(a, r, why, sizeof why)) {
        finish(a, true, NULL);
        return;
    }
    if (r->status == 200) {   /* a bad answer: said, not retried in a loop */
        char msg[sizeof a->last_why];
        snprintf(msg, sizeof msg, "refresh: %s", why);
        finish(a, false, msg);
        return;
    }
    /* refresh refused or failed: log in again */
    secret_free(a->refresh);
    a->refresh = NULL;
    do_login(a);
}

static void acquire(rd_auth *a)
{
    switch (a->mode) {
    case AUTH_BEARER:
    case AUTH_API_KEY:
        a->secret = secret_resolve(a->base, a->cfg->core.token, 0, AUTH_CMD_TIMEOUT_S,
                                   on_token, a);
        return;
    case AUTH_TOKEN_CMD:
        a->secret = secret_command(a->base, a->cfg->core.token_command, AUTH_CMD_TIMEOUT_S,
                                   on_token, a);
        return;
    case AUTH_JWT_LOGIN:
        if (a->refresh) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "refresh_token", a->refresh);
            char *body = cJSON_PrintUnformatted(o);
            cJSON *rt = cJSON_GetObjectItemCaseSensitive(o, "refresh_token");
            secret_wipe(rt->valuestring, strlen(rt->valuestring));
            cJSON_Delete(o);
            post_json(a, "/auth/refresh", body, on_refresh);
            secret_free(body);
        } else {
            do_login(a);
        }
        return;
    case AUTH_NONE:
    case AUTH_DEV_USER:
    case AUTH_INVALID:
        finish(a, true, NULL);
        return;
    }
}

long auth_login_status(const rd_auth *a)
{
    return a ? a->login_status : 0;
}
