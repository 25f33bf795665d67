/* The console: set-up, views and their effects, command mode, theme and keymap, the
 * journal; the systems are bound in binding.c, the loop runs in app_loop.c. */
#include "app_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../io/clock.h"
#include "../io/loop.h"
#include "../core/model_json.h"
#include "../core/sanitize.h"
#include "../core/storegroups.h"
#include "../core/testhook.h"
#include "../core/textutil.h"
#include "../core/xalloc.h"
#include "../actions/batchrec.h"
#include "binding.h"
#include "clip.h"
#include "cmd.h"
#include "dialog.h"
#include "headless.h"
#include "setretry.h"
#include "ui.h"
#include "ui_term.h"

static const ui_view_ops *const view_table[] = {
    [VIEW_OVERVIEW] = &view_overview_ops, [VIEW_EXECS] = &view_execs_ops,
    [VIEW_CHAIN] = &view_chain_ops,       [VIEW_WORKERS] = &view_workers_ops,
    [VIEW_QUEUES] = &view_queues_ops,     [VIEW_DLQ] = &view_dlq_ops,
    [VIEW_JOURNAL] = &view_journal_ops,   [VIEW_HELP] = &view_help_ops,
    [VIEW_FLEET] = &view_fleet_ops,
    [VIEW_GROUPS] = &view_groups_ops,
    [VIEW_DRAIN] = &view_drain_ops,
    [VIEW_HISTORY] = &view_history_ops,
    [VIEW_DETAIL] = &view_detail_ops,
};
_Static_assert(sizeof view_table / sizeof *view_table == VIEW__COUNT, "one ops for each ui_view_id");

const ui_view_ops *view_ops(ui_view_id id)
{
    return id >= 0 && id < VIEW__COUNT ? view_table[id] : NULL;
}

ui_view_id view_named(const char *name)
{
    for (int i = 0; name && i < VIEW__COUNT; i++)
        if (strcmp(view_table[i]->name, name) == 0)
            return (ui_view_id)i;
    return VIEW__COUNT;
}

enum { JOURNAL_TAIL = 500 };

double app_now(const ui_app *app)
{
    if (app->fixed_now > 0)
        return app->fixed_now;
    return clock_wall();
}

void app_set_now(ui_app *app, double now)
{
    app->fixed_now = now;
}

rd_system_cfg *app_sys(const ui_app *app) { return binding_sys(app->bind); }
rd_model *app_model(const ui_app *app) { return binding_model(app->bind); }
rd_sources *app_sources(const ui_app *app) { return binding_sources(app->bind); }
rd_actor *app_actor(const ui_app *app) { return binding_actor(app->bind); }
ui_ctx *app_ctx(ui_app *app) { return &app->ctx; }
ui_dialog *app_dialog(ui_app *app) { return &app->dlg; }
rd_loop *app_base(const ui_app *app) { return app->base; }
const char *app_config_path(const ui_app *app) { return app->opts ? app->opts->config_path : NULL; }
rd_session *app_live(const ui_app *app) { return binding_live(app->bind); }

bool app_quitting(const ui_app *app)
{
    return app->quit;
}

void app_fleet_rows(ui_app *app)
{
    size_t n = 0;
    const rd_fleet_row *rows = binding_fleet_rows(app->bind, app_now(app), &n);
    if (!rows)
        return;
    app->ctx.fleet = rows;
    app->ctx.fleet_hist = binding_fleet_hist(app->bind);
    app->ctx.n_fleet = n;
}

void app_open_view(ui_app *app, ui_view_id id, const char *arg, bool push)
{
    if (id == VIEW_FLEET && binding_fleet(app->bind))   /* the top view: q from there quits */
        push = false, app->n_hist = 0;
    if (push && id != app->cur) {
        if (app->n_hist == HIST_MAX) {
            memmove(app->hist, app->hist + 1, (HIST_MAX - 1) * sizeof *app->hist);
            app->n_hist--;
        }
        app->hist[app->n_hist++] = app->cur;
    }
    app->cur = id;
    binding_focus(app->bind, app->cur);
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
    binding_focus(app->bind, app->cur);
}

/* The retry-loop breaker's memory: this system's manual retries the core accepted. */
void app_retries(ui_app *app)
{
    const rd_system_cfg *sys = binding_sys(app->bind);
    free(app->retries);
    app->retries = journal_retries(app->journal, app->n_journal, sys ? sys->name : NULL, &app->n_retries);
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

/* Unfinished batches (a store-wide retry stopped by a quit, a crash or kill -9) are
 * offered at start: the status line names them and the command that resumes them
 * (`redrive batch resume ID`, batchrec.h). Read after the first frame, as the journal. */
static void app_offer_batches(ui_app *app)
{
    char *path = session_journal_path(), why[256];
    rd_batch_info *v = NULL;
    size_t n = 0, open = 0, last = 0, damaged = 0;
    if (path && batchrec_list(path, &v, &n, why, sizeof why))
        for (size_t i = 0; i < n; i++) {
            damaged += v[i].damaged != NULL;
            if (strcmp(batch_info_state(&v[i]), "open") == 0) {
                open++;
                last = i;
            }
        }
    /* a damaged record is never half used (batchrec.h): counted, batch list names it */
    char dmg[96] = "";
    if (damaged)
        snprintf(dmg, sizeof dmg, "%s%zu damaged batch record%s%s", open ? "; " : "", damaged,
                 damaged == 1 ? "" : "s", open ? "" : ": not offered (redrive batch list)");
    if (open) {
        char *sys = sanitize_str(v[last].system, 0);
        size_t left = v[last].total - (v[last].ok + v[last].failed + v[last].unknown);
        ctx_msg(&app->ctx, false, "%zu unfinished batch%s: %s on %s, %zu of %zu left: redrive batch "
                "resume %s (redrive batch list)%s", open, open == 1 ? "" : "es", v[last].action,
                sys, left, v[last].total, v[last].id, dmg);
        free(sys);
    } else if (damaged) {
        ctx_msg(&app->ctx, false, "%s", dmg);
    }
    batch_infos_free(v, n);
    free(path);
}

void app_journal_reload(ui_app *app)
{
    app_read_journal(app);
}

static void app_filter(ui_app *app)
{
    rd_session *live = binding_live(app->bind);
    if (!binding_sources(app->bind))
        return;
    ui_filter *f = &app->ctx.filter[VIEW_EXECS];
    rd_exec_filter ef = {f->status[0] ? f->status : NULL, f->text[0] ? f->text : NULL, f->fp[0] ? f->fp : NULL,
                         f->worker[0] ? f->worker : NULL, f->fp[0] ? f->window_s : 0, false};
    session_set_filter(live, &ef);
}

static void app_effect(ui_app *app, const ui_effect *e)
{
    rd_session *live = binding_live(app->bind);
    bool src = binding_sources(app->bind) != NULL;
    rd_sessions *fleet = binding_fleet(app->bind);
    switch (e->kind) {
    case FX_VIEW: app_open_view(app, (ui_view_id)e->arg, e->text, true); break;
    case FX_CHAIN: session_request_chain(live, e->text); break;
    case FX_DETAIL: session_request_detail(live, e->text); break;
    case FX_DLQ_PAGE: session_dlq_page(live, e->arg); break;
    case FX_DLQ_ORDER:
        session_dlq_order(live, e->arg != 0, app->ctx.filter[VIEW_DLQ].text[0] ? app->ctx.filter[VIEW_DLQ].text : NULL);
        break;
    case FX_WORKER: session_request_worker(live, e->text); break;
    case FX_PAGE: session_page(live, e->arg); break;
    case FX_JUMP:
        app->views[VIEW_EXECS].list.cur = app->views[VIEW_EXECS].list.top = 0;
        list_unpin(&app->views[VIEW_EXECS].list);
        session_jump(live, e->text);
        if (app->cur != VIEW_EXECS)
            app_open_view(app, VIEW_EXECS, e->text, true);
        break;
    case FX_FILTER:
        if (e->arg == VIEW_EXECS) {   /* a new page from the top: nothing to follow */
            list_unpin(&app->views[VIEW_EXECS].list);
            app_filter(app);   /* the one filter the sources search with */
        } else if (e->arg >= 0 && e->arg < VIEW__COUNT) {
            app->views[e->arg].list.cur = 0;   /* the followed row, when it is still shown */
            if (e->arg == VIEW_DLQ && src && app->ctx.model->dlq_first > 0)   /* the store searches */
                session_dlq_order(live, app->ctx.model->dlq_oldest,
                                  app->ctx.filter[VIEW_DLQ].text[0] ? app->ctx.filter[VIEW_DLQ].text : NULL);
        }
        break;
    case FX_PEEK: session_peek_dlq(live, e->arg != 0); break;
    case FX_GROUPS: session_request_groups(live, e->arg, sgroups_cap_default()); break;
    case FX_REFRESH:
        for (size_t i = 0; e->arg < 0 && fleet && i < sessions_count(fleet); i++)
            session_refresh(sessions_at(fleet, i));
        if (!(e->arg < 0 && fleet))
            session_refresh(live);
        break;
    case FX_SYSTEM: binding_switch(app, e->text); break;
    case FX_ACT:
        if (strcmp(e->text, "now") == 0)
            dialog_start_now(app, (rd_action)e->arg);
        else
            dialog_start(app, (rd_action)e->arg);
        break;
    case FX_COPY: clip_copy(app); break;
    case FX_RETRY_SET: setretry_begin(app, e->arg, e->text); break;
    case FX_DLQ_SET: setretry_begin_dlq(app, (rd_action)e->arg, e->text); break;
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

void app_diag_msg(ui_app *app, rd_diags *d, size_t from)
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
    term_apply_theme(app->term, t);
    app->full_redraw = true;
}

void app_load_theme(ui_app *app, const char *name)
{
    rd_diags *d = session_diags(binding_session(app->bind));
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
    rd_diags *d = session_diags(binding_session(app->bind));
    size_t before = d->n;
    ui_keymap *k = keymap_new();
    if (name && *name && strcmp(name, "built-in") != 0)
        keymap_load(k, name, d);
    keymap_free(app->km);
    app->km = k;
    app->ctx.km = k;
    app_diag_msg(app, d, before);
}

/* error=ID: a group's id (or its prefix) names the fingerprint among the store's groups
 * (the groups view's, as last computed), and their window; false having said why. */
static bool filter_group(ui_app *app, ui_filter *f)
{
    const rd_sgroups *sg = app->ctx.model->sgroups;
    const rd_group *g = NULL;
    char why[300];
    switch (sgroups_resolve(sg, f->fp, &g, why, sizeof why)) {
    case GROUPID_FOUND:
        snprintf(f->fp, sizeof f->fp, "%s", g->fp);
        f->window_s = sgroups_window(sg);
        return true;
    case GROUPID_FP:
        return true;
    default:
        if (!sg)
            snprintf(why, sizeof why, "a group id names one of the store's groups: open them first (:groups)");
        ctx_msg(&app->ctx, true, "filter: error=%s: %s", f->fp, why);
        return false;
    }
}

static void app_command_filter(ui_app *app, char *arg)
{
    ui_filter nf = {0}, *f = &nf;
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
    rd_session *live = app_live(app);
    char why[600];
    if (nf.status[0] && live && !profile_status_known(session_profile(live), nf.status, why, sizeof why)) {
        ctx_msg(&app->ctx, true, "filter: %s", why);   /* refused, not searched: the filter stays */
        return;
    }
    if (nf.fp[0] && !filter_group(app, &nf))
        return;
    app->ctx.filter[VIEW_EXECS] = nf;
    ctx_fx(&app->ctx, FX_FILTER, VIEW_EXECS, NULL);
    if (app->cur != VIEW_EXECS)
        ctx_fx(&app->ctx, FX_VIEW, VIEW_EXECS, NULL);
}

/* `:retry-all [DUR]`: the executions view's filter, every page (in the window DUR); in the
 * DLQ view, its search's entries (the DLQ has no window). */
static void app_command_retry_all(ui_app *app, const char *arg)
{
    double w = 0;
    if (arg[0] && (!parse_duration(arg, &w) || w < 1 || w > 366 * 86400.0)) {
        ctx_msg(&app->ctx, true, "retry-all: the window is a duration (30m, 6h, 2d), not '%.40s'", arg);
        return;
    }
    if (app->ctx.read_only) {
        ctx_msg(&app->ctx, true, "read-only: 'retry-all' is disabled");
        return;
    }
    if (app->cur == VIEW_DLQ && arg[0])
        ctx_msg(&app->ctx, true, "retry-all: the DLQ's set has no window: its search, every page");
    else if (app->cur == VIEW_DLQ)
        ctx_fx(&app->ctx, FX_DLQ_SET, RD_ACT_RETRY, "filter");
    else
        ctx_fx(&app->ctx, FX_RETRY_SET, (int)w, "filter");
}

/* A view's command opens it (its ops name it); a usage that names an argument (groups
 * DURATION, chain ID, cockpit WORKER) hands it to the view. */
static void app_command_view(ui_app *app, ui_cmd_id id, const char *arg)
{
    const ui_command *cmd = cmd_info(id);
    ui_view_id v = cmd ? view_named(cmd->name) : VIEW__COUNT;
    if (v != VIEW__COUNT)
        app_open_view(app, v, strchr(cmd->usage, ' ') ? arg : NULL, true);
}

void app_command(ui_app *app, const char *line)
{
    char arg[256], err[160];
    ui_cmd_id id = cmd_parse(line, arg, sizeof arg, err, sizeof err);
    switch (id) {
    case CMD_NONE: ctx_msg(&app->ctx, true, "%s", err); break;
    case CMD_JUMP: ctx_fx(&app->ctx, FX_JUMP, 0, arg); break;
    case CMD_FILTER: app_command_filter(app, arg); break;
    case CMD_SYSTEM: binding_switch(app, arg); break;
    case CMD_THEME: app_theme_command(app, arg); break;
    case CMD_KEYMAP: app_load_keymap(app, arg); break;
    case CMD_REFRESH: ctx_fx(&app->ctx, FX_REFRESH, 0, NULL); break;
    case CMD_BATCH: dialog_show(app); break;
    case CMD_RETRY_ALL: app_command_retry_all(app, arg); break;
    case CMD_EXPORT: case CMD_EXPORT_FORCE: clip_export(app, arg, id == CMD_EXPORT_FORCE); break;
    case CMD_QUIT: app->quit = true; break;
    default: app_command_view(app, id, arg); break;
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
    bool ok = model_from_json(binding_model(app->bind), json, clock_wall(), err, sizeof err);
    free(json);
    if (!ok)
        fprintf(stderr, "redrive: %s: %s\n", file, err);
    return ok;
}

static void app_init(ui_app *app, const rd_opts *opts)
{
    memset(app, 0, sizeof *app);
    app->opts = opts;
    app->term = term_new(!opts->no_mouse);
    app->bind = binding_new(opts);
    binding_bind(app);
    app->ctx.san = opts->ascii ? SAN_ASCII : 0;
    app->ctx.diags = session_diags(binding_session(app->bind));
    const char *now = testhook_env("REDRIVE_NOW");
    if (now && *now)
        app->fixed_now = atof(now);
    for (int i = 0; i < VIEW__COUNT; i++)
        app->views[i].ops = view_table[i];
    app->cur = VIEW_OVERVIEW;
    app->theme = theme_new();
    app->km = keymap_new();
    app->ctx.theme = app->theme;
    app->ctx.km = app->km;
    const rd_system_cfg *sys = session_find(binding_session(app->bind), opts->system);
    const char *theme = opts->theme ? opts->theme : sys ? sys->ui.theme : NULL;
    const char *keymap = opts->keymap ? opts->keymap : sys ? sys->ui.keymap : NULL;
    if (theme)
        app_load_theme(app, theme);
    if (keymap)
        app_load_keymap(app, keymap);
}

static void app_free(ui_app *app)
{
    binding_stop(app);   /* journals requests left in flight as "unknown" */
    for (int i = 0; i < VIEW__COUNT; i++)
        if (app->views[i].ops && app->views[i].ops->free)
            app->views[i].ops->free(&app->views[i]);
    sel_clear(&app->ctx.sel);
    free(app->clip);
    journal_entries_free(app->journal, app->n_journal);
    free(app->retries);
    theme_free(app->theme);
    keymap_free(app->km);
    binding_free(app->bind);
    term_free(app->term);
}

static int app_run_headless(ui_app *app, const char *size)
{
    const char *model = testhook_env("REDRIVE_HEADLESS_MODEL");
    if (model && *model && !app_headless_model(app, model))
        return RD_EXIT_USAGE;
    app_read_journal(app);
    binding_start_fleet(app, false);
    binding_start_system(app, app->opts->system);
    app_offer_batches(app);
    if (!term_open(app->term, size, app->theme, &app->ctx))
        return RD_EXIT_FAIL;
    const char *view = testhook_env("REDRIVE_HEADLESS_VIEW");
    if (view && *view)
        app_command(app, view);
    app_effects(app);
    int rc = headless_run(app, testhook_env("REDRIVE_HEADLESS_KEYS"));
    term_close(app->term);
    return rc;
}

static int app_run_console(ui_app *app)
{
    /* tests: a real terminal drawing a fixed model (no sources, no core API) */
    const char *model = testhook_env("REDRIVE_HEADLESS_MODEL");
    if (model && *model) {
        if (!app_headless_model(app, model))
            return RD_EXIT_USAGE;
        app->model_only = true;
    }
    app->base = loop_new();
    if (!app->base) {
        fprintf(stderr, "redrive: cannot start the event loop\n");
        return RD_EXIT_FAIL;
    }
    app_loop_events(app);   /* signals handled from the first frame on (they end the loop) */
    if (!term_open(app->term, NULL, app->theme, &app->ctx)) {
        app_loop_free_events(app);
        loop_free(app->base);
        return RD_EXIT_FAIL;
    }
    /* the frame at once: then the last-known data, then the system opens and connects */
    binding_preview(app, app->opts->system);
    app->start_cpu[1] = clock_cpu();
    app_paint(app);
    app->start_cpu[2] = clock_cpu();
    app_start_trace(app);
    app_read_journal(app);   /* up to 4 MiB of JSON lines: after the frame */
    binding_start_fleet(app, !app->model_only);
    binding_start_system(app, app->opts->system);
    rd_diags *d = session_diags(binding_session(app->bind));
    app_offer_batches(app);
    if (d->n)
        app_diag_msg(app, d, 0);
    app_paint(app);
    if (!app->quit)
        loop_run(app->base);
    term_close(app->term);
    binding_stop(app);   /* the sources before their loop */
    app_loop_free_events(app);
    loop_free(app->base);
    return app->quit_signal ? 128 + app->quit_signal : RD_EXIT_OK;
}

int ui_main(const rd_opts *opts)
{
    ui_app *app = xcalloc(1, sizeof *app);
    app_init(app, opts);
    app->start_cpu[0] = clock_cpu();
    const char *size = testhook_env("REDRIVE_HEADLESS");
    if (size && *size)
        app->headless = true;
    int rc = app->headless ? app_run_headless(app, size) : app_run_console(app);
    if (!app->headless)
        session_print_diags(binding_session(app->bind), 0, stderr);
    app_free(app);
    free(app);
    return rc;
}
