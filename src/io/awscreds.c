/* AWS credential provider chain on the loop (see awscreds.h). */
#include "awscreds.h"

#include <cjson/cJSON.h>
#include <event2/event.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/ini.h"
#include "../core/jsonget.h"
#include "../core/rfc3339.h"
#include "../core/xalloc.h"
#include "awsecs.h"
#include "awscreds_file.h"
#include "clock.h"
#include "http.h"
#include "proc.h"

enum { AC_REFRESH_EARLY_S = 300, AC_PROC_TIMEOUT_S = 30, AC_HTTP_TIMEOUT_MS = 2000,
       AC_HTTP_CONNECT_MS = 1000, AC_RETRY_S = 10, AC_FILE_MAX = 1 << 20 };

typedef enum { ST_NONE, ST_FETCHING, ST_READY, ST_FAILED } ac_state;
typedef enum { STEP_ENV, STEP_FILES, STEP_ECS, STEP_IMDS, STEP_END } ac_step;

struct rd_awscreds {
    struct event_base *base;
    rd_http *http;
    char *profile;                   /* configured aws_profile, NULL = AWS_PROFILE/default */
    char *region;
    rd_awscreds_cb cb;
    void *ud;
    ac_state state;
    ac_step step;
    rd_aws_creds cur;
    char err[256];
    char ecs_refused[200];           /* why the ECS endpoint was refused, "" = it was not */
    double failed_at;
    rd_proc *proc;
    uint64_t req;
    char *imds_token;
    char *imds_base;
    int imds_stage;                  /* 0 token, 1 role, 2 creds */
    struct event *ev_done;           /* deferred "finished" notification */
};

static void next_step(rd_awscreds *c);

static void wipe_free(char *s)
{
    if (s)
        OPENSSL_cleanse(s, strlen(s));
    free(s);
}

void awscreds_clear(rd_aws_creds *k)
{
    wipe_free(k->access_key);
    wipe_free(k->secret_key);
    wipe_free(k->token);
    memset(k, 0, sizeof *k);
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static void finish(rd_awscreds *c, bool ok)
{
    c->state = ok ? ST_READY : ST_FAILED;
    if (!ok)
        c->failed_at = clock_mono();
    struct timeval tv = { 0, 0 };
    evtimer_add(c->ev_done, &tv);    /* never call back from inside awscreds_get */
}

static void on_done(evutil_socket_t fd, short what, void *arg)
{
    rd_awscreds *c = arg;
    if (c->cb)
        c->cb(c->ud);
}

static void set_static(rd_awscreds *c, const char *ak, const char *sk, const char *tok,
                       const char *provider)
{
    awscreds_clear(&c->cur);
    c->cur.access_key = xstrdup(ak);
    c->cur.secret_key = xstrdup(sk);
    c->cur.token = tok && *tok ? xstrdup(tok) : NULL;
    snprintf(c->cur.provider, sizeof c->cur.provider, "%s", provider);
}

bool awscreds_parse_json(const char *body, size_t len, rd_aws_creds *out, char *why,
                         size_t cap)
{
    memset(out, 0, sizeof *out);
    cJSON *j = cJSON_ParseWithLength(body, len);
    if (!j || !cJSON_IsObject(j)) {
        snprintf(why, cap, "credentials answer is not a JSON object");
        cJSON_Delete(j);
        return false;
    }
    const char *ak = json_str(j, "AccessKeyId");
    const char *sk = json_str(j, "SecretAccessKey");
    const char *tok = json_str(j, "Token");
    if (!tok)
        tok = json_str(j, "SessionToken");
    const char *exp = json_str(j, "Expiration");
    bool ok = ak && *ak && sk && *sk;
    double when = 0;
    if (!ok)
        snprintf(why, cap, "credentials answer lacks AccessKeyId or SecretAccessKey");
    else if (exp && !rfc3339_parse(exp, &when)) {
        snprintf(why, cap, "credentials answer has a bad Expiration");
        ok = false;
    }
    if (ok) {
        out->access_key = xstrdup(ak);
        out->secret_key = xstrdup(sk);
        out->token = tok && *tok ? xstrdup(tok) : NULL;
        out->expires = when;
    }
    /* the parsed tree holds the secret too */
    for (cJSON *it = j->child; it; it = it->next)
        if (cJSON_IsString(it) && it->valuestring)
            OPENSSL_cleanse(it->valuestring, strlen(it->valuestring));
    cJSON_Delete(j);
    return ok;
}

/* ---- shared files ---------------------------------------------------------------------- */

void prof_vals_free(prof_vals *v)
{
    wipe_free(v->ak);
    wipe_free(v->sk);
    wipe_free(v->tok);
    free(v->process);
    free(v->region);
    memset(v, 0, sizeof *v);
}

static char *home_file(const char *envname, const char *rel)
{
    const char *p = env(envname);
    if (p)
        return xstrdup(p);
    const char *home = env("HOME");
    return home ? xasprintf("%s/%s", home, rel) : NULL;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return NULL;
    char *buf = xmalloc(AC_FILE_MAX + 1);
    *len = fread(buf, 1, AC_FILE_MAX, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

/* A value holding a control byte (a lone CR the line reader keeps, ESC, NUL...) would go
 * into a signed header or a host name: left out, as if absent. A tab is text. */
static bool has_control(const char *v)
{
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
            return true;
    return false;
}

void awscreds_profile_parse(const char *path, const char *text, size_t len, const char *name,
                            bool config, prof_vals *v)
{
    ini_format fmt = { .flags = INI_SECTIONS | INI_COMMENTS, .header_usage = NULL };
    rd_diags d = { 0 };
    ini_reader r;
    ini_open(&r, path, text, len, &fmt, &d);
    ini_line l;
    bool in = false;
    while (ini_next(&r, &l)) {
        if (l.kind == INI_SECTION) {
            const char *t = l.text ? l.text : "";
            while (*t == ' ')
                t++;
            if (config && strcmp(name, "default") != 0)
                in = strncmp(t, "profile ", 8) == 0 && strcmp(t + 8, name) == 0;
            else
                in = strcmp(t, name) == 0;
            continue;
        }
        if (!in || l.kind != INI_PAIR || !l.name || !l.value)
            continue;
        char **slot = !strcmp(l.name, "aws_access_key_id")       ? &v->ak
                      : !strcmp(l.name, "aws_secret_access_key") ? &v->sk
                      : !strcmp(l.name, "aws_session_token")     ? &v->tok
                      : !strcmp(l.name, "credential_process")    ? &v->process
                      : !strcmp(l.name, "region")                ? &v->region
                                                                 : NULL;
        if (slot && !*slot && !has_control(l.value))
            *slot = xstrdup(l.value);
    }
    ini_close(&r);
    diags_free(&d);
}

/* Reads one profile's keys from an INI file; the config file names sections
 * "profile NAME" (except "default"). */
static void read_profile(const char *path, const char *name, bool config, prof_vals *v)
{
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text)
        return;
    awscreds_profile_parse(path, text, len, name, config, v);
    OPENSSL_cleanse(text, len);
    free(text);
}

static const char *profile_name(const rd_awscreds *c)
{
    return c->profile ? c->profile : env("AWS_PROFILE") ? env("AWS_PROFILE") : "default";
}

static void on_process(bool ok, const char *out, size_t len, const char *why, void *ud)
{
    rd_awscreds *c = ud;
    c->proc = NULL;
    char msg[160];
    rd_aws_creds k;
    if (!ok) {
        snprintf(c->err, sizeof c->err, "credential_process (profile %.40s): %.100s",
                 profile_name(c), why);
    } else if (!awscreds_parse_json(out, len, &k, msg, sizeof msg)) {
        snprintf(c->err, sizeof c->err, "credential_process (profile %.40s): %s",
                 profile_name(c), msg);
    } else {
        awscreds_clear(&c->cur);
        c->cur = k;
        snprintf(c->cur.provider, sizeof c->cur.provider, "credential-process:%.20s",
                 profile_name(c));
        finish(c, true);
        return;
    }
    finish(c, false);                /* a configured process that fails is the answer */
}

/* true when the files settled the matter (success, a running process, or an error). */
static bool try_files(rd_awscreds *c)
{
    const char *name = profile_name(c);
    prof_vals cred = { 0 }, conf = { 0 };
    char *cp = home_file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
    char *cf = home_file("AWS_CONFIG_FILE", ".aws/config");
    read_profile(cp, name, false, &cred);
    read_profile(cf, name, true, &conf);
    if (conf.region && !c->region)
        c->region = xstrdup(conf.region);
    const char *ak = cred.ak ? cred.ak : conf.ak;
    const char *sk = cred.ak ? cred.sk : conf.sk;
    const char *tok = cred.ak ? cred.tok : conf.tok;
    const char *process = cred.process ? cred.process : conf.process;
    bool settled = true;
    char prov[48];
    snprintf(prov, sizeof prov, "shared-file:%.30s", name);
    if (ak && sk) {
        set_static(c, ak, sk, tok, prov);
        finish(c, true);
    } else if (process) {
        c->proc = proc_run(c->base, process, AC_PROC_TIMEOUT_S, on_process, c);
        if (!c->proc) {
            snprintf(c->err, sizeof c->err, "credential_process could not be started");
            finish(c, false);
        }
    } else if (ak || sk) {
        snprintf(c->err, sizeof c->err, "profile %.40s has only one of aws_access_key_id "
                 "and aws_secret_access_key", name);
        finish(c, false);
    } else if (c->profile) {
        snprintf(c->err, sizeof c->err, "aws_profile %.40s: no credentials in the shared "
                 "files", name);
        finish(c, false);
    } else {
        settled = false;
    }
    prof_vals_free(&cred);
    prof_vals_free(&conf);
    free(cp);
    free(cf);
    return settled;
}

/* ---- ECS and IMDS (HTTP on the loop) ---------------------------------------------------- */

static bool http_failed(rd_awscreds *c, const rd_http_resp *r, const char *who)
{
    if (r->status >= 200 && r->status <= 299 && !r->truncated)
        return false;
    if (r->status == 0)
        snprintf(c->err, sizeof c->err, "%s: no answer (%.120s)", who,
                 r->timed_out ? "timed out" : r->error);
    else
        snprintf(c->err, sizeof c->err, "%s: HTTP %ld", who, r->status);
    return true;
}

static void got_json_creds(rd_awscreds *c, const rd_http_resp *r, const char *who)
{
    char msg[160];
    rd_aws_creds k;
    if (http_failed(c, r, who)) {
        finish(c, false);
        return;
    }
    if (!awscreds_parse_json(r->body, r->body_len, &k, msg, sizeof msg)) {
        snprintf(c->err, sizeof c->err, "%s: %s", who, msg);
        finish(c, false);
        return;
    }
    awscreds_clear(&c->cur);
    c->cur = k;
    snprintf(c->cur.provider, sizeof c->cur.provider, "%s", who);
    finish(c, true);
}

static void on_ecs(const rd_http_resp *r, void *ud)
{
    rd_awscreds *c = ud;
    c->req = 0;
    got_json_creds(c, r, "ecs");
}

/* ecs_token: the headers carry the ECS authorization token, whose endpoint awsecs.h has
 * vetted (its plain-http link-local hosts are allowed by that rule, not by loopback). */
static uint64_t get(rd_awscreds *c, const char *method, const char *url,
                    const char *const *hdrs, rd_http_cb cb, bool ecs_token)
{
    rd_http_req req = { .method = method, .url = url, .headers = hdrs,
                        .timeout_ms = AC_HTTP_TIMEOUT_MS,
                        .connect_timeout_ms = AC_HTTP_CONNECT_MS, .max_body = 64 << 10,
                        .credential = ecs_token, .insecure_ok = ecs_token };
    return http_start(c->http, &req, cb, c);
}

static bool try_ecs(rd_awscreds *c)
{
    char *url = NULL, *tok = NULL;
    bool with_token = false;
    if (!c->http)
        return false;
    awsecs_verdict v = awsecs_endpoint(env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"),
                                       env("AWS_CONTAINER_CREDENTIALS_FULL_URI"), &url,
                                       &with_token, c->ecs_refused, sizeof c->ecs_refused);
    if (v != AWSECS_OK)
        return false;                /* none, or refused: on to the next provider */
    if (with_token && env("AWS_CONTAINER_AUTHORIZATION_TOKEN"))
        tok = xstrdup(env("AWS_CONTAINER_AUTHORIZATION_TOKEN"));
    if (with_token && !tok && env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")) {
        size_t len = 0;
        tok = slurp(env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"), &len);
        if (tok)
            tok[strcspn(tok, "\r\n")] = '\0';
    }
    char *auth = tok ? xasprintf("Authorization: %s", tok) : NULL;
    const char *hdrs[] = { auth, NULL };
    c->req = get(c, "GET", url, auth ? hdrs : NULL, on_ecs, auth != NULL);
    if (!c->req) {
        snprintf(c->err, sizeof c->err, "ecs: request could not be started");
        finish(c, false);
    }
    wipe_free(auth);
    wipe_free(tok);
    free(url);
    return true;
}

static void imds_next(rd_awscreds *c, const char *role);

static void on_imds(const rd_http_resp *r, void *ud)
{
    rd_awscreds *c = ud;
    c->req = 0;
    if (c->imds_stage == 2) {
        got_json_creds(c, r, "imds");
        return;
    }
    if (http_failed(c, r, "imds")) {
        finish(c, false);
        return;
    }
    if (c->imds_stage == 0) {
        wipe_free(c->imds_token);
        c->imds_token = xstrndup(r->body, strcspn(r->body, "\r\n"));
        c->imds_stage = 1;
        imds_next(c, NULL);
        return;
    }
    char *role = xstrndup(r->body, strcspn(r->body, "\r\n"));
    c->imds_stage = 2;
    if (!*role || strchr(role, '/')) {
        snprintf(c->err, sizeof c->err, "imds: no instance role");
        finish(c, false);
    } else {
        imds_next(c, role);
    }
    free(role);
}

static void imds_next(rd_awscreds *c, const char *role)
{
    char *url, *hdr;
    if (c->imds_stage == 0) {
        url = xasprintf("%s/latest/api/token", c->imds_base);
        hdr = xstrdup("X-aws-ec2-metadata-token-ttl-seconds: 21600");
    } else {
        url = xasprintf("%s/latest/meta-data/iam/security-credentials/%s", c->imds_base,
                        role ? role : "");
        hdr = xasprintf("X-aws-ec2-metadata-token: %s", c->imds_token);
    }
    const char *hdrs[] = { hdr, NULL };
    c->req = get(c, c->imds_stage == 0 ? "PUT" : "GET", url, hdrs, on_imds, false);
    wipe_free(hdr);
    free(url);
    if (!c->req) {
        snprintf(c->err, sizeof c->err, "imds: request could not be started");
        finish(c, false);
    }
}

static bool try_imds(rd_awscreds *c)
{
    const char *off = env("AWS_EC2_METADATA_DISABLED");
    if ((off && strcasecmp(off, "true") == 0) || !c->http)
        return false;
    free(c->imds_base);
    const char *ep = env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
    c->imds_base = xstrdup(ep ? ep : "http://169.254.169.254");
    for (size_t n = strlen(c->imds_base); n > 0 && c->imds_base[n - 1] == '/'; n--)
        c->imds_base[n - 1] = '\0';
    c->imds_stage = 0;
    imds_next(c, NULL);
    return true;
}

/* ---- the chain ------------------------------------------------------------------------------- */

static void next_step(rd_awscreds *c)
{
    for (;;) {
        ac_step s = c->step++;
        switch (s) {
        case STEP_ENV:
            if (!c->profile && env("AWS_ACCESS_KEY_ID") && env("AWS_SECRET_ACCESS_KEY")) {
                set_static(c, env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY"),
                           env("AWS_SESSION_TOKEN"), "environment");
                finish(c, true);
                return;
            }
            break;
        case STEP_FILES:
            if (try_files(c))
                return;
            break;
        case STEP_ECS:
            if (try_ecs(c))
                return;
            break;
        case STEP_IMDS:
            if (try_imds(c))
                return;
            break;
        case STEP_END:
            snprintf(c->err, sizeof c->err, "no AWS credentials found (environment, shared "
                     "files, ECS, instance metadata)%s%.150s", c->ecs_refused[0] ? "; " : "",
                     c->ecs_refused);
            finish(c, false);
            return;
        }
    }
}

rd_awscreds *awscreds_new(struct event_base *base, rd_http *http, const char *profile,
                          rd_awscreds_cb cb, void *ud)
{
    rd_awscreds *c = xcalloc(1, sizeof *c);
    c->base = base;
    c->http = http;
    c->profile = profile && *profile ? xstrdup(profile) : NULL;
    c->cb = cb;
    c->ud = ud;
    c->ev_done = evtimer_new(base, on_done, c);
    /* the region of the profile, read now: the files are small and local */
    prof_vals conf = { 0 };
    char *cf = home_file("AWS_CONFIG_FILE", ".aws/config");
    read_profile(cf, profile_name(c), true, &conf);
    free(cf);
    if (conf.region)
        c->region = xstrdup(conf.region);
    else if (env("AWS_REGION") || env("AWS_DEFAULT_REGION"))
        c->region = xstrdup(env("AWS_REGION") ? env("AWS_REGION") : env("AWS_DEFAULT_REGION"));
    prof_vals_free(&conf);
    return c;
}

void awscreds_free(rd_awscreds *c)
{
    if (!c)
        return;
    proc_cancel(c->proc);
    if (c->req)
        http_cancel(c->http, c->req);
    event_free(c->ev_done);
    awscreds_clear(&c->cur);
    wipe_free(c->imds_token);
    free(c->imds_base);
    free(c->profile);
    free(c->region);
    free(c);
}

const char *awscreds_region(const rd_awscreds *c)
{
    return c->region;
}

static void start_fetch(rd_awscreds *c)
{
    c->state = ST_FETCHING;
    c->step = STEP_ENV;
    c->err[0] = c->ecs_refused[0] = '\0';
    next_step(c);
}

const rd_aws_creds *awscreds_get(rd_awscreds *c, char *why, size_t cap)
{
    double now = clock_wall();
    if (c->state == ST_READY &&
        (c->cur.expires <= 0 || c->cur.expires - now > AC_REFRESH_EARLY_S))
        return &c->cur;
    if (c->state == ST_FETCHING && c->cur.access_key && c->cur.expires > now)
        return &c->cur;              /* refreshing early; the old ones still work */
    if (c->state == ST_READY || c->state == ST_NONE ||
        (c->state == ST_FAILED && clock_mono() - c->failed_at >= AC_RETRY_S)) {
        bool still_valid = c->state == ST_READY && c->cur.expires > now;
        start_fetch(c);
        if (c->state == ST_READY)
            return &c->cur;
        if (still_valid && c->cur.access_key)
            return &c->cur;          /* refreshing early; the old ones still work */
    }
    snprintf(why, cap, "%s", c->state == ST_FETCHING ? "AWS credentials pending"
                             : c->err[0] ? c->err : "no AWS credentials");
    return NULL;
}
