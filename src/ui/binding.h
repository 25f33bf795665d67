#pragma once
/* The console's binding to the systems it shows (binding.c): the session (the config
 * and, with one system, the open system), the fleet (more than one system: one session
 * each), the system on screen with its model, sources and actor (borrowed from its
 * session), the fleet view's rows and the last-known snapshot. Opaque: the rest of the
 * console reads it through these functions. binding_open.c, above it, opens, switches
 * and closes systems. */
#include <stdbool.h>
#include <stddef.h>

#include "../actions/actions.h"
#include "../core/config.h"
#include "../core/model.h"
#include "../session/session.h"
#include "../session/sessions.h"
#include "lastknown.h"
#include "view.h"

typedef struct ui_binding ui_binding;
typedef struct ui_app ui_app;

ui_binding *binding_new(const rd_opts *opts);
void binding_free(ui_binding *b);
rd_session *binding_session(const ui_binding *b);   /* the config's (and one system's) */
rd_sessions *binding_fleet(const ui_binding *b);    /* NULL: one system */
rd_session *binding_live(const ui_binding *b);      /* the session on screen (in the fleet: its current system) */
rd_system_cfg *binding_sys(const ui_binding *b);    /* NULL when none */
rd_model *binding_model(const ui_binding *b);
rd_sources *binding_sources(const ui_binding *b);   /* NULL: a fixed model */
rd_actor *binding_actor(const ui_binding *b);
ui_lastknown *binding_cache(const ui_binding *b);
/* The open session of the system called name (in the fleet any of them; else the one open),
 * NULL when none: a batch of that system runs on its actor. */
rd_session *binding_session_of(const ui_binding *b, const char *name);
/* The drain cockpit's execution timeout: the config's, else the profile's; 0 unknown. */
double binding_exec_timeout(const ui_binding *b);
/* Before painting the fleet view: its rows (n of them; NULL without a fleet). */
const rd_fleet_row *binding_fleet_rows(ui_binding *b, double now, size_t *n);
/* Each of those rows' system's last hour, in the same order (NULL entries: none). */
const rd_history *const *binding_fleet_hist(const ui_binding *b);
/* The view on screen: which systems poll at their own rate and which lists they poll. */
void binding_focus(ui_binding *b, ui_view_id cur);
void binding_interest(ui_binding *b, ui_view_id cur);   /* the lists alone */
/* The fleet (owned; NULL: none), the one before freed. */
void binding_set_fleet(ui_binding *b, rd_sessions *fleet);
/* In the fleet: the system `name` (the first when none is) opens; its session. */
rd_session *binding_choose(ui_binding *b, const char *name);
bool binding_is_current(const ui_binding *b, size_t i);   /* the fleet's system i is open */

/* With the console's context (binding.c) */
void binding_bind(ui_app *app);                           /* the borrowed parts, refreshed */
void binding_preview(ui_app *app, const char *name);      /* the top bar names it before it opens */
void binding_source_changed(ui_app *app);                /* the last-known snapshot follows */

/* Opening and switching systems, with the console around them (views, theme, dialogs):
 * binding_open.c */
void binding_start_fleet(ui_app *app, bool live);
void binding_start_system(ui_app *app, const char *name);
bool binding_switch(ui_app *app, const char *name);
void binding_teardown(ui_app *app);                      /* close the system on screen */
void binding_stop(ui_app *app);                          /* the end: every system closed */
