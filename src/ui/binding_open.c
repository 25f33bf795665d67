/* Opening, switching and closing systems with the console around them (binding.h): the
 * fleet's sessions and the one on screen started, the last-known snapshot painted before
 * any connection, the views, dialogs and prompts of a system closed with it. Above
 * binding.c (what is open), the dialogs and the paint; below command mode. */
#include "binding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/model_json.h"
#include "../core/sanitize.h"
#include "../core/testhook.h"
#include "../core/textutil.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "app_priv.h"
#include "batches.h"
#include "dialog.h"
#include "paint.h"
#include "password.h"
#include "ui_term.h"

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
    lastknown_close(binding_cache(b), binding_sys(b), binding_model(b), &app->ctx);
    if (binding_fleet(b)) {
        /* the system stays open in the background: only what this console set on it goes */
        if (binding_sources(b) && !filter_empty(&app->ctx.filter[VIEW_EXECS]))
            session_set_filter(binding_live(b), &(rd_exec_filter){0});
        return;
    }
    if (binding_sys(b))       /* its actor goes: a batch it sends stops (resumable) */
        batches_drop_system(app, binding_sys(b)->name);
    session_close(binding_session(b));
    binding_bind(app);
}

void binding_stop(ui_app *app)
{
    batches_stop(app);       /* its runs before their actors: in flight journaled unknown */
    binding_teardown(app);   /* journals requests left in flight as "unknown" */
    binding_set_fleet(app->bind, NULL);   /* the sources before their loop */
    binding_bind(app);
}

static void on_fleet_change(void *ud, size_t i)
{
    ui_app *app = ud;
    if (binding_is_current(app->bind, i))
        binding_source_changed(app);   /* the system on screen: its last-known snapshot */
    if (app->cur == VIEW_FLEET || binding_is_current(app->bind, i))
        app_request_paint(app);
}

/* Tests: the fleet's systems drawing fixed models, REDRIVE_HEADLESS_FLEET/NAME.json each. */
static void binding_fleet_models(ui_binding *b, const char *dir)
{
    for (size_t i = 0; i < sessions_count(binding_fleet(b)); i++) {
        rd_session *s = sessions_at(binding_fleet(b), i);
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
    if (app->model_only || (!live && !fixed) || session_system_count(binding_session(b)) < 2)
        return;
    rd_sessions_io io = {.base = app->base,
                         .parts = SESSION_HISTORY | (live ? SESSION_SOURCES | SESSION_ACTOR | SESSION_PROBE : 0),
                         .on_change = on_fleet_change, .change_ud = app,
                         .on_password = on_password_prompt, .password_ud = app, .hold_places = true};
    binding_set_fleet(b, sessions_new(app->opts, &io));
    sessions_copy_diags(binding_fleet(b), session_diags(binding_session(b)));
    if (fixed)
        binding_fleet_models(b, models);
    if (live)
        sessions_start(binding_fleet(b));
    if (!app->opts->system)   /* else the chosen system; the fleet is a key away */
        app->cur = VIEW_FLEET;
}

/* Log in early, except when that means asking for a password: the operator who only
 * looks is not interrupted; the prompt comes with the first action. */
static void binding_prepare(ui_app *app)
{
    const rd_system_cfg *s = binding_sys(app->bind);
    rd_actor *actor = binding_actor(app->bind);
    bool would_prompt = s->core.auth && strcmp(s->core.auth, "jwt-login") == 0 && !s->core.password;
    if (actor && !app->ctx.read_only && !would_prompt)
        actor_prepare(actor, NULL, NULL);
}

/* Opens the system `name` (NULL = the first): the whole system in the live console, only
 * the choice of system over a fixed model (headless tests, REDRIVE_HEADLESS_MODEL). */
void binding_start_system(ui_app *app, const char *name)
{
    ui_binding *b = app->bind;
    rd_session *top = binding_session(b), *ss = top;
    bool live = !app->headless && !app->model_only;
    if (binding_fleet(b)) {
        ss = binding_choose(b, name);
        binding_focus(b, app->cur);
    }
    rd_session_io io = {.base = app->base,
                        .parts = SESSION_HISTORY | (live ? SESSION_SOURCES | SESSION_ACTOR | SESSION_PROBE : 0),
                        .on_change = app_source_changed, .change_ud = app,
                        .on_password = on_password_prompt, .password_ud = app};
    size_t before = session_diags(ss)->n;
    if (live && lastknown_open(binding_cache(b), top, binding_live(b), name, &app->ctx) &&
        term_is_open(app->term)) {
        binding_preview(app, name);
        app_paint(app);   /* the last-known data before any connection or secret work */
    }
    rd_session_status st = SESSION_NO_SYSTEM;
    if (binding_fleet(b))   /* opened (and started) with the fleet */
        st = SESSION_OK;
    else if (name || session_has_systems(ss))   /* no config at all: the console still starts */
        st = session_open(ss, name, &io);
    binding_bind(app);
    binding_interest(b, app->cur);
    app_retries(app);   /* loop retries are per system */
    rd_actor *actor = binding_actor(b);
    const rd_system_cfg *sys = binding_sys(b);
    if (actor)
        actor_set_journal_errors(actor, on_journal_error, app);
    app->ctx.read_only = app->opts->read_only || (sys && sys->read_only);
    if (st == SESSION_NO_PROFILE)
        app_diag_msg(app, session_diags(ss), before);
    if (!binding_sources(b) && !actor)
        return;
    if (!binding_fleet(b))
        session_start(ss);
    binding_prepare(app);
}

bool binding_switch(ui_app *app, const char *name)
{
    ui_binding *b = app->bind;
    rd_session *top = binding_session(b);
    rd_system_cfg *s = session_find(top, name);
    if (!s || !name) {
        char hint[200];
        ctx_msg(&app->ctx, true, "no system named '%s'%s in %s", name,
                session_suggest_system(top, name ? name : "", hint, sizeof hint),
                session_has_systems(top) ? session_config_path(top) : "the config");
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
    if (binding_fleet(b))   /* back (q) goes to the fleet */
        app->hist[app->n_hist++] = VIEW_FLEET;
    app->cur = VIEW_OVERVIEW;
    binding_focus(b, app->cur);
    app->full_redraw = true;
    return true;
}
