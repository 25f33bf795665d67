/* The dialog's runner: sends the confirmed targets as a batch, follows its results, aborts
 * and re-sends (dlgrun.h); and the dialog's end (dialog_close, dialog_busy,
 * dialog_in_background, dialog_after_action), which the whole-set retry (setretry.c) and
 * the drivers above call. The drawing and the keys are dialog.c's, above it. */
#include "dlgrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "app_priv.h"

bool dlgrun_can_start(ui_app *app, rd_action kind)
{
    char why[256] = "";
    if (!app_actor(app) && !app->headless) {   /* headless screen tests show the dialog only */
        ctx_msg(&app->ctx, true, "%s: no core API for this system", action_name(kind));
        return false;
    }
    if (app_actor(app) && !actor_can_act(app_actor(app), why, sizeof why)) {
        ctx_msg(&app->ctx, true, "cannot %s: %s", action_name(kind), why);
        return false;
    }
    if (app_actor(app) && !actor_supports(app_actor(app), kind)) {
        ctx_msg(&app->ctx, true, "this system's profile has no '%s' action", action_name(kind));
        return false;
    }
    return true;
}

void dlgrun_free(ui_dialog *d)
{
    if (d->resent)
        for (size_t i = 0; i < d->sel.n; i++)
            if (d->resent[i])
                batch_free(d->resent[i]);
    free(d->resent);
    d->resent = NULL;
    if (d->batch)
        batch_free(d->batch);
    d->batch = NULL;
}

/* The guard's kind of target i: a retry's by its eligibility and loop count (guard.h);
 * other actions have no eligibility. */
rd_guard_kind dlgrun_item_kind(const ui_dialog *d, size_t i)
{
    if (d->kind != RD_ACT_RETRY)
        return GUARD_SEND;
    rd_guard_item it = sel_guard_item(&d->sel, i);
    return guard_kind(&it);
}

/* The result shown for item i: its latest deliberate re-send, else the batch's. */
const rd_result *dlgrun_result(const ui_dialog *d, size_t i)
{
    if (d->resent && d->resent[i])
        return batch_result(d->resent[i], 0);
    return batch_result(d->batch, i);
}

static bool resends_running(const ui_dialog *d)
{
    for (size_t i = 0; d->resent && i < d->sel.n; i++)
        if (d->resent[i] && !batch_done(d->resent[i]))
            return true;
    return false;
}

bool dlgrun_maybe_applied(const ui_dialog *d)
{
    if (!d->batch || !batch_done(d->batch))
        return false;
    for (size_t i = 0; i < batch_count(d->batch); i++)
        if (dlgrun_result(d, i)->code == RD_RES_MAYBE_APPLIED)
            return true;
    return false;
}

static void on_item(rd_batch *b, size_t index, const rd_result *r, void *ud)
{
    ui_app *app = ud;
    (void)r;
    if (b == app->dlg.batch && !app->dlg.moved)   /* follow the newest result */
        app->dlg.cur = (int)index;
    app_request_paint(app);
}

/* After a batch or a re-send: the journal (the loop breaker knows these retries from now
 * on), the core's state, and the data it changed: the sources and the retry chain on
 * screen (a retry adds an attempt to it). */
void dialog_after_action(ui_app *app, const char *what, bool failed)
{
    app_journal_reload(app);
    model_core_action(app_model(app), what, failed, clock_wall());
    session_core_probe(app_live(app));
    app_request_paint(app);
    if (!app_sources(app))
        return;
    session_refresh(app_live(app));
    if (app_model(app) && app_model(app)->chain_id)
        session_request_chain(app_live(app), app_model(app)->chain_id);
}

/* The store's DLQ entries the batch resolved leave the list at once. */
static void resolved_gone(ui_app *app, rd_batch *b)
{
    if (batch_action(b) != RD_ACT_RESOLVE)
        return;
    size_t n = 0;
    for (size_t i = 0; i < batch_count(b); i++) {
        const rd_result *r = batch_result(b, i);
        if (r && r->code == RD_RES_OK) {
            app_dlq_resolved(app, r->id);
            n++;
        }
    }
    if (n)
        app_dlq_reread(app);
}

static void on_done(rd_batch *b, void *ud)
{
    ui_app *app = ud;
    ui_dialog *d = &app->dlg;
    resolved_gone(app, b);
    char msg[160];
    snprintf(msg, sizeof msg, "%s: %zu of %zu succeeded", action_name(batch_action(b)), batch_succeeded(b),
             batch_count(b));
    ctx_msg(&app->ctx, batch_succeeded(b) != batch_count(b), "%s", msg);
    if (b == d->batch && !d->moved)   /* land on the first item that may need a re-send */
        for (size_t i = 0; i < batch_count(b); i++)
            if (batch_result(b, i)->code == RD_RES_MAYBE_APPLIED) {
                d->cur = (int)i;
                break;
            }
    dialog_after_action(app, msg, batch_succeeded(b) != batch_count(b));
}

static void on_resend_done(rd_batch *b, void *ud)
{
    ui_app *app = ud;
    const rd_result *r = batch_result(b, 0);
    resolved_gone(app, b);
    ctx_msg(&app->ctx, r->code != RD_RES_OK, "re-sent %s of %s (key %.8s): %s%s", action_name(r->action), r->id,
            r->idem_key, result_code_name(r->code), r->replayed ? " (the core answered from its idempotency cache)" : "");
    char what[160];
    snprintf(what, sizeof what, "re-sent %s of %.60s: %s", action_name(r->action), r->id, result_code_name(r->code));
    dialog_after_action(app, what, r->code != RD_RES_OK);
}

/* The operator confirmed the re-send of item d->cur: the SAME Idempotency-Key. */
void dlgrun_resend(ui_app *app)
{
    ui_dialog *d = &app->dlg;
    d->state = DLG_PROGRESS;
    size_t i = (size_t)d->cur;
    const rd_result *prev = dlgrun_result(d, i);
    if (!app_actor(app) || prev->code != RD_RES_MAYBE_APPLIED)
        return;
    static const rd_batch_cbs cbs = {on_item, on_resend_done};
    char why[256] = "";
    rd_batch *b = actor_resend(app_actor(app), prev, NULL, &cbs, app, why, sizeof why);
    if (!b) {
        ctx_msg(&app->ctx, true, "re-send refused: %s", why);
        return;
    }
    if (!d->resent)
        d->resent = xcalloc(d->sel.n, sizeof *d->resent);
    if (d->resent[i])   /* the earlier re-send is done (it was maybe_applied) */
        batch_free(d->resent[i]);
    d->resent[i] = b;
    ctx_msg(&app->ctx, false, "re-sending %s (key %.8s) ...", batch_result(b, 0)->id, batch_result(b, 0)->idem_key);
}

void dlgrun_start(ui_app *app)
{
    ui_dialog *d = &app->dlg;
    if (!app_actor(app)) {
        ctx_msg(&app->ctx, true, "%s: no core API in headless mode: nothing was sent", action_name(d->kind));
        dialog_close(app);
        return;
    }
    rd_target *t = xcalloc(d->sel.n ? d->sel.n : 1, sizeof *t);
    size_t n = 0;
    d->skipped = 0;
    for (size_t i = 0; i < d->sel.n; i++) {
        rd_guard_kind k = dlgrun_item_kind(d, i);
        if (!guard_sends(k, d->override)) {   /* the guard: not without the override */
            d->skipped++;
            continue;
        }
        t[n].id = d->sel.ids[i];
        t[n].parent = d->sel.parents[i];
        t[n].label = d->sel.labels[i];
        if (d->kind == RD_ACT_RETRY) {
            t[n].fp = d->sel.fps[i][0] ? d->sel.fps[i] : NULL;
            t[n].attempt = d->sel.attempts[i];
            t[n].override_ = guard_override_name(k);
        }
        n++;
    }
    static const rd_batch_cbs cbs = {on_item, on_done};
    char why[256] = "";
    if (d->sel.group || n > 1)   /* one batch id on every line of its items */
        d->batch = actor_run_batch(app_actor(app), d->kind, t, n, NULL, &cbs, app, why, sizeof why);
    else
        d->batch = actor_run(app_actor(app), d->kind, t, n, NULL, &cbs, app, why, sizeof why);
    free(t);
    if (!d->batch) {
        ctx_msg(&app->ctx, true, "refused: %s", why);
        dialog_close(app);
        return;
    }
    d->state = DLG_PROGRESS;
    d->scroll = 0;
    d->cur = 0;
    d->moved = false;
    if (d->kind == RD_ACT_DRAIN && d->sel.n == 1 && app->cur != VIEW_DRAIN)
        app_open_view(app, VIEW_DRAIN, d->sel.ids[0], true);   /* follow it until empty */
}

bool dlgrun_resent(const ui_dialog *d, size_t i)
{
    return d->resent && d->resent[i];
}

bool dlgrun_busy(const ui_dialog *d)
{
    return d->batch && (!batch_done(d->batch) || resends_running(d));
}

bool dlgrun_finished(const ui_dialog *d)
{
    return d->batch && batch_done(d->batch) && !resends_running(d);
}

size_t dlgrun_count(const ui_dialog *d)
{
    return d->batch ? batch_count(d->batch) : 0;
}

void dlgrun_progress(const ui_dialog *d, dlg_progress *p)
{
    const rd_batch *b = d->batch;
    *p = (dlg_progress){.n = batch_count(b), .fin = batch_finished(b), .ok = batch_succeeded(b),
                        .done = batch_done(b), .batch_id = batch_id(b)};
}

bool dlgrun_abort(ui_dialog *d)
{
    if (!d->batch || batch_done(d->batch))
        return false;
    batch_abort(d->batch);
    d->aborted = true;
    return true;
}

/* R on a result row: only a maybe_applied item, only once the batch is done, never
 * automatically; the operator confirms first. */
void dlgrun_ask_resend(ui_app *app)
{
    ui_dialog *d = &app->dlg;
    if (!d->batch || !batch_done(d->batch)) {
        ctx_msg(&app->ctx, true, "re-send: wait until the batch is done (or abort it)");
        return;
    }
    const rd_result *r = dlgrun_result(d, (size_t)d->cur);
    if (d->resent && d->resent[d->cur] && !batch_done(d->resent[d->cur]))
        ctx_msg(&app->ctx, true, "re-send of %s is still running", r->id);
    else if (r->code != RD_RES_MAYBE_APPLIED)
        ctx_msg(&app->ctx, true, "only a maybe_applied item can be re-sent (%s is %s)", r->id,
                result_code_name(r->code));
    else
        d->state = DLG_RESEND;
}

/* ---- the dialog's end (dialog.h): below the drawing, setretry.c and the drivers ---- */

void dialog_close(ui_app *app)
{
    ui_dialog *d = &app->dlg;
    dlgrun_free(d);
    if (d->set)   /* through the ops setretry.c gave with it: it is above this file */
        d->set_ops->free(d->set);
    sel_clear(&d->sel);
    memset(d, 0, sizeof *d);
}

bool dialog_busy(const ui_app *app)
{
    const ui_dialog *d = &app->dlg;
    return dlgrun_busy(d) || (d->set && d->set_ops->busy(d->set));
}

bool dialog_in_background(ui_app *app, const char *what)
{
    ui_dialog *d = &app->dlg;
    if (d->state == DLG_NONE || !d->hidden)
        return false;
    if (!dialog_busy(app) || (d->set && !d->set_ops->selecting(d->set))) {
        /* done, or a whole-set batch sending: its run is the console's (batchruns.h) and
         * goes on without the dialog (:batches shows it) */
        dialog_close(app);
        return false;
    }
    char abort_key[32] = "x";
    keymap_first(app->km, UA_ABORT, abort_key, sizeof abort_key);
    ctx_msg(&app->ctx, true, "%s: the %s batch is still running (:batch shows it, %s there aborts it)", what,
            action_name(d->kind), abort_key);
    return true;
}
