#pragma once
/*
 * The canary and the breaker of the console's whole-set retry (dlg_canary.c, issue 35),
 * as the CLI's (cli/batch_run.c) with the same words and the same paused line:
 *
 *   - the confirmation offers a canary for a set over CANARY_OVER items: N sent first
 *     (batch_canary, else 10; `c` changes it, 0 skips it), their outcome waited for in the
 *     store (batch_canary_wait, 5 min), the rest only if the share failing again is at most
 *     batch_max_refail (50 %);
 *   - the breaker through the whole batch: once BOUT_BREAKER_MIN outcomes are in and more
 *     than batch_max_refail fail again, the rest is not sent.
 * Either pauses the batch with the reason (the paused control line, batchrec_control, as
 * the CLI's and the :batches P: `redrive batch show` and resume
 * see it). The outcome is read off the loop: a child `redrive batch show ID --json` every
 * WATCH_EVERY_S (io/proc.c), its first line (the summary) parsed; never a store query on
 * the loop. The confirmation dialog (setretry.c) makes it; the console's run (batchruns.c)
 * takes it when the batch starts and is told what to do through the callbacks, so the
 * canary's wait and the breaker go on when the dialog is closed; the dialog only shows
 * their state (dlgcan_run_lines).
 */
#include <stdbool.h>
#include <stddef.h>

#include "keymap.h"

typedef struct ui_app ui_app;
typedef struct ui_canary ui_canary;

enum { CANARY_OVER = 100 };

typedef struct dlgcan_cbs {
    void (*go)(void *ud);                       /* the canary passed: send the rest */
    void (*stop)(void *ud, const char *reason); /* pause the batch (canary or breaker) */
} dlgcan_cbs;

/* A set of `send` retries about to be confirmed (retry: kind is a retry). cbs may be NULL
 * until its run binds them (dlgcan_bind, before dlgcan_sending). */
ui_canary *dlgcan_new(ui_app *app, size_t send, bool retry, const dlgcan_cbs *cbs, void *ud);
void dlgcan_bind(ui_canary *c, const dlgcan_cbs *cbs, void *ud);
void dlgcan_free(ui_canary *c);
/* Raw keys at the confirmation: `c` edits the canary's size (digits, Enter, Escape). */
bool dlgcan_key(ui_canary *c, ui_key k);
bool dlgcan_editing(const ui_canary *c);
size_t dlgcan_size(const ui_canary *c);   /* items sent first, 0: none */
/* The run: the canary's part sent (limit dlgcan_size) or, without one, the whole batch. */
void dlgcan_sending(ui_canary *c, const char *batch_id);
/* The canary's part is done (sent: of its items, how many have a result): wait for their
 * outcome, then go or stop. */
void dlgcan_wait(ui_canary *c, size_t sent);
bool dlgcan_waiting(const ui_canary *c);
/* The rest is sent: the breaker watches. */
void dlgcan_rest(ui_canary *c);
/* The run ended (done, aborted): no more watching. */
void dlgcan_end(ui_canary *c);
/* The dialog's lines: at the confirmation (the offer, the breaker) and while it runs. */
typedef void (*dlgcan_add)(void *ud, int slot, char *line);   /* line: allocated, taken */
void dlgcan_confirm_lines(const ui_canary *c, dlgcan_add add, void *ud);
void dlgcan_run_lines(const ui_canary *c, dlgcan_add add, void *ud);
