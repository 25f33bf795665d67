/* The console: set-up, the libevent loop, effects from views, command mode. */
#include "app.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../io/clock.h"
#include "../io/loop.h"
#include "../core/model_json.h"
#include "../core/sanitize.h"
#include "../core/textutil.h"
#include "../core/xalloc.h"
#include "cmd.h"

static const ui_view_ops *const view_table[VIEW__COUNT] = {
    [VIEW_OVERVIEW] = &view_overview_ops, [VIEW_EXECS] = &view_execs_ops,
    [VIEW_CHAIN] = &view_chain_ops,       [VIEW_WORKERS] = &view_workers_ops,
    [VIEW_QUEUES] = &view_queues_ops,     [VIEW_DLQ] = &view_dlq_ops,
    [VIEW_JOURNAL] = &view_journal_ops,   [VIEW_HELP] = &view_help_ops,
    [VIEW_FLEET] = &view_fleet_ops,
    [VIEW_GROUPS] = &view_groups_ops,
    [VIEW_DRAIN] = &view_drain_ops,
};

enum { JOURNAL_TAIL = 500 };

double app_now(const ui_app *app)
{
    if (app->fixed_now > 0)
        return app->fixed_now;
    return clock_wall();
}

/* The lists a view shows (sources.h, RD_PANEL_*); -1 for one that shows none of the
 * system's lists (help, journal): they stay as they were, for the view the operator goes
 * back to. The workers view's drain notes read the executions last loaded. */
static int view_panels(ui_view_id v)
{
    switch (v) {
    case VIEW_OVERVIEW: case VIEW_WORKERS: return RD_PANEL_WORKERS;
    case VIEW_EXECS: case VIEW_CHAIN: case VIEW_GROUPS: return RD_PANEL_EXECS;
    case VIEW_QUEUES: case VIEW_DLQ: return 0;
    case VIEW_HELP: case VIEW_JOURNAL: return -1;
    default: return RD_PANEL_ALL;   /* the fleet, the drain cockpit */
    }
}

/* The open system's sources poll only the lists on screen; the fleet's other systems
 * (their rows read every list) keep all of them. */
static void app_interest(ui_app *app)
{
    int p = view_panels(app->cur);
    if (p < 0)
        return;
    if (app->fleet) {
        for (size_t i = 0; i < sessions_count(app->fleet); i++) {
            rd_sources *src = session_sources(sessions_at(app->fleet, i));
            bool open = app->cur != VIEW_FLEET && (int)i == app->fleet_cur;
            if (src)
                sources_set_interest(src, open ? (unsigned)p : RD_PANEL_ALL);
        }
    } else if (app->src) {
        sources_set_interest(app->src, (unsigned)p);
    }
}

/* With the fleet view on screen every system polls at its own rate; otherwise only the
 * open one does and the others are slowed. */
static void app_fleet_focus(ui_app *app)
{
    if (app->fleet)
        sessions_focus(app->fleet, app->cur == VIEW_FLEET ? -1 : app->fleet_cur);
    app_interest(app);
}

void app_fleet_rows(ui_app *app)
{
    if (!app->fleet)
        return;
    size_t n = sessions_count(app->fleet);
    if (!app->fleet_rows)
        app->fleet_rows = xcalloc(n ? n : 1, sizeof *app->fleet_rows);
    sessions_rows(app->fleet, app_now(app), app->fleet_rows, NULL);
    app->ctx.fleet = app->fleet_rows;
    app->ctx.n_fleet = n;
}

void app_open_view(ui_app *app, ui_view_id id, const char *arg, bool push)
{
    if (id == VIEW_FLEET && app->fleet)   /* the top view: q from there quits */
        push = false, app->n_hist = 0;
    if (push && id != app->cur) {
        if (app->n_hist == HIST_MAX) {
            memmove(app->hist, app->hist + 1, (HIST_MAX - 1) * sizeof *app->hist);
            app->n_hist--;
        }
        app->hist[app->n_hist++] = app->cur;
    }
    app->cur = id;
    app_fleet_focus(app);
    if (id == VIEW_FLEET)
        app_fleet_rows(app);
    ui_view *v = &app->views[id];
    if (v->ops->open)
        v->ops->open(v, &app->ctx, arg);
}

void app_back(ui_app *app)
{
    if (app->n_hist)
        app->cur = app->hist[--app->n_hist];
    app_fleet_focus(app);
}

/* The retry-loop breaker's memory: this system's manual retries the core accepted. */
static void app_retries(ui_app *app)
{
    free(app->retries);
    app->retries = journal_retries(app->journal, app->n_journal, app->sys ? app->sys->name : NULL,
                                   &app->n_retries);
    app->ctx.retries = app->retries;
    app->ctx.n_retries = app->n_retries;
}

static void app_read_journal(ui_app *app)
{
    journal_entries_free(app->journal, app->n_journal);
    app->journal = NULL;
    app->n_journal = 0;
    app->journal_err[0] = 0;
    char *path = session_journal_path();
    if (!path)
        snprintf(app->journal_err, sizeof app->journal_err, "neither XDG_STATE_HOME nor HOME is set");
    else if (!journal_read_tail(path, JOURNAL_TAIL, &app->journal, &app->n_journal, app->journal_err,
                                sizeof app->journal_err) && !app->journal_err[0])
        snprintf(app->journal_err, sizeof app->journal_err, "unreadable");
    free(path);
    app->ctx.journal = app->journal;
    app->ctx.n_journal = app->n_journal;
    app->ctx.journal_error = app->journal_err[0] ? app->journal_err : NULL;
    app_retries(app);
}

void app_journal_reload(ui_app *app)
{
    app_read_journal(app);
}

static void app_filter(ui_app *app)
{
    if (!app->src)
        return;
    ui_filter *f = &app->ctx.filter[VIEW_EXECS];
    rd_exec_filter ef = {f->status[0] ? f->status : NULL, f->text[0] ? f->text : NULL, f->fp[0] ? f->fp : NULL,
                         f->worker[0] ? f->worker : NULL};
    sources_set_filter(app->src, &ef);
}

static void app_effect(ui_app *app, const ui_effect *e)
{
    switch (e->kind) {
    case FX_VIEW: app_open_view(app, (ui_view_id)e->arg, e->text, true); break;
    case FX_CHAIN: if (app->src) sources_request_chain(app->src, e->text); break;
    case FX_WORKER: if (app->src) sources_request_worker(app->src, e->text); break;
    case FX_PAGE: if (app->src) sources_page(app->src, e->arg); break;
    case FX_JUMP:
        app->views[VIEW_EXECS].list.cur = app->views[VIEW_EXECS].list.top = 0;
        list_unpin(&app->views[VIEW_EXECS].list);
        if (app->src)
            sources_jump(app->src, e->text);
        if (app->cur != VIEW_EXECS)
            app_open_view(app, VIEW_EXECS, e->text, true);
        break;
    case FX_FILTER:
        if (e->arg == VIEW_EXECS) {   /* a new page from the top: nothing to follow */
            list_unpin(&app->views[VIEW_EXECS].list);
            app_filter(app);   /* the one filter the sources search with */
        } else if (e->arg >= 0 && e->arg < VIEW__COUNT) {
            app->views[e->arg].list.cur = 0;   /* the followed row, when it is still shown */
        }
        break;
    case FX_PEEK: if (app->src) sources_peek_dlq(app->src, e->arg != 0); break;
    case FX_REFRESH:
        for (size_t i = 0; e->arg < 0 && app->fleet && i < sessions_count(app->fleet); i++)
            if (session_sources(sessions_at(app->fleet, i)))
                sources_refresh(session_sources(sessions_at(app->fleet, i)));
        if (app->src && !(e->arg < 0 && app->fleet))
            sources_refresh(app->src);
        break;
    case FX_SYSTEM: app_switch_system(app, e->text); break;
    case FX_ACT:
        if (strcmp(e->text, "now") == 0)
            dialog_start_now(app, (rd_action)e->arg);
        else
            dialog_start(app, (rd_action)e->arg);
        break;
    case FX_COPY: clip_copy(app); break;
    case FX_PROMPT:
        memset(&app->prompt, 0, sizeof app->prompt);
        app->prompt.active = true;
        app->prompt.kind = e->arg;
        app->prompt.hist_at = -1;
        break;
    case FX_JOURNAL: app_read_journal(app); break;
    }
}

void app_effects(ui_app *app)
{
    /* effects may queue more effects (open → chain request): drain in rounds */
    for (int round = 0; round < 4 && app->ctx.n_fx; round++) {
        ui_effect fx[4];
        int n = app->ctx.n_fx;
        memcpy(fx, app->ctx.fx, (size_t)n * sizeof *fx);
        app->ctx.n_fx = 0;
        for (int i = 0; i < n; i++)
            app_effect(app, &fx[i]);
    }
    app->ctx.n_fx = 0;
    app->dirty = true;
}

static void app_diag_msg(ui_app *app, rd_diags *d, size_t from)
{
    if (d->n > from)
        ctx_msg(&app->ctx, true, "%s%s", d->msgs[from], d->n - from > 1 ? " (more in the overview)" : "");
}

/* t replaces the theme on screen (owned from now on). */
static void app_use_theme(ui_app *app, ui_theme *t)
{
    theme_free(app->theme);
    app->theme = t;
    app->ctx.theme = t;
    if (app->screen)
        theme_apply(t, app->colour);
    app->full_redraw = true;
}

void app_load_theme(ui_app *app, const char *name)
{
    rd_diags *d = session_diags(app->session);
    size_t before = d->n;
    ui_theme *t = theme_new();
    if (name && *name && strcmp(name, "built-in") != 0)
        theme_load(t, name, d);
    app_use_theme(app, t);
    app_diag_msg(app, d, before);
}

/* `:theme NAME`: a name that does not load is the command's error (on the status line,
 * the theme on screen kept), not a problem of the configuration files. */
static void app_theme_command(ui_app *app, const char *name)
{
    if (!name || !*name || strcmp(name, "built-in") == 0) {
        app_load_theme(app, name);
        return;
    }
    rd_diags d = {0};
    ui_theme *t = theme_new();
    if (!theme_load(t, name, &d) || d.n) {
        ctx_msg(&app->ctx, true, ":theme %s: %s%s", name, d.n ? d.msgs[0] : "not loaded",
                d.n > 1 ? " (and more)" : "");
        theme_free(t);
        diags_free(&d);
        return;
    }
    diags_free(&d);
    app_use_theme(app, t);
}

void app_load_keymap(ui_app *app, const char *name)
{
    rd_diags *d = session_diags(app->session);
    size_t before = d->n;
    ui_keymap *k = keymap_new();
    if (name && *name && strcmp(name, "built-in") != 0)
        keymap_load(k, name, d);
    keymap_free(app->km);
    app->km = k;
    app->ctx.km = k;
    app_diag_msg(app, d, before);
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
    if (!app->screen || app->headless) {
        char *clean = sanitize_str(why, 0);
        fprintf(stderr, "redrive: journal: %s\n", clean);
        free(clean);
        return;
    }
    ctx_msg(&app->ctx, true, "journal: %s", why);
    app_request_paint(app);
}

/* The session's parts, borrowed: refreshed whenever it opens or closes a system. */
rd_session *app_live(const ui_app *app)
{
    return app->fleet ? sessions_at(app->fleet, (size_t)app->fleet_cur) : app->session;
}

static void app_bind(ui_app *app)
{
    rd_session *live = app_live(app);
    app->sys = session_system(live);
    app->model = session_model(live);
    app->src = session_sources(live);
    app->actor = session_actor(live);
    app->ctx.model = app->model;
    app->ctx.cfg = app->sys;
}

double app_exec_timeout(const ui_app *app)
{
    if (app->sys && app->sys->execution_timeout_s > 0)
        return app->sys->execution_timeout_s;
    const rd_profile *p = session_profile(app->session);   /* the era in use: asked each time */
    const char *pt = p ? profile_get(p, "execution_timeout") : NULL;
    double t = 0;
    return pt && parse_duration(pt, &t) && t > 0 ? t : 0;
}

static void app_teardown_system(ui_app *app)
{
    password_close(app);
    if (app->dlg.state != DLG_NONE)
        dialog_close(app);
    lastknown_close(app);
    if (app->fleet) {
        /* the system stays open in the background: only what this console set on it goes */
        if (app->src && !filter_empty(&app->ctx.filter[VIEW_EXECS]))
            sources_set_filter(app->src, &(rd_exec_filter){0});
        return;
    }
    session_close(app->session);
    app_bind(app);
}

static void on_fleet_change(void *ud, size_t i)
{
    ui_app *app = ud;
    if ((int)i == app->fleet_cur)
        lastknown_update(app);   /* the system on screen: its last-known snapshot */
    if (app->cur == VIEW_FLEET || (int)i == app->fleet_cur)
        app_request_paint(app);
}

/* Tests: the fleet's systems drawing fixed models, REDRIVE_HEADLESS_FLEET/NAME.json each. */
static void app_fleet_models(ui_app *app, const char *dir)
{
    for (size_t i = 0; i < sessions_count(app->fleet); i++) {
        rd_session *s = sessions_at(app->fleet, i);
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
static void app_start_fleet(ui_app *app, bool live)
{
    const char *models = getenv("REDRIVE_HEADLESS_FLEET");
    bool fixed = app->headless && models && *models;
    if (app->model_only || (!live && !fixed) || session_system_count(app->session) < 2)
        return;
    rd_sessions_io io = {.base = app->base,
                         .parts = live ? SESSION_SOURCES | SESSION_ACTOR | SESSION_PROBE : 0,
                         .on_change = on_fleet_change, .change_ud = app,
                         .on_password = on_password_prompt, .password_ud = app};
    app->fleet = sessions_new(app->opts, &io);
    sessions_copy_diags(app->fleet, session_diags(app->session));
    if (fixed)
        app_fleet_models(app, models);
    if (live)
        sessions_start(app->fleet);
    if (!app->opts->system)   /* else the chosen system; the fleet is a key away */
        app->cur = VIEW_FLEET;
}

/* Opens the system `name` (NULL = the first): the whole system in the live console, only
 * the choice of system over a fixed model (headless tests, REDRIVE_HEADLESS_MODEL). */
static void app_start_system(ui_app *app, const char *name)
{
    rd_session *ss = app->session;
    bool live = !app->headless && !app->model_only;
    if (app->fleet) {
        int i = sessions_find(app->fleet, name);
        app->fleet_cur = i < 0 ? 0 : i;
        ss = sessions_at(app->fleet, (size_t)app->fleet_cur);
        app_fleet_focus(app);
    }
    rd_session_io io = {.base = app->base,
                        .parts = live ? SESSION_SOURCES | SESSION_ACTOR | SESSION_PROBE : 0,
                        .on_change = app_source_changed, .change_ud = app,
                        .on_password = on_password_prompt, .password_ud = app};
    size_t before = session_diags(ss)->n;
    if (live && lastknown_open(app, name) && app->screen) {
        app->sys = session_find(ss, name);   /* the top bar names it before it opens */
        app->ctx.cfg = app->sys;
        app_paint(app);   /* the last-known data before any connection or secret work */
    }
    rd_session_status st = SESSION_NO_SYSTEM;
    if (app->fleet)   /* opened (and started) with the fleet */
        st = SESSION_OK;
    else if (name || session_has_systems(ss))   /* no config at all: the console still starts */
        st = session_open(ss, name, &io);
    app_bind(app);
    app_interest(app);
    app_retries(app);   /* loop retries are per system */
    if (app->actor)
        actor_set_journal_errors(app->actor, on_journal_error, app);
    rd_system_cfg *s = app->sys;
    app->ctx.read_only = app->opts->read_only || (s && s->read_only);
    if (st == SESSION_NO_PROFILE)
        app_diag_msg(app, session_diags(ss), before);
    if (!app->src && !app->actor)
        return;
    if (!app->fleet)
        session_start(ss);
    /* Log in early, except when that means asking for a password: the operator who only
     * looks is not interrupted; the prompt comes with the first action. */
    bool would_prompt = s->auth && strcmp(s->auth, "jwt-login") == 0 && !s->password;
    if (app->actor && !app->ctx.read_only && !would_prompt)
        actor_prepare(app->actor, NULL, NULL);
}

bool app_switch_system(ui_app *app, const char *name)
{
    rd_system_cfg *s = session_find(app->session, name);
    if (!s || !name) {
        ctx_msg(&app->ctx, true, "no system named '%s' in %s", name,
                session_has_systems(app->session) ? session_config_path(app->session) : "the config");
        return false;
    }
    app_teardown_system(app);   /* close one session's system, open the other */
    memset(app->ctx.filter, 0, sizeof app->ctx.filter);   /* every view's */
    if (!app->opts->theme)
        app_load_theme(app, s->theme);
    if (!app->opts->keymap)
        app_load_keymap(app, s->keymap);
    for (int i = 0; i < VIEW__COUNT; i++) {
        if (app->views[i].ops->free)
            app->views[i].ops->free(&app->views[i]);
        memset(&app->views[i].list, 0, sizeof app->views[i].list);
    }
    app_start_system(app, name);
    app->n_hist = 0;
    if (app->fleet)   /* back (q) goes to the fleet */
        app->hist[app->n_hist++] = VIEW_FLEET;
    app->cur = VIEW_OVERVIEW;
    app_fleet_focus(app);
    app->full_redraw = true;
    return true;
}

static void app_command_filter(ui_app *app, char *arg)
{
    ui_filter *f = &app->ctx.filter[VIEW_EXECS];
    memset(f, 0, sizeof *f);
    for (char *save = NULL, *t = strtok_r(arg, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(t, '=');
        if (!eq) {
            ui_copy_text(f->text, sizeof f->text, t);   /* whole characters only */
            continue;
        }
        *eq = 0;
        if (strcmp(t, "status") == 0)
            snprintf(f->status, sizeof f->status, "%s", eq + 1);
        else if (strcmp(t, "text") == 0)
            ui_copy_text(f->text, sizeof f->text, eq + 1);
        else if (strcmp(t, "error") == 0 || strcmp(t, "fp") == 0 || strcmp(t, "fingerprint") == 0)
            snprintf(f->fp, sizeof f->fp, "%s", eq + 1);
        else
            ctx_msg(&app->ctx, true, "unknown filter '%s' (status=, text=, error=)", t);
    }
    ctx_fx(&app->ctx, FX_FILTER, VIEW_EXECS, NULL);
    if (app->cur != VIEW_EXECS)
        ctx_fx(&app->ctx, FX_VIEW, VIEW_EXECS, NULL);
}

void app_command(ui_app *app, const char *line)
{
    char arg[256], err[160];
    ui_cmd_id id = cmd_parse(line, arg, sizeof arg, err, sizeof err);
    static const ui_view_id views[] = {[CMD_OVERVIEW] = VIEW_OVERVIEW, [CMD_EXECS] = VIEW_EXECS,
                                       [CMD_WORKERS] = VIEW_WORKERS,   [CMD_QUEUES] = VIEW_QUEUES,
                                       [CMD_DLQ] = VIEW_DLQ,           [CMD_JOURNAL] = VIEW_JOURNAL,
                                       [CMD_HELP] = VIEW_HELP,         [CMD_FLEET] = VIEW_FLEET,
                                       [CMD_GROUPS] = VIEW_GROUPS};
    switch (id) {
    case CMD_NONE: ctx_msg(&app->ctx, true, "%s", err); break;
    case CMD_OVERVIEW: case CMD_EXECS: case CMD_WORKERS: case CMD_QUEUES: case CMD_DLQ:
    case CMD_JOURNAL: case CMD_HELP: case CMD_FLEET: case CMD_GROUPS:
        app_open_view(app, views[id], NULL, true);
        break;
    case CMD_CHAIN: app_open_view(app, VIEW_CHAIN, arg, true); break;
    case CMD_JUMP: ctx_fx(&app->ctx, FX_JUMP, 0, arg); break;
    case CMD_FILTER: app_command_filter(app, arg); break;
    case CMD_SYSTEM: app_switch_system(app, arg); break;
    case CMD_THEME: app_theme_command(app, arg); break;
    case CMD_KEYMAP: app_load_keymap(app, arg); break;
    case CMD_REFRESH: ctx_fx(&app->ctx, FX_REFRESH, 0, NULL); break;
    case CMD_COCKPIT: app_open_view(app, VIEW_DRAIN, arg, true); break;
    case CMD_EXPORT: case CMD_EXPORT_FORCE: clip_export(app, arg, id == CMD_EXPORT_FORCE); break;
    case CMD_QUIT: app->quit = true; break;
    default: break;
    }
}

/* ---- set-up ---- */

static bool app_headless_model(ui_app *app, const char *file)
{
    char why[160], err[256];
    char *json = text_read_file(file, 64u << 20, why, sizeof why);
    if (!json) {
        fprintf(stderr, "redrive: %s: %s\n", file, why);
        return false;
    }
    bool ok = model_from_json(app->model, json, clock_wall(), err, sizeof err);
    free(json);
    if (!ok)
        fprintf(stderr, "redrive: %s: %s\n", file, err);
    return ok;
}

static void app_init(ui_app *app, const rd_opts *opts)
{
    memset(app, 0, sizeof *app);
    app->opts = opts;
    app->ascii = opts->ascii;
    app->mouse = !opts->no_mouse;
    app->session = session_new(opts);
    app_bind(app);
    app->ctx.san = opts->ascii ? SAN_ASCII : 0;
    app->ctx.diags = session_diags(app->session);
    const char *now = getenv("REDRIVE_NOW");
    if (now && *now)
        app->fixed_now = atof(now);
    for (int i = 0; i < VIEW__COUNT; i++)
        app->views[i].ops = view_table[i];
    app->cur = VIEW_OVERVIEW;
    app->theme = theme_new();
    app->km = keymap_new();
    app->ctx.theme = app->theme;
    app->ctx.km = app->km;
    const rd_system_cfg *sys = session_find(app->session, opts->system);
    const char *theme = opts->theme ? opts->theme : sys ? sys->theme : NULL;
    const char *keymap = opts->keymap ? opts->keymap : sys ? sys->keymap : NULL;
    if (theme)
        app_load_theme(app, theme);
    if (keymap)
        app_load_keymap(app, keymap);
}

static void app_free(ui_app *app)
{
    app_teardown_system(app);
    sessions_free(app->fleet);   /* journals requests left in flight as "unknown" */
    app->fleet = NULL;
    free(app->fleet_rows);
    for (int i = 0; i < VIEW__COUNT; i++)
        if (app->views[i].ops && app->views[i].ops->free)
            app->views[i].ops->free(&app->views[i]);
    sel_clear(&app->ctx.sel);
    free(app->clip);
    journal_entries_free(app->journal, app->n_journal);
    free(app->retries);
    theme_free(app->theme);
    keymap_free(app->km);
    session_free(app->session);
    if (app->latency)
        fclose(app->latency);
}

static int app_run_headless(ui_app *app, const char *size)
{
    const char *model = getenv("REDRIVE_HEADLESS_MODEL");
    if (model && *model && !app_headless_model(app, model))
        return RD_EXIT_USAGE;
    app_read_journal(app);
    app_start_fleet(app, false);
    app_start_system(app, app->opts->system);
    if (!term_open(app, size))
        return RD_EXIT_FAIL;
    const char *view = getenv("REDRIVE_HEADLESS_VIEW");
    if (view && *view)
        app_command(app, view);
    app_effects(app);
    int rc = headless_run(app, getenv("REDRIVE_HEADLESS_KEYS"));
    term_close(app);
    return rc;
}

static int app_run_console(ui_app *app)
{
    /* tests: a real terminal drawing a fixed model (no sources, no core API) */
    const char *model = getenv("REDRIVE_HEADLESS_MODEL");
    if (model && *model) {
        if (!app_headless_model(app, model))
            return RD_EXIT_USAGE;
        app->model_only = true;
    }
    app->base = app_loop_base();
    if (!app->base) {
        fprintf(stderr, "redrive: cannot start the event loop\n");
        return RD_EXIT_FAIL;
    }
    const char *lat = getenv("REDRIVE_LATENCY_TRACE");
    if (lat && *lat)
        app->latency = fopen(lat, "w");
    app_loop_events(app);   /* signals handled from the first frame on (they end the loop) */
    if (!term_open(app, NULL)) {
        app_loop_free_events(app);
        event_base_free(app->base);
        return RD_EXIT_FAIL;
    }
    /* the frame at once: then the last-known data, then the system opens and connects */
    app->sys = session_find(app->session, app->opts->system);
    app->ctx.cfg = app->sys;
    app->start_cpu[1] = clock_cpu();
    app_paint(app);
    app->start_cpu[2] = clock_cpu();
    app_start_trace(app);
    app_read_journal(app);   /* up to 4 MiB of JSON lines: after the frame */
    app_start_fleet(app, !app->model_only);
    app_start_system(app, app->opts->system);
    rd_diags *d = session_diags(app->session);
    if (d->n)
        app_diag_msg(app, d, 0);
    app_paint(app);
    if (!app->quit)
        loop_run(app->base);
    term_close(app);
    app_teardown_system(app);   /* journals requests left in flight as "unknown" */
    sessions_free(app->fleet);  /* the sources before their loop */
    app->fleet = NULL;
    app_bind(app);
    app_loop_free_events(app);
    event_base_free(app->base);
    return app->quit_signal ? 128 + app->quit_signal : RD_EXIT_OK;
}

int ui_main(const rd_opts *opts)
{
    ui_app *app = xcalloc(1, sizeof *app);
    app_init(app, opts);
    app->start_cpu[0] = clock_cpu();
    const char *size = getenv("REDRIVE_HEADLESS");
    if (size && *size)
        app->headless = true;
    int rc = app->headless ? app_run_headless(app, size) : app_run_console(app);
    if (!app->headless)
        session_print_diags(app->session, 0, stderr);
    app_free(app);
    free(app);
    return rc;
}
