/* The console: set-up, the run (headless for the screen tests, or the event loop), the
 * end. At the top of ui's console files: the loop runs in app_loop.c, keys in input.c,
 * command mode and effects in app_cmd.c, the systems are opened in binding_open.c, and
 * the app context they all share is app_ctx.c, at the bottom. */
#include "app_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/clock.h"
#include "../io/loop.h"
#include "../core/model_json.h"
#include "../core/sanitize.h"
#include "../core/testhook.h"
#include "../core/textutil.h"
#include "../core/xalloc.h"
#include "../actions/batchrec.h"
#include "binding.h"
#include "batches.h"
#include "headless.h"
#include "paint.h"
#include "ui.h"
#include "ui_term.h"

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
            if (batch_info_open(&v[i])) {
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
        size_t left = v[last].total - (v[last].ok + v[last].failed + v[last].unknown +
                                       v[last].held);
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
        app->views[i].ops = view_ops((ui_view_id)i);
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
    for (size_t i = 0; i < app->n_dlq_resolved; i++)
        free(app->dlq_resolved[i]);
    free(app->dlq_resolved);
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
    app_journal_reload(app);
    batches_setup(app);
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
    app_journal_reload(app);   /* up to 4 MiB of JSON lines: after the frame */
    batches_setup(app);
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
