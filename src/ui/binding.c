/* The binding of the console to a system, the fleet or one session: what is open, what
 * is on screen, and the switching between systems. */
#include "binding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/model_json.h"
#include "../io/clock.h"
#include "../core/sanitize.h"
#include "../core/testhook.h"
#include "../core/textutil.h"
#include "../core/xalloc.h"
#include "app_priv.h"
#include "dialog.h"
#include "password.h"
#include "ui_term.h"

struct ui_binding {
    rd_session *session;       /* the config and the open system (owned) */
    /* more than one system configured: every system in its own session (owned); the
     * open system is fleet[fleet_cur] and session opens none */
    rd_sessions *fleet;
    int fleet_cur;
    rd_fleet_row *fleet_rows;  /* for the fleet view, refreshed before each paint */
    const rd_history **fleet_hist;   /* each row's system's last hour (NULL: none) */
    size_t *fleet_idx;
    /* borrowed from the session on screen, refreshed by binding_bind() */
    rd_system_cfg *sys;        /* current system, NULL when none */
    rd_model *model;
    rd_sources *src;
    rd_actor *actor;
    ui_lastknown *cache;       /* the last-known snapshot of the system on screen */
};

ui_binding *binding_new(const rd_opts *opts)
{
    ui_binding *b = xcalloc(1, sizeof *b);
    b->session = session_new(opts);
    b->cache = lastknown_new();
    return b;
}

void binding_free(ui_binding *b)
{
    if (!b)
        return;
    sessions_free(b->fleet);
    free(b->fleet_rows);
    free(b->fleet_hist);
    free(b->fleet_idx);
    lastknown_free(b->cache);
    session_free(b->session);
    free(b);
}

rd_session *binding_session(const ui_binding *b) { return b->session; }
rd_sessions *binding_fleet(const ui_binding *b) { return b->fleet; }
rd_system_cfg *binding_sys(const ui_binding *b) { return b->sys; }
rd_model *binding_model(const ui_binding *b) { return b->model; }
rd_sources *binding_sources(const ui_binding *b) { return b->src; }
rd_actor *binding_actor(const ui_binding *b) { return b->actor; }
ui_lastknown *binding_cache(const ui_binding *b) { return b->cache; }

rd_session *binding_live(const ui_binding *b)
{
    return b->fleet ? sessions_at(b->fleet, (size_t)b->fleet_cur) : b->session;
}

double binding_exec_timeout(const ui_binding *b)
{
    if (b->sys && b->sys->execution_timeout_s > 0)
        return b->sys->execution_timeout_s;
    const rd_profile *p = session_profile(b->session);   /* the era in use: asked each time */
    const char *pt = p ? profile_get(p, "execution_timeout") : NULL;
    double t = 0;
    return pt && parse_duration(pt, &t) && t > 0 ? t : 0;
}

const rd_fleet_row *binding_fleet_rows(ui_binding *b, double now, size_t *n)
{
    *n = 0;
    if (!b->fleet)
        return NULL;
    *n = sessions_count(b->fleet);
    if (!b->fleet_rows) {
        b->fleet_rows = xcalloc(*n ? *n : 1, sizeof *b->fleet_rows);
        b->fleet_hist = xcalloc(*n ? *n : 1, sizeof *b->fleet_hist);
        b->fleet_idx = xcalloc(*n ? *n : 1, sizeof *b->fleet_idx);
    }
    sessions_rows(b->fleet, now, b->fleet_rows, b->fleet_idx);
    for (size_t i = 0; i < *n; i++)
        b->fleet_hist[i] = session_history(sessions_at(b->fleet, b->fleet_idx[i]));
    return b->fleet_rows;
}

const rd_history *const *binding_fleet_hist(const ui_binding *b)
{
    return b->fleet_hist;
}

/* The lists a view shows (its ops' panels) as the sources' RD_PANEL_* bits; -1 for one
 * that shows none of the system's lists (help, journal): they stay as they were, for the
 * view the operator goes back to. The workers view's drain notes read the executions
 * last loaded. */
static int view_panels(ui_view_id v)
{
    switch (view_ops(v)->panels) {
    case PANELS_EXECS: return RD_PANEL_EXECS;
    case PANELS_WORKERS: return RD_PANEL_WORKERS;
    case PANELS_NONE: return 0;
    case PANELS_KEEP: return -1;
    case PANELS_ALL: default: return RD_PANEL_ALL;
    }
}

/* The open system's sources poll only the lists on screen; the fleet's other systems
 * (their rows read every list) keep all of them. */
static void binding_interest(ui_binding *b, ui_view_id cur)
{
    int p = view_panels(cur);
    if (p < 0)
        return;
    if (b->fleet) {
        for (size_t i = 0; i < sessions_count(b->fleet); i++) {
            bool open = cur != VIEW_FLEET && (int)i == b->fleet_cur;
            session_set_interest(sessions_at(b->fleet, i), open ? (unsigned)p : RD_PANEL_ALL);
        }
    } else if (b->src) {
        session_set_interest(b->session, (unsigned)p);
    }
}

/* With the fleet view on screen every system polls at its own rate; otherwise only the
 * open one does and the others are slowed. */
void binding_focus(ui_binding *b, ui_view_id cur)
{
    if (b->fleet)
        sessions_focus(b->fleet, cur == VIEW_FLEET ? -1 : b->fleet_cur);
    binding_interest(b, cur);
}

/* ---- with the console ---- */

void binding_bind(ui_app *app)
{
    ui_binding *b = app->bind;
    rd_session *live = binding_live(b);
    b->sys = session_system(live);
    b->model = session_model(live);
    b->src = session_sources(live);
    b->actor = session_actor(live);
    app->ctx.model = b->model;
    app->ctx.cfg = b->sys;
    app->ctx.hist = session_history(live);
}

void binding_preview(ui_app *app, const char *name)
{
    app->bind->sys = session_find(app->bind->session, name);
    app->ctx.cfg = app->bind->sys;
}

void binding_source_changed(ui_app *app)
{
    ui_binding *b = app->bind;
    lastknown_update(b->cache, b->sys, b->model, b->src != NULL, &app->ctx);
}

/* The action layer needs a password (jwt-login without a password source). */
static void on_password_prompt(rd_actor *a, const char *prompt, void *ud)
{
    ui_app *app = ud;
    (void)a;
    password_open(app, prompt);
    app_request_paint(app);   /* now, not at the next tick */
}

/* A journal write failed: on the status line while curses owns the terminal, else on
 * stderr (after the terminal is restored: teardown journals requests left in flight). */
static void on_journal_error(const char *why, void *ud)
{
    ui_app *app = ud;
    if (!term_is_open(app->term) || app->headless) {
        char *clean = sanitize_str(why, 0);
        fprintf(stderr, "redrive: journal: %s\n", clean);
        free(clean);
        return;
    }
    ctx_msg(&app->ctx, true, "journal: %s", why);
    app_request_paint(app);
}

void binding_teardown(ui_app *app)
{
    ui_binding *b = app->bind;
    password_close(app);
    if (app->dlg.state != DLG_NONE)
        dialog_close(app);
    lastknown_close(b->cache, b->sys, b->model, &app->ctx);
    if (b->fleet) {
        /* the system stays open in the background: only what this console set on it goes */
        if (b->src && !filter_empty(&app->ctx.filter[VIEW_EXECS]))
            session_set_filter(binding_live(b), &(rd_exec_filter){0});
        return;
    }
    session_close(b->session);
    binding_bind(app);
}

void binding_stop(ui_app *app)
{
    binding_teardown(app);   /* journals requests left in flight as "unknown" */
    sessions_free(app->bind->fleet);   /* the sources before their loop */
    app->bind->fleet = NULL;
    binding_bind(app);
}

static void on_fleet_change(void *ud, size_t i)
{
    ui_app *app = ud;
    if ((int)i == app->bind->fleet_cur)
        binding_source_changed(app);   /* the system on screen: its last-known snapshot */
    if (app->cur == VIEW_FLEET || (int)i == app->bind->fleet_cur)
        app_request_paint(app);
}

/* Tests: the fleet's systems drawing fixed models, REDRIVE_HEADLESS_FLEET/NAME.json each. */
static void binding_fleet_models(ui_binding *b, const char *dir)
{
    for (size_t i = 0; i < sessions_count(b->fleet); i++) {
        rd_session *s = sessions_at(b->fleet, i);
        char *path = xasprintf("%s/%s.json", dir, session_system(s)->name);
        char why[160], err[256];
        char *json = text_read_file(path, 64u << 20, why, sizeof why);
        if (json && !model_from_json(session_model(s), json, clock_wall(), err, sizeof err))
            fprintf(stderr, "redrive: %s: %s\n", path, err);
        free(json);
        free(path);
    }
}

/* More than one system configured: each gets its own session, started at once; the
 * console opens on the fleet view unless --system chose one (then q quits from its
 * overview as with one system). */
void binding_start_fleet(ui_app *app, bool live)
{
    ui_binding *b = app->bind;
    const char *models = testhook_env("REDRIVE_HEADLESS_FLEET");
    bool fixed = app->headless && models && *models;
    if (app->model_only || (!live && !fixed) || session_system_count(b->session) < 2)
        return;
    rd_sessions_io io = {.base = app->base,
                         .parts = SESSION_HISTORY | (live ? SESSION_SOURCES | SESSION_ACTOR | SESSION_PROBE : 0),
                         .on_change = on_fleet_change, .change_ud = app,
                         .on_password = on_password_prompt, .password_ud = app};
    b->fleet = sessions_new(app->opts, &io);
    sessions_copy_diags(b->fleet, session_diags(b->session));
    if (fixed)
        binding_fleet_models(b, models);
    if (live)
        sessions_start(b->fleet);
    if (!app->opts->system)   /* else the chosen system; the fleet is a key away */
        app->cur = VIEW_FLEET;
}

/* Log in early, except when that means asking for a password: the operator who only
 * looks is not interrupted; the prompt comes with the first action. */
static void binding_prepare(ui_app *app)
{
    const rd_system_cfg *s = app->bind->sys;
    bool would_prompt = s->core.auth && strcmp(s->core.auth, "jwt-login") == 0 && !s->core.password;
    if (app->bind->actor && !app->ctx.read_only && !would_prompt)
        actor_prepare(app->bind->actor, NULL, NULL);
}

/* Opens the system `name` (NULL = the first): the whole system in the live console, only
 * the choice of system over a fixed model (headless tests, REDRIVE_HEADLESS_MODEL). */
void binding_start_system(ui_app *app, const char *name)
{
    ui_binding *b = app->bind;
    rd_session *ss = b->session;
    bool live = !app->headless && !app->model_only;
    if (b->fleet) {
        int i = sessions_find(b->fleet, name);
        b->fleet_cur = i < 0 ? 0 : i;
        ss = sessions_at(b->fleet, (size_t)b->fleet_cur);
        binding_focus(b, app->cur);
    }
    rd_session_io io = {.base = app->base,
                        .parts = SESSION_HISTORY | (live ? SESSION_SOURCES | SESSION_ACTOR | SESSION_PROBE : 0),
                        .on_change = app_source_changed, .change_ud = app,
                        .on_password = on_password_prompt, .password_ud = app};
    size_t before = session_diags(ss)->n;
    if (live && lastknown_open(b->cache, b->session, binding_live(b), name, &app->ctx) &&
        term_is_open(app->term)) {
        binding_preview(app, name);
        app_paint(app);   /* the last-known data before any connection or secret work */
    }
    rd_session_status st = SESSION_NO_SYSTEM;
    if (b->fleet)   /* opened (and started) with the fleet */
        st = SESSION_OK;
    else if (name || session_has_systems(ss))   /* no config at all: the console still starts */
        st = session_open(ss, name, &io);
    binding_bind(app);
    binding_interest(b, app->cur);
    app_retries(app);   /* loop retries are per system */
    if (b->actor)
        actor_set_journal_errors(b->actor, on_journal_error, app);
    app->ctx.read_only = app->opts->read_only || (b->sys && b->sys->read_only);
    if (st == SESSION_NO_PROFILE)
        app_diag_msg(app, session_diags(ss), before);
    if (!b->src && !b->actor)
        return;
    if (!b->fleet)
        session_start(ss);
    binding_prepare(app);
}

bool binding_switch(ui_app *app, const char *name)
{
    ui_binding *b = app->bind;
    rd_system_cfg *s = session_find(b->session, name);
    if (!s || !name) {
        char hint[200];
        ctx_msg(&app->ctx, true, "no system named '%s'%s in %s", name,
                session_suggest_system(b->session, name ? name : "", hint, sizeof hint),
                session_has_systems(b->session) ? session_config_path(b->session) : "the config");
        return false;
    }
    if (dialog_in_background(app, "switching systems"))
        return false;
    binding_teardown(app);   /* close one session's system, open the other */
    memset(app->ctx.filter, 0, sizeof app->ctx.filter);   /* every view's */
    if (!app->opts->theme)
        app_load_theme(app, s->ui.theme);
    if (!app->opts->keymap)
        app_load_keymap(app, s->ui.keymap);
    for (int i = 0; i < VIEW__COUNT; i++) {
        if (app->views[i].ops->free)
            app->views[i].ops->free(&app->views[i]);
        memset(&app->views[i].list, 0, sizeof app->views[i].list);
    }
    binding_start_system(app, name);
    app->n_hist = 0;
    if (b->fleet)   /* back (q) goes to the fleet */
        app->hist[app->n_hist++] = VIEW_FLEET;
    app->cur = VIEW_OVERVIEW;
    binding_focus(b, app->cur);
    app->full_redraw = true;
    return true;
}
