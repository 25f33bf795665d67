/* The console's app context (app_priv.h) at the bottom of ui's console files: its clock,
 * the system on screen as the rest of ui asks for it (app.h), the views opened and gone
 * back from, the journal read, the theme and keymap, and a repaint asked for. It calls
 * nothing above it: the drivers (app.c, app_loop.c, headless.c), the keys (input.c),
 * command mode (app_cmd.c), the systems' opening (binding_open.c), the paint and the
 * dialogs all read downward to here. */
#include "app_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "binding.h"
#include "lastknown.h"
#include "ui_term.h"

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

void app_journal_reload(ui_app *app)
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
    app->ctx.journal_capped = app->n_journal >= JOURNAL_TAIL;
    app->ctx.journal_error = app->journal_err[0] ? app->journal_err : NULL;
    app_retries(app);
}

void app_dlq_resolved(ui_app *app, const char *id)
{
    const char *sys = app->ctx.cfg && app->ctx.cfg->name ? app->ctx.cfg->name : "";
    if (!id)
        return;
    xgrow(&app->dlq_resolved, &app->cap_dlq_resolved, app->n_dlq_resolved + 1, sizeof *app->dlq_resolved);
    app->dlq_resolved[app->n_dlq_resolved++] = xasprintf("%s\t%s", sys, id);
    app->ctx.dlq_resolved = (const char *const *)app->dlq_resolved;
    app->ctx.n_dlq_resolved = app->n_dlq_resolved;
    rd_model *m = app_model(app);
    if (m)
        model_dlq_remove(m, "postgresql", id);   /* a resolve is the store's entry's only */
}

void app_dlq_reread(ui_app *app)
{
    if (app_sources(app))
        session_dlq_page(app_live(app), 0);      /* the store's page again, without them */
}

void app_diag_msg(ui_app *app, rd_diags *d, size_t from)
{
    if (d->n > from)
        ctx_msg(&app->ctx, true, "%s%s", d->msgs[from], d->n - from > 1 ? " (more in the overview)" : "");
}

/* t replaces the theme on screen (owned from now on). */
void app_use_theme(ui_app *app, ui_theme *t)
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

/* ---- repaints asked for (the loop runs them: app_loop.c) ---- */

/* Data-driven repaints are paced at ~10 Hz from the last paint that showed new data: a
 * paint of the ages alone (the tick) or of a key does not hold back the data that
 * arrives right after it (a pushed write would wait up to 100 ms for nothing). */
void app_schedule_repaint(ui_app *app)
{
    ui_loop *l = app->loop;
    if (l->repaint_pending)
        return;
    double wait = l->last_data_paint + 0.1 - clock_mono();
    term_arm(app->term, TERM_REPAINT, wait < 0 ? 0 : wait);
    l->repaint_pending = true;
}

void app_request_paint(ui_app *app)
{
    app->dirty = true;
    if (app->base && app->loop && term_events_on(app->term))
        app_schedule_repaint(app);
}

void app_source_changed(void *ud)
{
    ui_app *app = ud;
    const ui_lastknown *cache = binding_cache(app->bind);
    double cached = lastknown_at(cache);
    binding_source_changed(app);
    /* an answer that changed nothing shown (the model's generation did not move, the
     * last-known mark is as it was) paints nothing: no work for a steady poll */
    if (app_model(app)->generation != app->painted_gen || lastknown_at(cache) != cached)
        app_request_paint(app);
}

void app_resized(ui_app *app)
{
    term_resize(app->term);
    app->dirty = true;
    app->full_redraw = true;
}
