#pragma once
/* The console's app context (app_ctx.c, at the bottom of the console's files) as the rest
 * of ui sees it: an opaque ui_app and the few things asked of it. The files that own a
 * part of it and those that draw over it see its fields through app_priv.h. Views never
 * see it: they get a ui_ctx; the whole-set retry (setretry.c) gets the parts it works on
 * through the accessors here. */
#include <stdbool.h>
#include "../io/loop.h"

#include "view.h"   /* ui_view_id, and through it config.h, model.h, actions.h */

typedef struct ui_app ui_app;
typedef struct ui_dialog ui_dialog;
typedef struct rd_session rd_session;
typedef struct rd_sources rd_sources;

/* app_ctx.c */
double app_now(const ui_app *app);
void app_set_now(ui_app *app, double now);   /* the clock from here on (tests: REDRIVE_NOW) */
/* The system on screen and its parts (binding.c holds them; NULL when none) */
rd_system_cfg *app_sys(const ui_app *app);
rd_model *app_model(const ui_app *app);
rd_sources *app_sources(const ui_app *app);
rd_actor *app_actor(const ui_app *app);
rd_session *app_live(const ui_app *app);   /* its session (in the fleet: the current system's) */
bool app_quitting(const ui_app *app);
ui_ctx *app_ctx(ui_app *app);                  /* what the views are handed */
ui_dialog *app_dialog(ui_app *app);            /* the dialog on screen (dialog.h) */
rd_loop *app_base(const ui_app *app);   /* the loop; NULL headless */
const char *app_config_path(const ui_app *app);   /* --config, NULL: the default */
void app_open_view(ui_app *app, ui_view_id id, const char *arg, bool push);
void app_back(ui_app *app);
void app_journal_reload(ui_app *app);   /* the journal tail and this system's manual retries */
/* Entry id of the open system's store DLQ was resolved: gone from the list at once and a
 * second resolve refused (ctx.dlq_resolved); app_dlq_reread then reads the store's page
 * again (once for a whole batch). */
void app_dlq_resolved(ui_app *app, const char *id);
void app_dlq_reread(ui_app *app);
void app_load_theme(ui_app *app, const char *name);
void app_load_keymap(ui_app *app, const char *name);
void app_request_paint(ui_app *app);         /* from callbacks: repaint soon (no-op headless) */
void app_source_changed(void *ud);           /* a source's on_change: last-known + repaint soon */

/* app_cmd.c: command mode and the views' effects */
void app_effects(ui_app *app);
void app_command(ui_app *app, const char *line);

/* paint.c */
void app_paint(ui_app *app);                 /* paint now (the loop's; headless paints frames) */
