/* The action layer's actor: who acts on which system, with which credentials, and whether
 * it may (actions.h). Its batches are actions_batch.c; actions_priv.h is what the two share. */
#include "actions.h"

#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "../io/url.h"
#include "actions_priv.h"
#include "auth.h"
#include "journal.h"
#include "jwriter.h"
#include "request.h"
#include "whoami.h"

enum { ACT_HTTP_TIMEOUT_MS = 15000 };

struct rd_actor {
    rd_loop *base;
    rd_http *http;
    const rd_system_cfg *cfg;
    const rd_profile *prof;
    const rd_profile *(*profile_now)(void *ud);
    void *profile_ud;
    char *local_user;        /* "unknown (local user NAME)" until the core says who */
    bool read_only;
    rd_auth *auth;
    char *journal_path;
    rd_jwriter *jw;          /* the journal's writer thread (NULL without a loop) */
    rd_password_prompt prompt;
    void *prompt_ud;
    rd_journal_error_fn journal_err;
    void *journal_err_ud;
    struct prep_ctx *preps;  /* actor_prepare() calls still waiting for credentials */
    rd_batch *batches;
    void (*batches_detach)(rd_batch **head);   /* actions_batch.c's, once it linked one */
    long timeout_ms;
    whoami_req *who;         /* actor_whoami in flight */
    rd_whoami_cb who_cb;
    void *who_ud;
};

/* The profile the store reads with now (a schema era falls back to prof for routes). */
const rd_profile *actor_profile(const rd_actor *a)
{
    const rd_profile *p = a->profile_now ? a->profile_now(a->profile_ud) : NULL;
    return p ? p : a->prof;
}

/* ---- actor ------------------------------------------------------------------------ */

static void on_prompt(const char *prompt, void *ud)
{
    rd_actor *a = ud;
    if (a->prompt)
        a->prompt(a, prompt, a->prompt_ud);
    else
        auth_supply_password(a->auth, NULL);
}

rd_actor *actor_new(rd_loop *base, rd_http *http, const rd_actor_env *env)
{
    /* credentials will live in this process: no core dumps from here on */
    struct rlimit nocore = {0, 0};
    setrlimit(RLIMIT_CORE, &nocore);
    rd_actor *a = xcalloc(1, sizeof *a);
    a->base = base;
    a->http = http;
    a->cfg = env->cfg;
    a->prof = env->prof;
    a->profile_now = env->profile_now;
    a->profile_ud = env->profile_ud;
    const char *user = env->local_user && *env->local_user ? env->local_user : "?";
    a->local_user = xasprintf("unknown (local user %s)", user);
    a->read_only = env->read_only || env->cfg->read_only;
    a->auth = auth_new(base, http, env->cfg);
    if (a->read_only)
        auth_set_read_only(a->auth);
    a->jw = base ? jwriter_new(base) : NULL;
    a->timeout_ms = ACT_HTTP_TIMEOUT_MS;
    return a;
}

static void preps_free(rd_actor *a);

void actor_free(rd_actor *a)
{
    if (!a)
        return;
    if (a->batches_detach)         /* journals what is in flight, while the actor lives */
        a->batches_detach(&a->batches);
    jwriter_free(a->jw);           /* every queued line on disk */
    whoami_cancel(a->who);
    preps_free(a);
    auth_free(a->auth);
    free(a->journal_path);
    free(a->local_user);
    free(a);
}

void actor_set_password_prompt(rd_actor *a, rd_password_prompt fn, void *ud)
{
    a->prompt = fn;
    a->prompt_ud = ud;
    auth_set_prompt(a->auth, fn ? on_prompt : NULL, a);
}

void actor_supply_password(rd_actor *a, const char *password)
{
    auth_supply_password(a->auth, password);
}

void actor_set_journal_errors(rd_actor *a, rd_journal_error_fn fn, void *ud)
{
    a->journal_err = fn;
    a->journal_err_ud = ud;
}

void actor_set_timeout_ms(rd_actor *a, long ms)
{
    a->timeout_ms = ms > 0 ? ms : ACT_HTTP_TIMEOUT_MS;
}

void actor_set_journal(rd_actor *a, const char *path)
{
    free(a->journal_path);
    a->journal_path = xstrdup(path);
}

const char *actor_identity(const rd_actor *a)
{
    return auth_identity(a->auth);
}

static void on_whoami(const rd_whoami *w, void *ud)
{
    rd_actor *a = ud;
    a->who = NULL;
    a->who_cb(w, a->who_ud);
}

/* GET /auth/me with the credentials (auth) or without them (NULL). */
static bool whoami_as(rd_actor *a, rd_auth *auth, rd_whoami_cb cb, void *ud)
{
    if (a->who || !a->cfg->core.url || !*a->cfg->core.url)
        return false;
    a->who_cb = cb;
    a->who_ud = ud;
    a->who = whoami_start(auth, a->http, a->cfg, on_whoami, a);
    return a->who != NULL;
}

/* Read-only never authenticates: its probe of the core is anonymous. */
bool actor_whoami(rd_actor *a, rd_whoami_cb cb, void *ud)
{
    return whoami_as(a, a->read_only ? NULL : a->auth, cb, ud);
}

bool actor_probe(rd_actor *a, rd_whoami_cb cb, void *ud)
{
    const rd_system_cfg *c = a->cfg;
    bool would_prompt = c->core.auth && strcmp(c->core.auth, "jwt-login") == 0 && !c->core.password &&
                        !auth_has_token(a->auth);
    return whoami_as(a, would_prompt || a->read_only ? NULL : a->auth, cb, ud);
}

bool actor_read_only(const rd_actor *a)
{
    return a->read_only;
}

bool actor_insecure(const rd_actor *a)
{
    return a->cfg->core.url && url_is_http(a->cfg->core.url) && !url_host_is_loopback(a->cfg->core.url);
}

bool actor_can_act(const rd_actor *a, char *why, size_t whycap)
{
    const rd_system_cfg *c = a->cfg;
    if (a->read_only) {
        snprintf(why, whycap, "read-only: actions are disabled%s",
                 c->read_only ? " for this system" : " (--read-only)");
        return false;
    }
    if (!c->core.url || !*c->core.url) {
        snprintf(why, whycap, "no core API configured for system '%s' (core = URL)",
                 c->name ? c->name : "?");
        return false;
    }
    if (!url_is_http(c->core.url) && !url_is_https(c->core.url)) {
        snprintf(why, whycap, "core URL must be https:// (or http:// on loopback)");
        return false;
    }
    if (actor_insecure(a) && !c->http.insecure) {
        snprintf(why, whycap, "refusing plain http:// to a non-loopback core; use https:// "
                 "or set insecure = true");
        return false;
    }
    return auth_check(a->auth, why, whycap);
}

bool actor_supports(const rd_actor *a, rd_action kind)
{
    rd_route r;
    return route_for(actor_profile(a), kind, &r);
}

/* One actor_prepare() waiting for credentials. The actor owns it until the callback:
 * freed with the actor when it never comes (quit while the first login is asked for). */
typedef struct prep_ctx {
    struct prep_ctx *next;
    rd_actor *a;
    void (*cb)(bool ok, const char *why, void *ud);
    void *ud;
} prep_ctx;

static void on_prepared(bool ok, const char *why, void *ud)
{
    prep_ctx *p = ud;
    for (prep_ctx **pp = &p->a->preps; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    if (p->cb)
        p->cb(ok, why, p->ud);
    free(p);
}

void actor_prepare(rd_actor *a, void (*cb)(bool ok, const char *why, void *ud), void *ud)
{
    prep_ctx *p = xcalloc(1, sizeof *p);
    p->a = a;
    p->cb = cb;
    p->ud = ud;
    p->next = a->preps;
    a->preps = p;
    auth_ensure(a->auth, on_prepared, p);
}

static void preps_free(rd_actor *a)
{
    while (a->preps) {
        prep_ctx *p = a->preps;
        a->preps = p->next;
        auth_forget(a->auth, p);
        free(p);
    }
}

const char *actor_operator(const rd_actor *a)
{
    const char *id = auth_identity(a->auth);
    return id ? id : a->local_user;
}

/* ---- what a batch reads of its actor (actions_priv.h) ------------------------------ */

rd_loop *actor_base(const rd_actor *a) { return a->base; }
rd_http *actor_http(const rd_actor *a) { return a->http; }
rd_auth *actor_auth(const rd_actor *a) { return a->auth; }
const rd_system_cfg *actor_cfg(const rd_actor *a) { return a->cfg; }
long actor_timeout_ms(const rd_actor *a) { return a->timeout_ms; }
const char *actor_journal_path(const rd_actor *a) { return a->journal_path; }
rd_jwriter *actor_jwriter(const rd_actor *a) { return a->jw; }
rd_batch **actor_batches(rd_actor *a) { return &a->batches; }

void actor_keep_batches(rd_actor *a, void (*detach)(rd_batch **head))
{
    a->batches_detach = detach;
}

/* ---- journal ---------------------------------------------------------------------- */

char *action_target_text(const char *id, const char *parent)
{
    return parent ? xasprintf("%s/%s", parent, id) : xstrdup(id ? id : "");
}

/* A journal write failed: the console's status line, else stderr (paths only). */
void actor_journal_failed(rd_actor *a, const char *why)
{
    if (a->journal_err)
        a->journal_err(why, a->journal_err_ud);
    else {
        char *clean = sanitize_str(why, 0);   /* the path comes from the config */
        fprintf(stderr, "redrive: journal: %s\n", clean);
        free(clean);
    }
}

static void journal_refusal(rd_actor *a, rd_action kind, const rd_target *t, size_t n,
                            const char *why)
{
    char err[256];
    char **ts = xcalloc(n ? n : 1, sizeof *ts);
    for (size_t i = 0; i < n; i++)   /* no batch: as the operator named them */
        ts[i] = xstrdup(t[i].named ? t[i].named : t[i].id ? t[i].id : "");
    rd_journal_rec rec = {
        .operator_ = actor_operator(a), .system = a->cfg->name,
        .action = action_name(kind), .targets = (const char *const *)ts, .n_targets = n,
        .result = why, .code = result_code_name(RD_RES_REFUSED), .syslog = a->cfg->journal_syslog};
    if (a->jw)
        jwriter_drain(a->jw);   /* after the lines already queued */
    if (!journal_append(a->journal_path, &rec, err, sizeof err))
        actor_journal_failed(a, err);
    for (size_t i = 0; i < n; i++)
        free(ts[i]);
    free(ts);
}

bool actor_refuses(rd_actor *a, rd_action kind, const rd_target *t, size_t n,
                   char *why, size_t whycap)
{
    if (!actor_can_act(a, why, whycap) || (unsigned)kind >= RD_ACT__COUNT) {
        journal_refusal(a, kind, t, n, why);
        return true;
    }
    if (!actor_supports(a, kind)) {
        snprintf(why, whycap, "this system's profile has no %s action", action_name(kind));
        journal_refusal(a, kind, t, n, why);
        return true;
    }
    for (size_t i = 0; i < n; i++)
        if (!t[i].id || !*t[i].id) {
            snprintf(why, whycap, "empty target id");
            return true;
        }
    char jwhy[256];
    if (!journal_check(a->journal_path, jwhy, sizeof jwhy)) {
        snprintf(why, whycap, "refusing to act without an audit journal: %s", jwhy);
        return true;
    }
    return false;
}
