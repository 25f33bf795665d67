/* The console's event loop: keys before work, repaints paced from data changes, the tick,
 * signals. Below the set-up (app.c); above the keys (input.c), the paint (paint.c: a
 * paint now) and the context (app_ctx.c: a repaint asked for, paced). */
#include "app_priv.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/testhook.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"
#include "dialog.h"
#include "input.h"
#include "paint.h"
#include "ui_term.h"

static void latency_start(ui_loop *l, double t_ready)
{
    if (l->n_lat < LAT_MAX)
        l->lat_t0[l->n_lat++] = t_ready;
}

/*
 * The tick repaints what the clock alone changes: ages on screen ("12s" -> "13s"), a
 * running action. It wakes at most once a second and only as often as those need: after
 * a paint from data it sleeps until the first age painted would read differently (an
 * idle console whose screen shows no seconds wakes for its refreshes alone), at most
 * TICK_MAX_S; after a key it wakes in a second (no search on the key's path).
 */
enum { TICK_MAX_S = 30 };

static void tick_arm(ui_app *app, double wait)
{
    term_arm(app->term, TERM_TICK, wait);
    app->loop->tick_due = clock_mono() + wait;
}

static void tick_plan(ui_app *app)
{
    if (dialog_busy(app))
        tick_arm(app, 1.0);
    else if (app->fixed_now > 0)   /* tests: a fixed clock moves no age */
        tick_arm(app, TICK_MAX_S);
    else
        tick_arm(app, ctx_ages_next_change(&app->ctx, app_now(app), 1.0, TICK_MAX_S));
}

static void tick_soon(ui_app *app)
{
    if (term_events_on(app->term) && app->loop->tick_due > clock_mono() + 1.0)
        tick_arm(app, 1.0);
}

static void on_repaint(int fd, short what, void *ud)
{
    ui_app *app = ud;
    (void)fd, (void)what;
    app->loop->repaint_pending = false;
    app_paint(app);
    tick_plan(app);
}

static void on_signal(int sig, short what, void *ud);

static void on_input(int fd, short what, void *ud)
{
    ui_app *app = ud;
    (void)fd, (void)what;
    /* key-to-paint is traced from here, not from each key's read: the time spent handling
     * the keys before it in the same wake counts too */
    double t_ready = clock_mono();
    bool any = false;
    for (int guard = 0; guard < 4096; guard++) {
        wint_t ch;
        int rc = term_read_key(app->term, &ch);
        if (rc == ERR)
            break;
        if (rc == OK && ch == 27) {   /* alt-X arrives as ESC X in one read */
            wint_t next;
            int rc2 = term_read_key(app->term, &next);
            if (rc2 != ERR) {
                ui_key k = key_from_curses(rc2, (unsigned)next);
                latency_start(app->loop, t_ready);
                input_key(app, (k & UK_FN) ? k : (UK_ALT | k));
                any = true;
                continue;
            }
        }
        latency_start(app->loop, t_ready);
        input_key(app, key_from_curses(rc, (unsigned)ch));
        any = true;
        if (app->quit)
            break;
    }
    if (!any && term_hung_up(app->term)) {
        on_signal(SIGHUP, 0, app);   /* the terminal is gone: quit as on SIGHUP (exit 129) */
        return;
    }
    if (any || app->dirty) {
        app_paint(app);   /* key presses repaint at once */
        tick_soon(app);
    }
}

static void on_signal(int sig, short what, void *ud)
{
    ui_app *app = ud;
    (void)what;
    if (sig == SIGWINCH) {
        app_resized(app);
        app_paint(app);
        tick_soon(app);
        return;
    }
    app->quit = true;
    app->quit_signal = (int)sig;   /* exit 128 + sig once the terminal is restored */
    loop_break(app->base);
}

static void on_tick(int fd, short what, void *ud)
{
    ui_app *app = ud;
    (void)fd, (void)what;
    /* Repaint only for a reason: a change not painted yet, a running action, or an age
     * on screen that now reads differently ("12s" -> "13s"). An idle console paints
     * nothing, so it writes nothing. */
    if (app->dirty || app_model(app)->generation != app->painted_gen || dialog_busy(app) ||
        ctx_ages_changed(&app->ctx, app_now(app))) {
        app_schedule_repaint(app);   /* which plans the next tick */
        tick_arm(app, 1.0);
    } else
        tick_plan(app);
}

/* Tests (model-only console): what a source's steady poll does to the model with
 * unchanged data, every REDRIVE_MODEL_POLL seconds: the OK sources answered now. */
static void on_model_poll(int fd, short what, void *ud)
{
    ui_app *app = ud;
    (void)fd, (void)what;
    rd_model *m = app_model(app);
    double now = app_now(app);
    for (size_t i = 0; i < m->sources.n; i++)
        if (m->sources.items[i].state == RD_SRC_OK)
            model_source_ok(m, m->sources.items[i].name, now);
    model_changed(m);
    app_source_changed(app);
}

bool app_loop_events(ui_app *app)
{
    app->loop = xcalloc(1, sizeof *app->loop);
    const char *lat = testhook_env("REDRIVE_LATENCY_TRACE");
    if (lat && *lat)
        app->loop->latency = testhook_trace_open(lat, true);
    ui_term_events cb = {.on_input = on_input, .on_repaint = on_repaint, .on_tick = on_tick,
                         .on_signal = on_signal};
    bool ok = term_events_add(app->term, app->base, &cb, app);
    tick_arm(app, 1.0);
    const char *poll = testhook_env("REDRIVE_MODEL_POLL");
    if (app->model_only && poll && atof(poll) > 0)
        term_poll_every(app->term, app->base, atof(poll), on_model_poll, app);
    return ok;
}

void app_loop_free_events(ui_app *app)
{
    term_events_free(app->term);
    if (app->loop && app->loop->latency)
        fclose(app->loop->latency);
    free(app->loop);
    app->loop = NULL;
}

/* Bench and CI gate (REDRIVE_START_TRACE=FILE): the CPU the start cost, by phase, and
 * the shared libraries mapped when the first frame is on screen (what the dynamic loader
 * had to load and relocate before it: a library needed only later is loaded later). */
void app_start_trace(const ui_app *app)
{
    const char *path = testhook_env("REDRIVE_START_TRACE");
    if (!path || !*path)
        return;
    /* written aside and renamed into place: a reader that sees the file sees all of it */
    char *tmp = xasprintf("%s.tmp", path);
    FILE *out = testhook_trace_open(tmp, true);
    if (!out) {
        free(tmp);
        return;
    }
    fprintf(out, "first_paint_cpu_ms %.3f\n", app->start_cpu[2] * 1e3);
    fprintf(out, "main_cpu_ms %.3f\nsetup_cpu_ms %.3f\nterminal_cpu_ms %.3f\nframe_cpu_ms %.3f\n",
            app->opts->main_cpu * 1e3, (app->start_cpu[0] - app->opts->main_cpu) * 1e3,
            (app->start_cpu[1] - app->start_cpu[0]) * 1e3, (app->start_cpu[2] - app->start_cpu[1]) * 1e3);
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096], last[4096] = "";
    while (maps && fgets(line, sizeof line, maps)) {
        char *p = strchr(line, '/');
        if (!p || !strstr(p, ".so"))
            continue;
        p[strcspn(p, "\n")] = 0;
        if (strcmp(p, last) != 0)   /* a library's mappings are adjacent */
            fprintf(out, "lib %s\n", p);
        snprintf(last, sizeof last, "%s", p);
    }
    if (maps)
        fclose(maps);
    if (fclose(out) == 0)
        rename(tmp, path);
    free(tmp);
}
