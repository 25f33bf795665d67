/* Confirmation and progress dialogs for actions, drawn, and their keys (the batch is driven
 * by dlgrun.c, which also closes the dialog; a whole-set retry by setretry.c; both below
 * this file): the exact targets (a frozen selection),
 * a breakdown by error fingerprint, in-flight work and warnings, then per-item results
 * with an abort key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "app_priv.h"
#include "batches.h"
#include "dialog.h"
#include "dlgrun.h"
#include "draw.h"
#include "setretry.h"

enum { FP_GROUPS = 6 };

static void sel_copy(ui_sel *dst, const ui_sel *src)
{
    sel_clear(dst);
    for (size_t i = 0; i < src->n; i++)
        sel_add_from(dst, src, i);
    dst->notes = xstrdup(src->notes);
    dst->group = src->group;
}

/* The breakdown of the frozen selection, once when the dialog opens. */
static void dialog_count(ui_dialog *d)
{
    d->counts = (rd_guard_counts){.total = d->sel.n, .eligible = d->sel.n, .send = d->sel.n};
    if (d->kind != RD_ACT_RETRY)
        return;
    rd_guard_item *items = xcalloc(d->sel.n ? d->sel.n : 1, sizeof *items);
    for (size_t i = 0; i < d->sel.n; i++)
        items[i] = sel_guard_item(&d->sel, i);
    d->counts = guard_count(items, d->sel.n);
    free(items);
}

size_t dialog_held(const ui_app *app)
{
    return app->dlg.counts.total - app->dlg.counts.send;
}

/* What a confirmation would send: the eligible targets, every target when overridden. */
static size_t to_send(const ui_app *app, bool override)
{
    return override ? app->dlg.sel.n : app->dlg.counts.send;
}

/* Over confirm_over (or sending an ineligible target by override): type the count. */
static bool typed_count(const ui_app *app, size_t n, bool override)
{
    int over = app_sys(app) ? app_sys(app)->ui.confirm_over : 10;
    return (n > 1 && n > (size_t)(over < 0 ? 0 : over)) || (override && app->dlg.counts.ineligible);
}

bool dialog_modal(const ui_app *app)
{
    return app->dlg.state != DLG_NONE && !app->dlg.hidden;
}

void dialog_show(ui_app *app)
{
    if (app->dlg.state == DLG_NONE && runs_count(app_runs(app))) {
        app_open_view(app, VIEW_BATCHES, NULL, true);   /* the console's batches: there */
        return;
    }
    if (app->dlg.state == DLG_NONE)
        ctx_msg(&app->ctx, false, "no batch: nothing was put away");
    app->dlg.hidden = false;
}

/* Escape on a running batch: the views take the keys again. */
static void dialog_hide(ui_app *app)
{
    app->dlg.hidden = true;
    ctx_msg(&app->ctx, false, "the %s batch goes on in the background: :batch shows it", action_name(app->dlg.kind));
}

void dialog_status(const ui_app *app, char *out, size_t cap)
{
    const ui_dialog *d = &app->dlg;
    out[0] = 0;
    if (d->state == DLG_NONE) {   /* batches sending without a dialog: the first named */
        ui_runs *rs = app_runs(app);
        for (size_t i = 0; i < runs_count(rs); i++) {
            ui_run_info in;
            runs_info(runs_at(rs, i), &in);
            if (!in.running)
                continue;
            size_t n = runs_running(rs);
            snprintf(out, cap, "%s batch %.8s on %s: %zu/%zu done, %zu ok, %zu failed ...%s  (:batches)",
                     action_name(in.kind), in.id, in.system, in.finished, in.todo, in.ok, in.finished - in.ok,
                     n > 1 ? " (and more)" : "");
            return;
        }
        return;
    }
    if (!d->hidden)
        return;
    size_t fin, todo, ok;
    if (d->set)
        setretry_counts(d->set, &fin, &todo, &ok);
    else {
        dlg_progress p;
        dlgrun_progress(d, &p);
        fin = p.fin;
        todo = p.n;
        ok = p.ok;
    }
    snprintf(out, cap, "%s batch: %zu/%zu done, %zu ok, %zu failed%s  (:batch)", action_name(d->kind), fin, todo, ok,
             fin - ok, dialog_busy(app) ? " ..." : "");
}

/* The confirmed selection sent: a whole-set retry's run (setretry.c), else the batch
 * (dlgrun.c). */
static void dialog_run(ui_app *app)
{
    if (app->dlg.set)
        setretry_run(app);
    else
        dlgrun_start(app);
}

void dialog_start(ui_app *app, rd_action kind)
{
    ui_ctx *c = &app->ctx;
    if (c->read_only) {
        ctx_msg(c, true, "read-only: %s is disabled", action_name(kind));
        return;
    }
    if (dialog_in_background(app, action_name(kind)))
        return;
    if (!dlgrun_can_start(app, kind))
        return;
    dialog_close(app);
    app->dlg.state = DLG_CONFIRM;
    app->dlg.kind = kind;
    sel_copy(&app->dlg.sel, &c->sel);   /* frozen now: later marks or refreshes don't change it */
    dialog_count(&app->dlg);
}

void dialog_start_now(ui_app *app, rd_action kind)
{
    dialog_start(app, kind);
    if (app->dlg.state == DLG_CONFIRM && app->dlg.kind == kind)
        dialog_run(app);
}

bool dialog_offers_resend(const ui_app *app)
{
    return app->dlg.state == DLG_PROGRESS && dlgrun_maybe_applied(&app->dlg);
}

/* y (override=false) or O (true): nothing to send, a typed count, or run now. */
static void dialog_confirm(ui_app *app, bool override)
{
    ui_dialog *d = &app->dlg;
    size_t n = to_send(app, override);
    char ky[48] = "y", ko[48] = "O";
    keymap_first(app->km, UA_CONFIRM, ky, sizeof ky);
    keymap_first(app->km, UA_OVERRIDE, ko, sizeof ko);
    if (d->set && (override || !n)) {   /* the record holds the eligible ones only */
        ctx_msg(&app->ctx, !n, "%s", n ? "a whole-set retry sends the eligible ones only (the others: their rows, or "
                "redrive retry --force)" : "retry: every selected execution is held back: nothing to send");
        return;
    }
    if (override && !dialog_held(app)) {
        ctx_msg(&app->ctx, false, "every target is eligible, nothing to override: %s confirms", ky);
        return;
    }
    if (!n && !d->counts.ineligible) {
        ctx_msg(&app->ctx, true, "%s: every target is a loop retry (retried by hand, failed again the same way): "
                "override to send anyway", action_name(d->kind));
        return;
    }
    if (!n) {
        ctx_msg(&app->ctx, true, "%s: no eligible target: nothing was sent (%s sends anyway, journaled as an override)",
                action_name(d->kind), ko);
        return;
    }
    d->override = override;
    if (typed_count(app, n, override)) {
        d->state = DLG_TYPE;
        d->want = n;
        d->typed_len = 0;
        d->typed[0] = 0;
        return;
    }
    dialog_run(app);
}

void dialog_type_key(ui_app *app, ui_key k)
{
    ui_dialog *d = &app->dlg;
    app->ctx.msg[0] = 0;
    if (k == (UK_FN | KEY_ENTER) || k == '\r' || k == '\n') {
        char want[24];
        snprintf(want, sizeof want, "%zu", d->want);
        if (strcmp(d->typed, want) == 0) {
            dialog_run(app);
            return;
        }
        ctx_msg(&app->ctx, true, "typed '%s', the count is %s: nothing was sent (Escape cancels)", d->typed, want);
        d->typed_len = 0;
        d->typed[0] = 0;
    } else if (k == 27 || k == 7) {   /* escape, ctrl-g: back to the breakdown */
        d->state = DLG_CONFIRM;
        d->override = false;
        ctx_msg(&app->ctx, false, "not confirmed: nothing was sent");
    } else if (k == (UK_FN | KEY_BACKSPACE) || k == 127 || k == 8) {
        if (d->typed_len)
            d->typed[--d->typed_len] = 0;
    } else if (k >= '0' && k <= '9' && d->typed_len + 1 < sizeof d->typed) {
        d->typed[d->typed_len++] = (char)k;
        d->typed[d->typed_len] = 0;
    }
}

static void dialog_move(ui_dialog *d, ui_action a)
{
    int n = (int)dlgrun_count(d);
    if (a == UA_UP || a == UA_PAGE_UP)
        d->cur -= a == UA_UP ? 1 : 10;
    else if (a == UA_DOWN || a == UA_PAGE_DOWN)
        d->cur += a == UA_DOWN ? 1 : 10;
    else if (a == UA_TOP)
        d->cur = 0;
    else if (a == UA_BOTTOM)
        d->cur = n - 1;
    if (d->cur >= n)
        d->cur = n - 1;
    if (d->cur < 0)
        d->cur = 0;
    d->moved = true;
}

bool dialog_nav(ui_action a)
{
    return a == UA_UP || a == UA_DOWN || a == UA_PAGE_UP || a == UA_PAGE_DOWN || a == UA_TOP || a == UA_BOTTOM;
}

unsigned dialog_key(ui_app *app, ui_action a)
{
    ui_dialog *d = &app->dlg;
    if (d->set && (d->state == DLG_SELECT || d->state == DLG_PROGRESS)) {
        if (d->state == DLG_PROGRESS && a == UA_CANCEL && setretry_running(d->set))
            dialog_hide(app);
        else
            setretry_key(app, a);
        return UI_CH_REDRAW;
    }
    if (d->state == DLG_CONFIRM) {
        if (a == UA_CONFIRM || a == UA_OVERRIDE)
            dialog_confirm(app, a == UA_OVERRIDE);
        else if (a == UA_CANCEL || a == UA_ABORT) {
            ctx_msg(&app->ctx, false, "%s cancelled: nothing was sent", action_name(d->kind));
            dialog_close(app);
        }
        return UI_CH_REDRAW;
    }
    if (d->state == DLG_RESEND) {
        if (a == UA_CONFIRM)
            dlgrun_resend(app);
        else if (a == UA_CANCEL || a == UA_ABORT) {
            ctx_msg(&app->ctx, false, "not re-sent");
            d->state = DLG_PROGRESS;
        }
        return UI_CH_REDRAW;
    }
    if (dialog_nav(a))
        dialog_move(d, a);
    else if (a == UA_RESEND)
        dlgrun_ask_resend(app);
    else if (a == UA_ABORT && dlgrun_abort(d))
        ctx_msg(&app->ctx, true, "aborted: unsent items were not sent (an in-flight request may still apply)");
    else if (a == UA_CANCEL && dlgrun_finished(d))
        dialog_close(app);
    else if (a == UA_CANCEL)
        dialog_hide(app);
    return UI_CH_REDRAW;
}

/* Lines of the dialog, built fresh each paint (raw; sanitized when drawn). */
typedef struct dlines { char **l; int *slot; size_t n, cap; } dlines;

static void dl_add(dlines *d, int slot, char *line)
{
    size_t cap = d->cap;
    xgrow(&d->l, &d->cap, d->n + 1, sizeof *d->l);
    xgrow(&d->slot, &cap, d->n + 1, sizeof *d->slot);
    d->l[d->n] = line;
    d->slot[d->n++] = slot;
}

static void dl_addcb(void *ud, int slot, char *line)
{
    dl_add(ud, slot, line);
}

static void confirm_fps(const ui_sel *s, dlines *dl)
{
    const char *fp[FP_GROUPS];
    size_t cnt[FP_GROUPS], groups = 0, other = 0;
    for (size_t i = 0; i < s->n; i++) {
        size_t g = 0;
        while (g < groups && strcmp(fp[g], s->fps[i]) != 0)
            g++;
        if (g == groups && groups < FP_GROUPS) {
            fp[groups] = s->fps[i];
            cnt[groups++] = 0;
        }
        if (g < groups)
            cnt[g]++;
        else
            other++;
    }
    dl_add(dl, TS_DIALOG, xstrdup("by error fingerprint:"));
    for (size_t g = 0; g < groups; g++)
        dl_add(dl, TS_DIALOG, xasprintf("  %4zu x %s", cnt[g], fp[g][0] ? fp[g] : "(no error)"));
    if (other)
        dl_add(dl, TS_DIALOG, xasprintf("  %4zu x (other fingerprints)", other));
}

/* The guard's breakdown before a retry (guard.h): eligible / ineligible (not sent, with
 * the reason) / loop retries, the same on every path. */
static void confirm_guard(ui_app *app, dlines *dl)
{
    const ui_dialog *d = &app->dlg;
    const rd_guard_counts *c = &d->counts;
    char ko[48] = "O", line[400];
    keymap_first(app->km, UA_OVERRIDE, ko, sizeof ko);
    bool resolve = d->kind == RD_ACT_RESOLVE;   /* a DLQ set resolved: no retry, no loops */
    if (resolve)
        snprintf(line, sizeof line, "breakdown: %zu to resolve, %zu not resolvable (not sent)",
                 c->eligible, c->ineligible);
    else
        guard_breakdown(c, line, sizeof line);
    size_t held = dialog_held(app), shown = 0;
    dl_add(dl, held ? TS_DIALOG_DANGER : TS_DIALOG, xstrdup(line));
    if (d->set && held)
        setretry_held_lines(app, dl_addcb, dl);
    for (size_t i = 0; i < d->sel.n && held; i++) {
        rd_guard_item it = sel_guard_item(&d->sel, i);
        if (guard_kind(&it) == GUARD_SEND)
            continue;
        if (shown++ == 4) {
            dl_add(dl, TS_DIALOG_DANGER, xasprintf("  ... and %zu more not sent", held - 4));
            break;
        }
        guard_item_line(&it, line, sizeof line);
        dl_add(dl, TS_DIALOG_DANGER, xasprintf("  %s", line));
    }
    if (c->loops && !resolve)
        dl_add(dl, TS_DIALOG_DANGER, xstrdup(c->loops == 1 ? "loop retry: retried by hand, failed again the same way"
                                                           : "loop retries: retried by hand, failed again the same way"));
    if (held && d->set)
        dl_add(dl, TS_DIALOG_DANGER, xstrdup(resolve ? "not sent: a whole-set resolve sends the resolvable ones only"
                                                     : "not sent: a whole-set retry sends the eligible ones only"));
    else if (held)
        dl_add(dl, TS_DIALOG_DANGER, xasprintf("%s: %s (journaled as an override%s)",
                                               c->send ? "not sent unless overridden" : "sending needs the override",
                                               ko, c->ineligible ? "; type the count" : ""));
    size_t n = to_send(app, false);
    int over = app_sys(app) ? app_sys(app)->ui.confirm_over : 10;
    if (typed_count(app, n, false))
        dl_add(dl, TS_DIALOG, xasprintf("more than %d: confirm by typing the count", over));
}

static void rate_line(const ui_app *app, dlines *dl)
{
    if (app_sys(app))
        dl_add(dl, TS_DIALOG, xasprintf("sent at most %.0f per second", app_sys(app)->rate_limit > 0 ? app_sys(app)->rate_limit : 5.0));
}

static void confirm_lines(ui_app *app, dlines *dl)
{
    const ui_dialog *d = &app->dlg;
    const char *sys = app_sys(app) ? app_sys(app)->name : "?";
    const char *banner = app_sys(app) && app_sys(app)->ui.banner ? app_sys(app)->ui.banner : "";
    if (d->set) {   /* a whole-set retry: the store's selection, counted, not listed */
        setretry_lines(app, dl_addcb, dl);
        confirm_guard(app, dl);
        rate_line(app, dl);
        setretry_canary_lines(app, dl_addcb, dl);   /* the canary offered, the breaker */
        return;
    }
    dl_add(dl, TS_DIALOG_DANGER, xasprintf("%s %zu %s%s on %s%s%s%s?", action_name(d->kind), d->sel.n,
                                           action_target_kind(d->kind), d->sel.n == 1 ? "" : "s", sys,
                                           banner[0] ? " (" : "", banner, banner[0] ? ")" : ""));
    dl_add(dl, TS_DIALOG, xstrdup(d->sel.n > 1 ? "targets (frozen selection):" : "target:"));
    for (size_t i = 0; i < d->sel.n && i < 8; i++)
        dl_add(dl, TS_DIALOG, xasprintf("  %s%s%s%s", d->sel.ids[i], d->sel.labels[i] ? "  " : "",
                                        d->sel.labels[i] ? d->sel.labels[i] : "",
                                        dlgrun_item_kind(d, i) != GUARD_SEND ? "  (not sent)" : ""));
    if (d->sel.n > 8)
        dl_add(dl, TS_DIALOG, xasprintf("  ... and %zu more", d->sel.n - 8));
    if (d->kind == RD_ACT_RETRY)   /* the breakdown first: what is sent and what is not */
        confirm_guard(app, dl);
    if (d->kind == RD_ACT_RETRY && d->sel.n > 1 && !d->sel.group)
        confirm_fps(&d->sel, dl);
    if (d->sel.notes)
        for (const char *p = d->sel.notes; *p;) {
            size_t n = strcspn(p, "\n");
            char *line = xstrndup(p, n);
            dl_add(dl, strstr(line, "WARNING") ? TS_DIALOG_DANGER : TS_DIALOG, line);
            p += n + (p[n] ? 1 : 0);
        }
    if (d->sel.n > 1)
        rate_line(app, dl);
}

static void progress_lines(ui_app *app, dlines *dl)
{
    const ui_dialog *d = &app->dlg;
    dlg_progress p;
    dlgrun_progress(d, &p);
    dl_add(dl, TS_DIALOG_DANGER, xasprintf("%s: %zu/%zu done, %zu ok, %zu failed%s", action_name(d->kind), p.fin, p.n,
                                           p.ok, p.fin - p.ok, p.done ? "" : d->aborted ? " (aborting)" : " ..."));
    if (p.batch_id[0] || d->skipped) {
        char held[64] = "";
        if (d->skipped)
            snprintf(held, sizeof held, "%zu not sent (ineligible or loop retr%s)", d->skipped,
                     d->skipped == 1 ? "y" : "ies");
        dl_add(dl, TS_DIALOG, xasprintf("%s%s%s%s", p.batch_id[0] ? "batch " : "", p.batch_id,
                                        d->skipped && p.batch_id[0] ? "  " : "", held));
    }
    for (size_t i = 0; i < p.n; i++) {
        const rd_result *r = dlgrun_result(d, i);
        bool resent = dlgrun_resent(d, i);
        char key[32] = "";   /* before the message (which may be long): to match the journal */
        if (resent || r->code == RD_RES_MAYBE_APPLIED)
            snprintf(key, sizeof key, "  [key %.8s%s]", r->idem_key, resent ? ", re-sent" : "");
        if (r->code == RD_RES_PENDING)
            dl_add(dl, TS_DIALOG, xasprintf("  %s  %s%s", r->id, resent ? "re-sending" : "pending", key));
        else
            dl_add(dl, r->code == RD_RES_OK ? TS_DIALOG : TS_DIALOG_DANGER,
                   xasprintf("  %s  %s%s%s  %s", r->id, result_code_name(r->code),
                             r->replayed ? " (replayed)" : "", key, r->message));
    }
}

static void resend_lines(ui_app *app, dlines *dl)
{
    const ui_dialog *d = &app->dlg;
    const rd_result *r = dlgrun_result(d, (size_t)d->cur);
    const char *sys = app_sys(app) ? app_sys(app)->name : "?";
    const char *banner = app_sys(app) && app_sys(app)->ui.banner ? app_sys(app)->ui.banner : "";
    dl_add(dl, TS_DIALOG_DANGER, xasprintf("re-send %s of %s %s on %s%s%s%s?", action_name(r->action),
                                           action_target_kind(r->action), r->id, sys, banner[0] ? " (" : "",
                                           banner, banner[0] ? ")" : ""));
    dl_add(dl, TS_DIALOG, xasprintf("with the same Idempotency-Key %.8s... (as in the journal)", r->idem_key));
    dl_add(dl, TS_DIALOG, xasprintf("first result: %s", r->message));
    dl_add(dl, TS_DIALOG, xstrdup("it may already have been applied: a core that honours the key answers"));
    dl_add(dl, TS_DIALOG, xstrdup("from its cache instead of acting twice; one that does not may act again"));
}

static int box_width(int cols)
{
    return cols - 4 < 90 ? cols - 4 : 90;
}

static void dialog_box(ui_app *app, WINDOW *w, dlines *dl)
{
    int rows = getmaxy(w), cols = getmaxx(w);
    int bw = box_width(cols);
    int bh = (int)dl->n + 4;            /* border, lines, keys, border */
    if (bh > rows - 2)
        bh = rows - 2;
    int y0 = (rows - bh) / 2, x0 = (cols - bw) / 2;
    int attr = theme_attr(app->theme, TS_DIALOG);
    draw_box(w, (ui_rect){y0, x0, bh, bw}, attr);
    int body = bh - 3, skip = 0;
    bool results = app->dlg.state == DLG_PROGRESS && !app->dlg.set;
    int head = 1;   /* lines before the results: the summary, the batch line */
    if (results && app->dlg.batch) {
        dlg_progress p;
        dlgrun_progress(&app->dlg, &p);
        head = p.batch_id[0] || app->dlg.skipped ? 2 : 1;
    }
    if (results) {   /* item i is line i + head: keep the cursor's visible */
        int cur = app->dlg.cur + head;
        if (cur > body - 1)
            skip = cur - (body - 1);
    }
    for (int i = 0; i < body && i < (int)dl->n; i++) {
        size_t k = i < head ? (size_t)i : (size_t)(i + skip);
        if (k >= dl->n)
            break;
        int a = theme_attr(app->theme, (ui_slot)dl->slot[k]);
        if (results && k == (size_t)app->dlg.cur + (size_t)head && dl->n > (size_t)head + 1)
            a = theme_attr(app->theme, TS_CURSOR);
        draw_raw(w, y0 + 1 + i, x0 + 2, bw - 4, dl->l[k], a, app->ctx.san);
    }
    char ky[48], kn[48], kr[48], line[320];
    if (app->dlg.state == DLG_SELECT) {
        keymap_first(app->km, UA_CANCEL, kn, sizeof kn);
        snprintf(line, sizeof line, "%s: stop selecting (nothing is sent)", kn);
    } else if (app->dlg.state == DLG_CONFIRM && app->dlg.set) {
        keymap_first(app->km, UA_CONFIRM, ky, sizeof ky);
        keymap_first(app->km, UA_CANCEL, kn, sizeof kn);
        bool typed = typed_count(app, to_send(app, false), false);
        snprintf(line, sizeof line, "%s: %s %zu (%zu not sent)   %s: cancel", ky, typed ? "confirm, then type" : "confirm",
                 to_send(app, false), dialog_held(app), kn);
    } else if (app->dlg.state == DLG_TYPE) {
        snprintf(line, sizeof line, "type %zu and Enter to %s %zu: %s_   Escape: back", app->dlg.want,
                 action_name(app->dlg.kind), app->dlg.want, app->dlg.typed);
    } else if (app->dlg.state == DLG_CONFIRM && dialog_held(app)) {
        keymap_first(app->km, UA_CONFIRM, ky, sizeof ky);
        keymap_first(app->km, UA_CANCEL, kn, sizeof kn);
        keymap_first(app->km, UA_OVERRIDE, kr, sizeof kr);
        const rd_guard_counts *c = &app->dlg.counts;
        size_t held = dialog_held(app), n = c->total;
        if (c->send)
            snprintf(line, sizeof line, "%s: confirm %zu (%zu not sent)   %s: override, all %zu   %s: cancel", ky,
                     c->send, held, kr, n, kn);
        else if (!c->ineligible)
            snprintf(line, sizeof line, "%s: override the loop breaker   %s: cancel", kr, kn);
        else
            snprintf(line, sizeof line, "%s: override, send %zu anyway (type the count)   %s: cancel", kr, n, kn);
    } else if (app->dlg.state == DLG_CONFIRM || app->dlg.state == DLG_RESEND) {
        keymap_first(app->km, UA_CONFIRM, ky, sizeof ky);
        keymap_first(app->km, UA_CANCEL, kn, sizeof kn);
        bool typed = app->dlg.state == DLG_CONFIRM && typed_count(app, to_send(app, false), false);
        snprintf(line, sizeof line, "%s: %s   %s: %s", ky,
                 app->dlg.state == DLG_RESEND ? "re-send" : typed ? "confirm, then type the count" : "confirm", kn,
                 app->dlg.state == DLG_RESEND ? "back" : "cancel");
    } else {
        keymap_first(app->km, UA_ABORT, ky, sizeof ky);
        keymap_first(app->km, UA_CANCEL, kn, sizeof kn);
        const ui_dialog *d = &app->dlg;
        bool running = d->set ? setretry_running(d->set) : !dlgrun_finished(d);
        /* cancel (Escape) puts a running batch in the background (dialog_hide) */
        int n = running && !d->aborted
            ? snprintf(line, sizeof line, "%s: abort the rest   Escape/%s: on in the background (:batch "
                       "shows it)", ky, kn)
            : running ? snprintf(line, sizeof line, "aborting: the requests in flight finish   Escape/%s: on "
                                 "in the background (:batch shows it)", kn)
                      : snprintf(line, sizeof line, "Escape/%s: close", kn);
        if (dlgrun_maybe_applied(&app->dlg) && keymap_first(app->km, UA_RESEND, kr, sizeof kr))
            snprintf(line + n, sizeof line - (size_t)n, "   %s: re-send the selected maybe_applied item", kr);
    }
    draw_clean(w, y0 + bh - 2, x0 + 2, bw - 4, line, attr | A_BOLD);
}

typedef struct wrap_ud { dlines *dl; int slot; } wrap_ud;

static void wrap_add(const char *s, size_t n, void *ud)
{
    wrap_ud *u = ud;
    dl_add(u->dl, u->slot, xasprintf("%.*s", (int)n, s));
}

/* Warnings wrap to the box, never cut: each line naming one becomes as many lines as it
 * needs (the results' lines stay one per item: the cursor maps to them). */
static void dl_wrap_warnings(dlines *dl, int width, unsigned san)
{
    dlines out = {0};
    for (size_t i = 0; i < dl->n; i++) {
        char *clean = strstr(dl->l[i], "WARNING") ? sanitize_str(dl->l[i], san) : NULL;
        if (clean && sanitize_width(clean) > width) {
            wrap_ud u = {&out, dl->slot[i]};
            text_wrap_words(clean, width, wrap_add, &u);
            free(dl->l[i]);
        } else {
            dl_add(&out, dl->slot[i], dl->l[i]);
        }
        free(clean);
    }
    free(dl->l);
    free(dl->slot);
    *dl = out;
}

void dialog_draw(ui_app *app, WINDOW *w)
{
    dlines dl = {0};
    int inner = box_width(getmaxx(w)) - 4;   /* dialog_box draws lines 2 in from each side */
    if (app->dlg.state == DLG_CONFIRM || app->dlg.state == DLG_TYPE) {
        confirm_lines(app, &dl);
        dl_wrap_warnings(&dl, inner, app->ctx.san);
    } else if (app->dlg.set)
        setretry_lines(app, dl_addcb, &dl);
    else if (app->dlg.state == DLG_RESEND)
        resend_lines(app, &dl);
    else if (app->dlg.batch)
        progress_lines(app, &dl);
    dialog_box(app, w, &dl);
    for (size_t i = 0; i < dl.n; i++)
        free(dl.l[i]);
    free(dl.l);
    free(dl.slot);
}
