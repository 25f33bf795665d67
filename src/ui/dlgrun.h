#pragma once
/*
 * The dialog's runner (dlgrun.c): what drives an action dialog's batch. It sends the
 * confirmed targets (actor_run_batch, the guard leaving out what it holds back), follows
 * the results, aborts, sends the operator's deliberate re-sends, and answers for the
 * progress. dialog.c draws the dialog and reads keys, and reaches the batch only here.
 */
#include <stdbool.h>
#include <stddef.h>

#include "dialog.h"

typedef struct dlg_progress {
    size_t n, fin, ok;         /* items, finished, succeeded */
    bool done;
    const char *batch_id;      /* "" when the batch has none (a single target) */
} dlg_progress;

/* The system can take `kind` now (an actor that can act and has it), else a message and
 * false. Headless screen tests have no actor and may show the dialog. */
bool dlgrun_can_start(ui_app *app, rd_action kind);
rd_guard_kind dlgrun_item_kind(const ui_dialog *d, size_t i);   /* the guard's, for item i */
void dlgrun_start(ui_app *app);   /* the confirmed selection, sent: DLG_PROGRESS (or closed) */
bool dlgrun_abort(ui_dialog *d);  /* a running batch told to stop: true */
void dlgrun_ask_resend(ui_app *app);   /* R on item cur: DLG_RESEND when it may be re-sent */
void dlgrun_resend(ui_app *app);  /* the re-send confirmed: the SAME Idempotency-Key */
void dlgrun_free(ui_dialog *d);   /* the batch and the re-sends */

bool dlgrun_busy(const ui_dialog *d);        /* requests still running */
bool dlgrun_finished(const ui_dialog *d);    /* a batch, done, no re-send running */
bool dlgrun_maybe_applied(const ui_dialog *d);   /* done, and an item may need a re-send */
size_t dlgrun_count(const ui_dialog *d);     /* the batch's items, 0 without one */
void dlgrun_progress(const ui_dialog *d, dlg_progress *p);   /* d has a batch */
const rd_result *dlgrun_result(const ui_dialog *d, size_t i);   /* the latest re-send's, else the batch's */
bool dlgrun_resent(const ui_dialog *d, size_t i);
