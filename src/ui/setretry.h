#pragma once
/*
 * The console's whole-set retry (setretry.c): `r` on a store error group (the whole group
 * in the view's window) and `R` / `:retry-all [DUR]` in the executions view (everything
 * its filter matches, every page). The selection is made by the store when asked, off the
 * loop: a child `redrive retry --select-only ...` (cli/act_select.c) reads the pages,
 * judges each execution by the system's rule and the loop breaker (core/guard.h) and
 * stages a batch record (actions/batchrec.h) while the dialog shows "selecting: N read";
 * escape kills it and nothing is sent. Then the same confirmation as every retry path
 * (dialog.c: the breakdown first, the typed count above confirm_over), and the run: the
 * staged record is adopted (a resumable batch from then on, `redrive batch list`) and sent
 * part by part (actions/batchrun.h) at the rate limit, with a progress bar, ETA and abort.
 * The console holds the counts and a few lines, never the selection: memory is flat.
 */
#include <stdbool.h>
#include <stddef.h>

#include "keymap.h"
#include "view.h"

typedef struct ui_app ui_app;
typedef struct ui_setretry ui_setretry;

/* From FX_RETRY_SET: text "group:FP" (arg: the window in seconds) or "filter" (the
 * executions view's filter; arg: a window in seconds, 0 none). Opens the dialog in its
 * selecting state, or says on the status line why not. */
void setretry_begin(ui_app *app, int window_s, const char *what);
/* From FX_DLQ_SET: the store's DLQ entries as a set (cli/act_dlq.c): kind retry (their
 * executions, guarded) or resolve (the entries, the core's DLQ update); what "reason:R",
 * "queue:Q" (a group of the DLQ view) or "filter" (the DLQ view's search). The same dialog. */
void setretry_begin_dlq(ui_app *app, rd_action kind, const char *what);
/* Keys while selecting (cancel/abort: stop, nothing sent) and while running (abort). */
void setretry_key(ui_app *app, ui_action a);
/* After the confirmation (and the typed count): adopt the record and send it. */
void setretry_run(ui_app *app);
/* The dialog's lines for its state: selecting, the confirmation's head (title, selection,
 * record), the confirmation's held-back examples, or the run's progress. */
typedef void (*setretry_add)(void *ud, int slot, char *line);   /* line: allocated, taken */
void setretry_lines(ui_app *app, setretry_add add, void *ud);
void setretry_held_lines(ui_app *app, setretry_add add, void *ud);
/* The confirmation's canary offer and breaker (dlg_canary.h), and its raw keys (`c`
 * changes the canary's size): true when the key was taken. */
void setretry_canary_lines(ui_app *app, setretry_add add, void *ud);
bool setretry_raw_key(ui_app *app, ui_key k);
/* Still selecting or sending: keep repainting. */
bool setretry_busy(const ui_setretry *s);
bool setretry_running(const ui_setretry *s);   /* sending (not done) */
bool setretry_selecting(const ui_setretry *s); /* its selecting child still runs */
void setretry_counts(const ui_setretry *s, size_t *finished, size_t *todo, size_t *ok);
/* Stops the child (its staged record removed unless adopted). Its run is the console's
 * (batchruns.h): it goes on after the dialog closes, until done, paused or aborted. */
void setretry_free(ui_setretry *s);
