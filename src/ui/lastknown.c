/* The last-known snapshot in the console: shown (marked stale) at start before the
 * system is opened, replaced by live data, written back after refreshes and at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../session/snapcache.h"
#include "app.h"

enum { SAVE_EVERY_S = 60 };

/* Loads the cache of system `name` into the (still empty) model; true when there is
 * something new to paint. A bad file is ignored with a note on the status line. */
bool lastknown_open(ui_app *app, const char *name)
{
    free(app->cache_path);
    app->cache_path = NULL;
    app->cache_at = 0;
    app->cache_saved = 0;
    app->cache_live = false;
    const rd_system_cfg *sys = session_find(app->session, name);
    const char *off = getenv("REDRIVE_NO_CACHE");
    if (!sys || (off && *off))
        return false;
    app->cache_path = snapcache_path(session_config_path(app->session), sys->name);
    if (!app->cache_path)
        return false;
    /* the session on screen (in the fleet: already polling in the background); live data
     * there beats the file */
    rd_model *m = session_model(app_live(app));
    for (size_t i = 0; i < m->sources.n; i++)
        if (m->sources.items[i].state == RD_SRC_OK) {
            app->cache_live = true;
            return false;
        }
    char why[200];
    double at = 0;
    snapcache_status st = snapcache_load(app->cache_path, sys->name, m, &at, why, sizeof why);
    if (st == SNAPCACHE_IGNORED) {
        ctx_msg(&app->ctx, true, "last-known snapshot ignored: %s (%s)", why, app->cache_path);
        return true;
    }
    if (st != SNAPCACHE_LOADED)
        return false;
    app->cache_at = at;
    return true;
}

static void lastknown_failed(ui_app *app, const char *why)
{
    ctx_msg(&app->ctx, true, "last-known snapshot not saved: %s", why);
    free(app->cache_path);   /* once: no retry on every refresh */
    app->cache_path = NULL;
}

/* The writer of the last save, done? (wait: until it is) */
static bool lastknown_reap(ui_app *app, bool wait)
{
    if (!app->cache_child)
        return true;
    snapcache_child_status st = snapcache_reap(app->cache_child, wait);
    if (st == SNAPCHILD_RUNNING)
        return false;
    app->cache_child = 0;
    if (st == SNAPCHILD_FAILED && app->cache_path)
        lastknown_failed(app, "its writer process failed");
    return true;
}

/* While the console runs, a child process writes the file (the JSON of a few hundred rows
 * is ~10 ms: not in a loop callback, a key would wait for it); at the end, in place. */
static void lastknown_save(ui_app *app, bool in_child)
{
    char why[200] = "";
    int child = 0;
    bool ok = !app->sys ? false
              : in_child ? snapcache_save_child(app->cache_path, app->sys->name, app->model, clock_wall(),
                                                &child, why, sizeof why)
                         : snapcache_save(app->cache_path, app->sys->name, app->model, clock_wall(), why,
                                          sizeof why);
    if (!ok) {
        lastknown_failed(app, why);
        return;
    }
    app->cache_child = child;
    app->cache_saved = clock_mono();
    app->cache_gen = app->model->generation;
}

/* A cached DLQ total whose source this session does not have would stay forever. */
static void lastknown_drop_orphans(rd_model *m)
{
    const char **live = xcalloc(m->sources.n + 1, sizeof *live);
    for (size_t i = 0; i < m->sources.n; i++)
        live[i] = m->sources.items[i].name;
    model_dlq_drop_cached(m, live, m->sources.n);
    free(live);
}

/* After a model update: once every source has answered (none still connecting, one at
 * least ok), the data on screen is live; it is saved then and at most once a minute. */
void lastknown_update(ui_app *app)
{
    if (!app->src || !app->model)
        return;
    const rd_model *m = app->model;
    bool connecting = false, ok = false;
    for (size_t i = 0; i < m->sources.n; i++) {
        connecting |= m->sources.items[i].state == RD_SRC_CONNECTING;
        ok |= m->sources.items[i].state == RD_SRC_OK;
    }
    if (connecting || !ok)
        return;
    if (m->dlq_cached_at > 0)
        lastknown_drop_orphans(app->model);
    app->cache_at = 0;   /* the top bar loses its mark with the repaint this update asks */
    app->cache_live = true;
    if (lastknown_reap(app, false) && app->cache_path && m->generation != app->cache_gen &&
        (app->cache_saved == 0 || clock_mono() - app->cache_saved >= SAVE_EVERY_S))
        lastknown_save(app, true);
}

/* Before the system closes: the newest live data, once more. */
void lastknown_close(ui_app *app)
{
    lastknown_reap(app, true);
    if (app->cache_path && app->cache_live && app->model && app->model->generation != app->cache_gen)
        lastknown_save(app, false);
    free(app->cache_path);
    app->cache_path = NULL;
    app->cache_at = 0;
    app->cache_live = false;
}

/* "stale (cached 17:42)" while the cache is what the screen shows; "" otherwise. */
void lastknown_label(const ui_app *app, char *out, size_t cap)
{
    out[0] = 0;
    if (app->cache_at <= 0)
        return;
    time_t t = (time_t)app->cache_at;
    struct tm tm;
    char hm[16] = "?";
    if (localtime_r(&t, &tm))
        strftime(hm, sizeof hm, "%H:%M", &tm);
    snprintf(out, cap, " stale (cached %s) ", hm);
}
