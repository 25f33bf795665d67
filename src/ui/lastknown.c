/* The last-known snapshot in the console: shown (marked stale) at start before the
 * system is opened, replaced by live data, written back after refreshes and at the end. */
#include "lastknown.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"
#include "../session/snapcache.h"

enum { SAVE_EVERY_S = 60 };

struct ui_lastknown {
    char *path;       /* of the open system; NULL: none */
    double at;        /* epoch the cached data on screen was written; 0: live data */
    double saved;     /* monotonic time of the last write, 0: not yet */
    uint64_t gen;     /* model generation written last */
    bool live;        /* live data arrived: worth writing back */
    rd_bgwrite *writer;   /* its writer thread (snapcache_save_bg) */
};

ui_lastknown *lastknown_new(void)
{
    ui_lastknown *lk = xcalloc(1, sizeof(ui_lastknown));
    lk->writer = bgwrite_new();
    return lk;
}

void lastknown_free(ui_lastknown *lk)
{
    if (!lk)
        return;
    bgwrite_free(lk->writer);   /* the last save (lastknown_close) written first */
    free(lk->path);
    free(lk);
}

static void lastknown_forget(ui_lastknown *lk)
{
    free(lk->path);
    lk->path = NULL;
    lk->at = 0;
    lk->live = false;
}

/* Loads the cache of system `name` into the (still empty) model; true when there is
 * something new to paint. A bad file is ignored with a note on the status line. */
bool lastknown_open(ui_lastknown *lk, rd_session *cfg, rd_session *live, const char *name, ui_ctx *ctx)
{
    lastknown_forget(lk);
    lk->saved = 0;
    const rd_system_cfg *sys = session_find(cfg, name);
    const char *off = getenv("REDRIVE_NO_CACHE");
    if (!sys || (off && *off))
        return false;
    lk->path = snapcache_path(session_config_path(cfg), sys->name);
    if (!lk->path)
        return false;
    /* the session on screen (in the fleet: already polling in the background); live data
     * there beats the file */
    rd_model *m = session_model(live);
    for (size_t i = 0; i < m->sources.n; i++)
        if (m->sources.items[i].state == RD_SRC_OK) {
            lk->live = true;
            return false;
        }
    char why[200];
    double at = 0;
    snapcache_status st = snapcache_load(lk->path, sys->name, m, &at, why, sizeof why);
    if (st == SNAPCACHE_IGNORED) {
        ctx_msg(ctx, true, "last-known snapshot ignored: %s (%s)", why, lk->path);
        return true;
    }
    if (st != SNAPCACHE_LOADED)
        return false;
    lk->at = at;
    return true;
}

static void lastknown_failed(ui_lastknown *lk, const char *why, ui_ctx *ctx)
{
    ctx_msg(ctx, true, "last-known snapshot not saved: %s", why);
    free(lk->path);   /* once: no retry on every refresh */
    lk->path = NULL;
}

/* The writer's last save done? A failure is said once and ends the saves of this system. */
static bool lastknown_reap(ui_lastknown *lk, ui_ctx *ctx)
{
    char why[300];
    if (bgwrite_failed(lk->writer, why, sizeof why) && lk->path)
        lastknown_failed(lk, why, ctx);
    return !bgwrite_busy(lk->writer);
}

/* The writer thread makes the JSON of a copy of the model (~10 ms at a few hundred rows:
 * not in a loop callback, a key would wait for it) and writes the file; the loop pays the
 * copy. In the order asked: the save at close lands after the one before it. */
static void lastknown_save(ui_lastknown *lk, const rd_system_cfg *sys, const rd_model *m, ui_ctx *ctx)
{
    char why[200] = "";
    loop_span sp = loop_span_begin();   /* the copy is the loop's share (loop trace) */
    bool queued = sys && snapcache_save_bg(lk->writer, lk->path, sys->name, m, clock_wall(), why, sizeof why);
    loop_span_end(sp, "lastknown_copy");
    if (!queued) {
        lastknown_failed(lk, why, ctx);
        return;
    }
    lk->saved = clock_mono();
    lk->gen = m->generation;
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
void lastknown_update(ui_lastknown *lk, const rd_system_cfg *sys, rd_model *m, bool has_sources, ui_ctx *ctx)
{
    if (!has_sources || !m)
        return;
    bool connecting = false, ok = false;
    for (size_t i = 0; i < m->sources.n; i++) {
        connecting |= m->sources.items[i].state == RD_SRC_CONNECTING;
        ok |= m->sources.items[i].state == RD_SRC_OK;
    }
    if (connecting || !ok)
        return;
    if (m->dlq_cached_at > 0)
        lastknown_drop_orphans(m);
    lk->at = 0;   /* the top bar loses its mark with the repaint this update asks */
    lk->live = true;
    if (lastknown_reap(lk, ctx) && lk->path && m->generation != lk->gen &&
        (lk->saved == 0 || clock_mono() - lk->saved >= SAVE_EVERY_S))
        lastknown_save(lk, sys, m, ctx);
}

/* Before the system closes: the newest live data, once more (queued behind any save under
 * way; lastknown_free waits for it). */
void lastknown_close(ui_lastknown *lk, const rd_system_cfg *sys, rd_model *m, ui_ctx *ctx)
{
    lastknown_reap(lk, ctx);
    if (lk->path && lk->live && m && m->generation != lk->gen)
        lastknown_save(lk, sys, m, ctx);
    lastknown_forget(lk);
}

double lastknown_at(const ui_lastknown *lk)
{
    return lk ? lk->at : 0;
}

/* "stale (cached 17:42)" while the cache is what the screen shows; "" otherwise. */
void lastknown_label(const ui_lastknown *lk, char *out, size_t cap)
{
    out[0] = 0;
    if (lastknown_at(lk) <= 0)
        return;
    time_t t = (time_t)lk->at;
    struct tm tm;
    char hm[16] = "?";
    if (localtime_r(&t, &tm))
        strftime(hm, sizeof hm, "%H:%M", &tm);
    snprintf(out, cap, " stale (cached %s) ", hm);
}
