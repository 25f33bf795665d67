#pragma once
/* Confirmation and progress dialogs for actions: dialog.c draws them and reads keys,
 * dlgrun.c (dlgrun.h) drives their batch and ends them. */
#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

#include "../actions/actions.h"
#include "../core/guard.h"
#include "view.h"

typedef struct ui_app ui_app;

/* DLG_RESEND: "re-send item cur with the same Idempotency-Key?" over the results;
 * DLG_TYPE: a bulk action above confirm_over: the operator types the count (raw keys);
 * DLG_SELECT: a whole-set retry's selection is being made by the store (setretry.h) */
typedef enum { DLG_NONE, DLG_CONFIRM, DLG_PROGRESS, DLG_RESEND, DLG_TYPE, DLG_SELECT } dlg_state;

typedef struct ui_setretry ui_setretry;
/* What the dialog's end (dlgrun.c, below setretry.c) asks of a whole-set retry: the ops
 * setretry.c gives with the set. */
typedef struct ui_setretry_ops {
    bool (*busy)(const ui_setretry *s);
    bool (*selecting)(const ui_setretry *s);   /* its selecting child still runs */
    void (*free)(ui_setretry *s);
} ui_setretry_ops;

typedef struct ui_dialog {
    dlg_state state;
    rd_action kind;
    ui_sel sel;                /* the frozen selection (owned) */
    rd_batch *batch;
    rd_batch **resent;         /* per item: the latest deliberate re-send or NULL (owned) */
    int cur;                   /* the selected result row */
    bool moved;                /* the operator moved cur (else it follows the results) */
    int scroll;
    bool aborted;
    bool override;             /* the operator overrode the guard (O): ineligible and loop retries too */
    rd_guard_counts counts;    /* the guard's breakdown of sel (guard.h), counted when it opens */
    size_t want;               /* DLG_TYPE: the count to type */
    char typed[24];            /* DLG_TYPE: what was typed so far */
    size_t typed_len;
    size_t skipped;            /* targets the guard left out of the batch */
    ui_setretry *set;          /* a whole-set retry (setretry.h, owned): no sel, no batch */
    const ui_setretry_ops *set_ops;   /* set's busy and free (setretry.c's) */
    bool hidden;               /* a running batch put away (escape): the views take the keys,
                                  the status line shows its progress, :batch shows it again */
} ui_dialog;

void dialog_start(ui_app *app, rd_action kind);
/* The same without the confirmation: sent at once (undrain from the drain cockpit). */
void dialog_start_now(ui_app *app, rd_action kind);
unsigned dialog_key(ui_app *app, ui_action a);
void dialog_draw(ui_app *app, WINDOW *w);
bool dialog_modal(const ui_app *app);  /* a dialog on screen: it takes the keys */
void dialog_show(ui_app *app);         /* :batch: the batch put away, on screen again */
/* The status line's text for a batch put away ("" when none). */
void dialog_status(const ui_app *app, char *out, size_t cap);
bool dialog_nav(ui_action a);          /* movement keys a dialog also takes */
bool dialog_offers_resend(const ui_app *app);   /* a maybe_applied result is shown */
void dialog_type_key(ui_app *app, ui_key k);   /* DLG_TYPE: digits, backspace, enter, escape */
size_t dialog_held(const ui_app *app);          /* targets the confirmation sends only overridden */

/* The dialog's end (dlgrun.c, below dialog.c and setretry.c) */
void dialog_close(ui_app *app);
bool dialog_busy(const ui_app *app);   /* requests still running: keep repainting */
/* A batch put away: while it runs, `what` (a new action, a system switch, quitting) is
 * refused with a message and true; once done it is closed (its results are in the journal)
 * and false. A whole-set batch (a record) never holds the console: put away while it
 * sends, the dialog closes and the run goes on (batchruns.h, :batches); false. */
bool dialog_in_background(ui_app *app, const char *what);
/* After an action: the journal, the core's state, the sources and the chain read again. */
void dialog_after_action(ui_app *app, const char *what, bool failed);
