#pragma once
/*
 * The console's batches (batches.c), issue 35: the runs it sends (batchruns.h) and every
 * batch record of every system, read off the loop (bgjob.h), for the :batches view
 * (view_batches.c) and the progress dialog's keys. Resume, pause, abort, rate and window
 * go through the batch engine (actions/batchrun.h) and are recorded in the batch's record
 * (batchrec_control), so a resume anywhere goes on from them.
 */
#include <stdbool.h>
#include <stddef.h>

#include "batchruns.h"

typedef struct ui_app ui_app;
typedef struct ui_batches_st ui_batches_st;

/* Set up with the loop (NULL headless) and torn down before the sessions: every run is
 * freed (what is in flight is journaled unknown; the rest stays open, resumable). */
void batches_setup(ui_app *app);
void batches_stop(ui_app *app);
ui_runs *app_runs(const ui_app *app);
/* FX_BATCH: op (BATCH_OP_*) on batch id. */
void batches_effect(ui_app *app, int op, const char *id);
/* Before a paint of :batches: the rows (disk as last read, runs live) into ctx.batches. */
void batches_rows(ui_app *app);
/* A run's pace changed by a key (the dialog's + - < >): at once, and recorded. */
void batches_pace(ui_app *app, ui_run *r, int op);
/* The count typed for a resume of `id` (PROMPT_TYPED): sent when it is `want`. */
void batches_typed(ui_app *app, const char *id, const char *typed, size_t want);
/* The system's session closes: its runs stop (in flight: unknown). */
void batches_drop_system(ui_app *app, const char *system);
/* "2 batches running (f188… on attune, …)" for the quit question; "" when none. */
void batches_running_text(ui_app *app, char *out, size_t cap);
