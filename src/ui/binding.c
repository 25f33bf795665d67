/* The binding of the console to a system, the fleet or one session: what is open and what
 * is on screen (opening, switching and closing systems: binding_open.c, above it). */
#include "binding.h"

#include <stdlib.h>
#include <string.h>

#include "../core/duration.h"
#include "../core/xalloc.h"
#include "app_priv.h"

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

rd_session *binding_session_of(const ui_binding *b, const char *name)
{
    if (b->fleet) {
        int i = sessions_find(b->fleet, name);
        return i < 0 ? NULL : sessions_at(b->fleet, (size_t)i);
    }
    const rd_system_cfg *sys = session_system(b->session);
    return sys && name && strcmp(sys->name, name) == 0 ? b->session : NULL;
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
void binding_interest(ui_binding *b, ui_view_id cur)
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

/* In the fleet: the system `name` (the first when none is) becomes the one open; its
 * session. */
rd_session *binding_choose(ui_binding *b, const char *name)
{
    int i = sessions_find(b->fleet, name);
    b->fleet_cur = i < 0 ? 0 : i;
    return sessions_at(b->fleet, (size_t)b->fleet_cur);
}

bool binding_is_current(const ui_binding *b, size_t i)
{
    return (int)i == b->fleet_cur;
}

void binding_set_fleet(ui_binding *b, rd_sessions *fleet)
{
    sessions_free(b->fleet);
    b->fleet = fleet;
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

