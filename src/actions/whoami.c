/* Who the core says the operator is: GET /auth/me (whoami.h). */
#include "whoami.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/jsonget.h"
#include "../core/xalloc.h"
#include "../io/http.h"
#include "../io/secret.h"
#include "../io/url.h"

enum { WHOAMI_TIMEOUT_MS = 10000 };

struct whoami_req {
    rd_auth *auth;
    rd_http *http;
    const rd_system_cfg *cfg;
    rd_whoami_cb cb;
    void *ud;
    uint64_t http_id;
    bool waiting_auth;
};

static void deliver(whoami_req *w, const rd_whoami *res)
{
    w->cb(res, w->ud);
    free(w);
}

static void copy_str(char *dst, size_t cap, const char *v)
{
    if (v && !dst[0])
        snprintf(dst, cap, "%s", v);
}

/* data.identity / login / sub / email, data.role, data.auth (or the same at top level). */
static void parse_me(const rd_http_resp *r, rd_whoami *res)
{
    cJSON *o = r->body ? cJSON_ParseWithLength(r->body, r->body_len) : NULL;
    const cJSON *d = json_obj(o, "data");
    if (!d)
        d = o;
    static const char *const keys[] = {"identity", "login", "sub", "email", "name"};
    copy_str(res->identity, sizeof res->identity,
             json_first_str(d, keys, sizeof keys / sizeof *keys));
    copy_str(res->role, sizeof res->role, json_str(d, "role"));
    copy_str(res->auth, sizeof res->auth, json_str(d, "auth"));
    cJSON_Delete(o);
    res->ok = res->identity[0] != '\0';
    if (!res->ok)
        snprintf(res->why, sizeof res->why, "the core's answer names no identity");
}

static void on_me(const rd_http_resp *r, void *ud)
{
    whoami_req *w = ud;
    w->http_id = 0;
    rd_whoami res = {.http_status = r->status, .anonymous = w->auth == NULL};
    if (r->status >= 200 && r->status < 300)
        parse_me(r, &res);
    else if (r->status == 401 || r->status == 403)
        snprintf(res.why, sizeof res.why, "the core refused the credentials (HTTP %ld)",
                 r->status);
    else if (r->status == 404)
        snprintf(res.why, sizeof res.why, "the core has no GET /auth/me (HTTP 404)");
    else if (r->status == 0) {
        res.unreachable = true;
        snprintf(res.why, sizeof res.why, "core unreachable: %.200s",
                 r->error[0] ? r->error : "no response");
    }
    else
        snprintf(res.why, sizeof res.why, "the core answered HTTP %ld", r->status);
    deliver(w, &res);
}

/* The request itself; false when it could not be started. */
static bool send_me(whoami_req *w)
{
    char *url = url_join(w->cfg->core.url, "/auth/me");
    char *h[2] = {0};
    size_t nh = w->auth ? auth_headers(w->auth, h, 1) : 0;
    const char *hdrs[] = {nh ? h[0] : "Accept: application/json", "Accept: application/json",
                          NULL};
    rd_http_req req = {.method = "GET", .url = url, .headers = hdrs, .cacert = w->cfg->http.cacert,
                       .timeout_ms = WHOAMI_TIMEOUT_MS, .max_body = 65536,
                       .credential = nh > 0, .insecure_ok = w->cfg->http.insecure};
    w->http_id = http_start(w->http, &req, on_me, w);
    secret_free(h[0]);
    free(url);
    return w->http_id != 0;
}

static void on_creds(bool ok, const char *why, void *ud)
{
    whoami_req *w = ud;
    w->waiting_auth = false;
    if (!ok) {
        rd_whoami res = {.creds_failed = true, .login_status = auth_login_status(w->auth)};
        snprintf(res.why, sizeof res.why, "credentials: %.230s", why ? why : "unavailable");
        deliver(w, &res);
        return;
    }
    if (!send_me(w)) {
        rd_whoami res = {0};
        snprintf(res.why, sizeof res.why, "%.250s", http_why(w->http));
        deliver(w, &res);
    }
}

whoami_req *whoami_start(rd_auth *auth, rd_http *http, const rd_system_cfg *cfg,
                         rd_whoami_cb cb, void *ud)
{
    whoami_req *w = xcalloc(1, sizeof *w);
    *w = (whoami_req){.auth = auth, .http = http, .cfg = cfg, .cb = cb, .ud = ud,
                      .waiting_auth = auth != NULL};
    if (auth)
        auth_ensure(auth, on_creds, w);
    else if (!send_me(w)) {          /* anonymous: reachability only */
        free(w);
        return NULL;
    }
    return w;
}

void whoami_cancel(whoami_req *w)
{
    if (!w)
        return;
    if (w->waiting_auth)
        auth_forget(w->auth, w);
    if (w->http_id)
        http_cancel(w->http, w->http_id);
    free(w);
}
