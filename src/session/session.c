/* One config section turned into a running system (session.h). */
#include "session.h"

#include <assert.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "../actions/journal.h"
#include "../core/fsperm.h"
#include "../core/ini.h"
#include "../core/sanitize.h"
#include "../core/testhook.h"
#include "../core/textutil.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/http.h"
#include "../io/secret.h"
#include "../io/loop.h"
#include "syshist.h"

struct rd_session {
    const rd_opts *opts;
    char *config_path;
    bool config_missing;       /* no file at the default path */
    bool config_errors;
    rd_config cfg;
    rd_diags diags;
    char *user;                /* the operator's local login name */
    rd_model *model;
    /* the open system */
    rd_system_cfg *sys;
    rd_profile prof;
    bool have_prof;
    rd_http *http;
    rd_sources *src;
    rd_actor *actor;
    rd_syshist *hist;          /* SESSION_HISTORY: the last hour */
    rd_event *core_tick;   /* the core probe's timer, NULL when there is none */
    rd_change_cb on_change;    /* told when the core state changed */
    void *change_ud;
};

static char *local_user(void)
{
    struct passwd *pw = getpwuid(getuid());
    return pw && pw->pw_name ? xstrdup(pw->pw_name) : NULL;
}

rd_session *session_new(const rd_opts *opts)
{
    rd_session *s = xcalloc(1, sizeof *s);
    s->opts = opts;
    s->model = model_new();
    s->user = local_user();
    s->config_path = opts->config_path ? xstrdup(opts->config_path) : config_default_path();
    if (!opts->config_path && access(s->config_path, F_OK) != 0)
        s->config_missing = true;   /* the console still starts without one */
    else
        s->config_errors = !config_load(s->config_path, &s->cfg, &s->diags);
    return s;
}

void session_free(rd_session *s)
{
    if (!s)
        return;
    session_close(s);
    model_free(s->model);
    config_free(&s->cfg);
    diags_free(&s->diags);
    free(s->config_path);
    free(s->user);
    free(s);
}

rd_system_cfg *session_find(rd_session *s, const char *name)
{
    return config_find(&s->cfg, name);
}

const char *session_suggest_system(const rd_session *s, const char *name, char *buf, size_t cap)
{
    return config_suggest_system(&s->cfg, name, buf, cap);
}

bool session_has_systems(const rd_session *s)
{
    return s->cfg.n > 0;
}

size_t session_system_count(const rd_session *s)
{
    return s->cfg.n;
}

const rd_system_cfg *session_system_at(const rd_session *s, size_t i)
{
    assert(i < s->cfg.n);
    return &s->cfg.systems[i];
}

/* ---- the validation pass: what can be checked before connecting ------------------- */

/* The line of `key` in the open system's section (its header's line when not found): the
 * config is read again through the one tokenizer, since parsed systems keep no lines. */
static int key_line(const rd_session *s, const char *key)
{
    int found = s->sys->line;
    size_t len;
    char why[128];
    char *text = text_read_file_len(s->config_path, 1u << 20, &len, why, sizeof why);
    if (!text)
        return found;
    static const ini_format fmt = {INI_SECTIONS | INI_COMMENTS, NULL};
    rd_diags quiet = {0};       /* the first parse reported everything already */
    ini_reader r;
    ini_open(&r, s->config_path, text, len, &fmt, &quiet);
    ini_line l;
    bool in_sys = false;
    while (ini_next(&r, &l)) {
        if (l.kind == INI_SECTION) {
            size_t n = l.value ? strlen(l.value) : 0;
            in_sys = l.name && strcmp(l.name, "system") == 0 && n >= 2 &&
                     strlen(s->sys->name) == n - 2 && strncmp(l.value + 1, s->sys->name, n - 2) == 0;
        } else if (in_sys && l.kind == INI_PAIR && strcmp(l.name, key) == 0) {
            found = l.line;
        }
    }
    ini_close(&r);
    diags_free(&quiet);
    free(text);
    return found;
}

static void config_problem(rd_session *s, const char *key, const char *lead, const char *why)
{
    char *msg = xasprintf("%s%s", lead, why);
    /* a multi-line library message is one diagnostic line */
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    size_t n = strlen(msg);
    while (n && msg[n - 1] == ' ')
        msg[--n] = 0;
    diags_add(&s->diags, s->config_path, key_line(s, key), "system \"%s\": %s: %s",
              s->sys->name, key, msg);
    free(msg);
}

/* env: and file: references resolve now (the file checks included: regular, ours, not
 * group/world readable); cmd: runs later, on the loop, with a deadline. */
static bool check_secret(rd_session *s, const char *key, const char *ref)
{
    if (!ref || !*ref)
        return true;
    bool is_cmd = false;
    const char *cmd = NULL;
    char why[256] = "";
    char *v = secret_resolve_now(ref, &is_cmd, &cmd, why, sizeof why);
    secret_free(v);
    if (v || is_cmd)
        return true;
    config_problem(s, key, "", why);
    return false;
}

/* A TLS client key is a secret: the owner/mode rule of file: secrets (core/fsperm.h). */
static bool check_key(rd_session *s, const char *key, const char *path)
{
    char why[400];
    if (!path || !*path || fsperm_check_file(path, "client key", FSP_REGULAR | FSP_PRIVATE, why,
                                             sizeof why))
        return true;
    config_problem(s, key, "", why);
    return false;
}

static bool check_store(rd_session *s)
{
    const char *store = s->sys->store.url;
    if (!store || !*store)
        return true;
    if (secret_is_ref(store))      /* what it names is checked when it is resolved */
        return check_secret(s, "store", store);
    char why[256] = "";
    if (s->prof.store && strcmp(s->prof.store, "redis") == 0) {
        if (sources_check_url(s->prof.store, store, why, sizeof why))   /* one URL or several */
            return true;
        config_problem(s, "store", "", why);
        return false;
    }
    char *err = NULL;
    PQconninfoOption *o = PQconninfoParse(store, &err);
    if (o) {
        PQconninfoFree(o);
        return true;
    }
    config_problem(s, "store", "not a PostgreSQL connection string: ", err ? err : "?");
    PQfreemem(err);
    return false;
}

/* One pass when a system is opened, over the parts asked for: problems that would
 * otherwise show up as a source or an action failing are config errors, file:line. */
static bool session_validate(rd_session *s, unsigned parts)
{
    const rd_system_cfg *c = s->sys;
    bool ok = true;
    if (parts & SESSION_SOURCES) {
        ok &= check_store(s);
        ok &= check_secret(s, "store_password", c->store.password);
        /* no store_key: the key is inside store_cert */
        ok &= check_key(s, c->store.tls.key ? "store_key" : "store_cert",
                        c->store.tls.key ? c->store.tls.key : c->store.tls.cert);
        ok &= check_key(s, "store_sslkey", c->store.ssl.key);
        if (c->broker.url && *c->broker.url)
            ok &= check_secret(s, "broker_password", c->broker.password);
    }
    if (parts & SESSION_ACTOR) {
        const char *auth = c->core.auth ? c->core.auth : "";
        if (strcmp(auth, "bearer") == 0 || strcmp(auth, "api-key") == 0)
            ok &= check_secret(s, "token", c->core.token);
        else if (strcmp(auth, "jwt-login") == 0)
            ok &= check_secret(s, "password", c->core.password);
    }
    return ok;
}

static const rd_profile *profile_now(void *ud)
{
    return session_profile(ud);
}

static void build_actor(rd_session *s, const rd_session_io *io)
{
    rd_actor_env env = {.cfg = s->sys, .prof = &s->prof, .profile_now = profile_now,
                        .profile_ud = s, .local_user = s->user,
                        .read_only = s->opts->read_only};
    s->actor = actor_new(io->base, s->http, &env);
    if (io->on_password)
        actor_set_password_prompt(s->actor, io->on_password, io->password_ud);
    const char *jp = testhook_env("REDRIVE_JOURNAL");             /* tests */
    if (jp && *jp)
        actor_set_journal(s->actor, jp);
    const char *tmo = testhook_env("REDRIVE_ACTION_TIMEOUT_MS");  /* tests */
    if (tmo && atol(tmo) > 0)
        actor_set_timeout_ms(s->actor, atol(tmo));
}

/* ---- the core's state ---------------------------------------------------------------- */

static void on_core_answer(const rd_whoami *w, void *ud)
{
    rd_session *s = ud;
    rd_core_state st = w->ok ? RD_CORE_OK : w->unreachable ? RD_CORE_DOWN : RD_CORE_ERROR;
    if (w->anonymous && (w->http_status == 401 || w->http_status == 403))
        st = RD_CORE_OK;             /* up; who we are is known after the login */
    model_core_probe(s->model, st, w->anonymous ? NULL : w->identity, w->why, clock_wall());
    if (s->on_change)
        s->on_change(s->change_ud);
}

void session_core_probe(rd_session *s)
{
    if (s->core_tick)
        actor_probe(s->actor, on_core_answer, s);
}

bool session_core_settled(const rd_session *s)
{
    return s->model->core.state != RD_CORE_CHECKING;
}

static void on_core_tick(int fd, short what, void *arg)
{
    (void)fd; (void)what;
    session_core_probe(arg);
}

rd_session_status session_open(rd_session *s, const char *name, const rd_session_io *io)
{
    assert(!s->sys && "session_close() first");
    s->sys = config_find(&s->cfg, name);
    if (!s->sys) {
        if (s->config_missing)
            diags_add(&s->diags, s->config_path, 0, "no configuration file");
        else if (name) {
            char hint[200];
            diags_add(&s->diags, s->config_path, 0, "no system named '%s'%s", name,
                      config_suggest_system(&s->cfg, name, hint, sizeof hint));
        }
        else
            diags_add(&s->diags, s->config_path, 0, "no system configured");
        return SESSION_NO_SYSTEM;
    }
    unsigned parts = io ? io->parts & ~(unsigned)SESSION_HISTORY : 0;
    bool valid = true;
    if (io && (io->parts & SESSION_HISTORY)) {
        char why[400];
        s->hist = syshist_open(s->sys->name, parts ? io->base : NULL, s->model, s->sys, why,
                               sizeof why);
        if (why[0])
            diags_add(&s->diags, s->config_path, s->sys->line, "system \"%s\": history: %s",
                      s->sys->name, why);
    }
    if (parts) {
        assert(io->base);
        if (!profile_load(s->sys->profile, &s->prof, &s->diags)) {
            profile_free(&s->prof);
            return SESSION_NO_PROFILE;
        }
        s->have_prof = true;
        valid = session_validate(s, parts);
        s->http = http_new(io->base);
        if (parts & SESSION_SOURCES) {
            s->src = sources_new(io->base, s->http, s->sys, &s->prof, s->model, io->on_change,
                                 io->change_ud);
            sources_set_read_only(s->src, s->opts->read_only || s->sys->read_only);
        }
        if (parts & (SESSION_ACTOR | SESSION_PROBE))
            build_actor(s, io);
        if ((parts & SESSION_PROBE) && s->actor && s->sys->core.url && *s->sys->core.url &&
            s->sys->core.probe_s > 0) {
            s->core_tick = loop_every_new(io->base, on_core_tick, s);
            s->on_change = io->on_change;
            s->change_ud = io->change_ud;
            model_core_probe(s->model, RD_CORE_CHECKING, NULL, NULL, clock_wall());
        }
    }
    return s->config_errors || !valid ? SESSION_CONFIG_ERRORS : SESSION_OK;
}

void session_start(rd_session *s)
{
    if (s->hist)
        syshist_start(s->hist);
    if (s->src)
        sources_start(s->src);
    if (s->core_tick) {
        loop_timer_in(s->core_tick, s->sys->core.probe_s);
        session_core_probe(s);
    }
}

void session_close(rd_session *s)
{
    syshist_free(s->hist);        /* saved while the model it samples is still here */
    s->hist = NULL;
    sources_free(s->src);
    s->src = NULL;
    if (s->core_tick)
        loop_event_free(s->core_tick);
    s->core_tick = NULL;
    s->on_change = NULL;
    actor_free(s->actor);         /* cancels a probe in flight: no callback */
    s->actor = NULL;
    http_free(s->http);
    s->http = NULL;
    if (s->have_prof)
        profile_free(&s->prof);
    s->have_prof = false;
    model_free(s->model);
    s->model = model_new();
    s->sys = NULL;
}

rd_system_cfg *session_system(const rd_session *s) { return s->sys; }
rd_model *session_model(const rd_session *s) { return s->model; }
rd_sources *session_sources(const rd_session *s) { return s->src; }
rd_actor *session_actor(const rd_session *s) { return s->actor; }
const rd_history *session_history(const rd_session *s) { return s->hist ? syshist_get(s->hist) : NULL; }
rd_diags *session_diags(rd_session *s) { return &s->diags; }
const char *session_config_path(const rd_session *s) { return s->config_path; }
const char *session_operator(const rd_session *s) { return s->user; }

const rd_profile *session_profile(const rd_session *s)
{
    if (s->src)
        return sources_profile(s->src);
    return s->have_prof ? &s->prof : NULL;
}

char *session_journal_path(void)
{
    const char *jp = testhook_env("REDRIVE_JOURNAL");
    return jp && *jp ? xstrdup(jp) : journal_default_path();
}

int session_exit_code(rd_session_status st)
{
    return st == SESSION_OK ? RD_EXIT_OK : RD_EXIT_USAGE;
}

void session_print_diags(const rd_session *s, size_t from, FILE *out)
{
    for (size_t i = from; i < s->diags.n; i++) {
        char *clean = sanitize_str(s->diags.msgs[i], 0);
        fprintf(out, "%s\n", clean);
        free(clean);
    }
}
