/* Confirmation and progress dialogs for actions: the exact targets (a frozen selection),
 * a breakdown by error fingerprint, in-flight work and warnings, then per-item results
 * with an abort key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "app.h"
#include "draw.h"

enum { FP_GROUPS = 6 };

static void sel_copy(ui_sel *dst, const ui_sel *src)
{
    sel_clear(dst);
    for (size_t i = 0; i < src->n; i++)
        sel_add(dst, src->ids[i], src->parents[i], src->labels[i], src->fps[i]);
    dst->notes = xstrdup(src->notes);
}

void dialog_close(ui_app *app)
{
    ui_dialog *d = &app->dlg;
    if (d->batch)
        batch_free(d->batch);
    sel_clear(&d->sel);
    memset(d, 0, sizeof *d);
}

void dialog_start(ui_app *app, rd_action kind)
{
    ui_ctx *c = &app->ctx;
    char why[256] = "";
    if (c->read_only) {
        ctx_msg(c, true, "read-only: %s is disabled", action_name(kind));
        return;
    }
    if (!app->actor && !app->headless) {   /* headless screen tests show the dialog only */
        ctx_msg(c, true, "%s: no core API for this system", action_name(kind));
        return;
    }
    if (app->actor && !actor_can_act(app->actor, why, sizeof why)) {
        ctx_msg(c, true, "cannot %s: %s", action_name(kind), why);
        return;
    }
    if (app->actor && !actor_supports(app->actor, kind)) {
        ctx_msg(c, true, "this system's profile has no '%s' action", action_name(kind));
        return;
    }
    dialog_close(app);
    app->dlg.state = DLG_CONFIRM;
    app->dlg.kind = kind;
    sel_copy(&app->dlg.sel, &c->sel);   /* frozen now: later marks or refreshes don't change it */
}

static void on_item(rd_batch *b, size_t index, const rd_result *r, void *ud)
{
    ui_app *app = ud;
    (void)b, (void)index, (void)r;
    app->dirty = true;
}

static void on_done(rd_batch *b, void *ud)
{
    ui_app *app = ud;
    char msg[160];
    snprintf(msg, sizeof msg, "%s: %zu of %zu succeeded", action_name(batch_action(b)), batch_succeeded(b),
             batch_count(b));
    ctx_msg(&app->ctx, batch_succeeded(b) != batch_count(b), "%s", msg);
    app->dirty = true;
    if (app->src)
        sources_refresh(app->src);
}

static void dialog_run(ui_app *app)
{
    ui_dialog *d = &app->dlg;
    if (!app->actor) {
        ctx_msg(&app->ctx, true, "%s: no core API in headless mode: nothing was sent", action_name(d->kind));
        dialog_close(app);
        return;
    }
    rd_target *t = xcalloc(d->sel.n ? d->sel.n : 1, sizeof *t);
    for (size_t i = 0; i < d->sel.n; i++) {
        t[i].id = d->sel.ids[i];
        t[i].parent = d->sel.parents[i];
        t[i].label = d->sel.labels[i];
    }
    static const rd_batch_cbs cbs = {on_item, on_done};
    char why[256] = "";
    d->batch = actor_run(app->actor, d->kind, t, d->sel.n, NULL, &cbs, app, why, sizeof why);
    free(t);
    if (!d->batch) {
        ctx_msg(&app->ctx, true, "refused: %s", why);
        dialog_close(app);
        return;
    }
    d->state = DLG_PROGRESS;
    d->scroll = 0;
}

unsigned dialog_key(ui_app *app, ui_action a)
{
    ui_dialog *d = &app->dlg;
    if (d->state == DLG_CONFIRM) {
        if (a == UA_CONFIRM)
            dialog_run(app);
        else if (a == UA_CANCEL || a == UA_ABORT) {
            ctx_msg(&app->ctx, false, "%s cancelled: nothing was sent", action_name(d->kind));
            dialog_close(app);
        }
        return UI_CH_REDRAW;
    }
    if (a == UA_ABORT && d->batch && !batch_done(d->batch)) {
        batch_abort(d->batch);
        d->aborted = true;
        ctx_msg(&app->ctx, true, "aborted: unsent items were not sent (an in-flight request may still apply)");
    } else if (a == UA_CANCEL && d->batch && batch_done(d->batch))
        dialog_close(app);
    else if (a == UA_CANCEL)
        ctx_msg(&app->ctx, false, "still running: abort first");
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

static void confirm_lines(ui_app *app, dlines *dl)
{
    const ui_dialog *d = &app->dlg;
    const char *sys = app->sys ? app->sys->name : "?";
    const char *banner = app->sys && app->sys->banner ? app->sys->banner : "";
    dl_add(dl, TS_DIALOG_DANGER, xasprintf("%s %zu %s%s on %s%s%s%s?", action_name(d->kind), d->sel.n,
                                           action_target_kind(d->kind), d->sel.n == 1 ? "" : "s", sys,
                                           banner[0] ? " (" : "", banner, banner[0] ? ")" : ""));
    dl_add(dl, TS_DIALOG, xstrdup(d->sel.n > 1 ? "targets (frozen selection):" : "target:"));
    for (size_t i = 0; i < d->sel.n && i < 8; i++)
        dl_add(dl, TS_DIALOG, xasprintf("  %s%s%s", d->sel.ids[i], d->sel.labels[i] ? "  " : "",
                                        d->sel.labels[i] ? d->sel.labels[i] : ""));
    if (d->sel.n > 8)
        dl_add(dl, TS_DIALOG, xasprintf("  ... and %zu more", d->sel.n - 8));
    if (d->kind == RD_ACT_RETRY && d->sel.n > 1)
        confirm_fps(&d->sel, dl);
    if (d->sel.notes)
        for (const char *p = d->sel.notes; *p;) {
            size_t n = strcspn(p, "\n");
            char *line = xstrndup(p, n);
            dl_add(dl, strstr(line, "WARNING") ? TS_DIALOG_DANGER : TS_DIALOG, line);
            p += n + (p[n] ? 1 : 0);
        }
    if (d->sel.n > 1 && app->sys)
        dl_add(dl, TS_DIALOG, xasprintf("sent at most %.0f per second", app->sys->rate_limit > 0 ? app->sys->rate_limit : 5.0));
}

static void progress_lines(ui_app *app, dlines *dl)
{
    const ui_dialog *d = &app->dlg;
    const rd_batch *b = d->batch;
    size_t n = batch_count(b), fin = batch_finished(b), ok = batch_succeeded(b);
    dl_add(dl, TS_DIALOG_DANGER, xasprintf("%s: %zu/%zu done, %zu ok, %zu failed%s", action_name(d->kind), fin, n, ok,
                                           fin - ok, batch_done(b) ? "" : d->aborted ? " (aborting)" : " ..."));
    for (size_t i = 0; i < n; i++) {
        const rd_result *r = batch_result(b, i);
        if (r->code == RD_RES_PENDING)
            dl_add(dl, TS_DIALOG, xasprintf("  %s  pending", r->id));
        else
            dl_add(dl, r->code == RD_RES_OK ? TS_DIALOG : TS_DIALOG_DANGER,
                   xasprintf("  %s  %s  %s", r->id, result_code_name(r->code), r->message));
    }
}

static void dialog_box(ui_app *app, WINDOW *w, dlines *dl)
{
    int rows = getmaxy(w), cols = getmaxx(w);
    int bw = cols - 4 < 90 ? cols - 4 : 90;
    int bh = (int)dl->n + 4;            /* border, lines, keys, border */
    if (bh > rows - 2)
        bh = rows - 2;
    int y0 = (rows - bh) / 2, x0 = (cols - bw) / 2;
    int attr = theme_attr(app->theme, TS_DIALOG);
    for (int y = 0; y < bh; y++)
        draw_fill(w, y0 + y, x0, bw, attr);
    wattrset(w, attr);
    mvwhline(w, y0, x0, ACS_HLINE, bw);
    mvwhline(w, y0 + bh - 1, x0, ACS_HLINE, bw);
    mvwvline(w, y0, x0, ACS_VLINE, bh);
    mvwvline(w, y0, x0 + bw - 1, ACS_VLINE, bh);
    mvwaddch(w, y0, x0, ACS_ULCORNER);
    mvwaddch(w, y0, x0 + bw - 1, ACS_URCORNER);
    mvwaddch(w, y0 + bh - 1, x0, ACS_LLCORNER);
    mvwaddch(w, y0 + bh - 1, x0 + bw - 1, ACS_LRCORNER);
    wattrset(w, 0);
    int body = bh - 3, skip = 0;
    if ((int)dl->n > body && app->dlg.state == DLG_PROGRESS)   /* keep the newest results visible */
        skip = (int)dl->n - body;
    for (int i = 0; i < body && i < (int)dl->n; i++) {
        size_t k = i == 0 ? 0 : (size_t)(i + skip);
        if (k >= dl->n)
            break;
        draw_raw(w, y0 + 1 + i, x0 + 2, bw - 4, dl->l[k], theme_attr(app->theme, (ui_slot)dl->slot[k]), app->ctx.san);
    }
    char ky[48], kn[48], line[160];
    if (app->dlg.state == DLG_CONFIRM) {
        keymap_first(app->km, UA_CONFIRM, ky, sizeof ky);
        keymap_first(app->km, UA_CANCEL, kn, sizeof kn);
        snprintf(line, sizeof line, "%s: confirm   %s: cancel", ky, kn);
    } else {
        keymap_first(app->km, UA_ABORT, ky, sizeof ky);
        keymap_first(app->km, UA_CANCEL, kn, sizeof kn);
        snprintf(line, sizeof line, "%s: abort the rest   %s: close when done", ky, kn);
    }
    draw_clean(w, y0 + bh - 2, x0 + 2, bw - 4, line, attr | A_BOLD);
}

void dialog_draw(ui_app *app, WINDOW *w)
{
    dlines dl = {0};
    if (app->dlg.state == DLG_CONFIRM)
        confirm_lines(app, &dl);
    else if (app->dlg.batch)
        progress_lines(app, &dl);
    dialog_box(app, w, &dl);
    for (size_t i = 0; i < dl.n; i++)
        free(dl.l[i]);
    free(dl.l);
    free(dl.slot);
}
