#pragma once
/* The last-known snapshot of the system on screen (lastknown.c, session/snapcache.h):
 * shown (marked stale) at start before the system is opened, replaced by live data,
 * written back after refreshes and at the end. Owned by the binding (binding.c). */
#include <stdbool.h>
#include <stddef.h>

#include "../core/config.h"
#include "../core/model.h"
#include "../session/session.h"
#include "view.h"

typedef struct ui_lastknown ui_lastknown;

ui_lastknown *lastknown_new(void);
void lastknown_free(ui_lastknown *lk);
/* Loads the cache of system `name` of cfg's config into live's (still empty) model;
 * true when there is something new to paint. */
bool lastknown_open(ui_lastknown *lk, rd_session *cfg, rd_session *live, const char *name, ui_ctx *ctx);
/* After a model update of sys (polled: has_sources) */
void lastknown_update(ui_lastknown *lk, const rd_system_cfg *sys, rd_model *m, bool has_sources, ui_ctx *ctx);
void lastknown_close(ui_lastknown *lk, const rd_system_cfg *sys, rd_model *m, ui_ctx *ctx);
double lastknown_at(const ui_lastknown *lk);   /* epoch of the cached data on screen; 0: live data */
void lastknown_label(const ui_lastknown *lk, char *out, size_t cap);
