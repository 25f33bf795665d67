/* Command mode and the views' effects (ui_effect): what a key or a command line asks of
 * the console, done. Below the keys (input.c) and the set-up (app.c); above the systems'
 * opening (binding_open.c), the dialogs, the copy and export (clip.c) and the context. */
#include "app_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/duration.h"
#include "../core/storegroups.h"
#include "../core/textutil.h"
#include "batches.h"
#include "binding.h"
#include "clip.h"
#include "cmd.h"
#include "dialog.h"
#include "setretry.h"

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
    case FX_JOURNAL: app_journal_reload(app); break;
    case FX_BATCH: batches_effect(app, e->arg, e->text); break;
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

/* `:batch` brings the batch put away back on screen; it takes no argument (`:batch resume
 * ID` was read as `:batch` and the ID dropped): a stopped batch resumes from a shell. */
static void app_command_batch(ui_app *app, const char *arg)
{
    if (!arg[0]) {
        dialog_show(app);
        return;
    }
    char id[40] = "";
    if (sscanf(arg, "resume %39s", id) == 1 || sscanf(arg, "abandon %39s", id) == 1)
        ctx_msg(&app->ctx, true, "batch: the console shows the batch put away (:batch); in a shell: "
                "redrive batch %s %s", strncmp(arg, "resume", 6) == 0 ? "resume" : "abandon", id);
    else
        ctx_msg(&app->ctx, true, "batch: no argument (:batch shows the batch put away; "
                "redrive batch list|resume ID|abandon ID in a shell)");
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
    case CMD_BATCH: app_command_batch(app, arg); break;
    case CMD_RETRY_ALL: app_command_retry_all(app, arg); break;
    case CMD_EXPORT: case CMD_EXPORT_FORCE: clip_export(app, arg, id == CMD_EXPORT_FORCE); break;
    case CMD_QUIT: app->quit = true; break;
    default: app_command_view(app, id, arg); break;
    }
}
