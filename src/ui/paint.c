/* One paint: top bar, the current view, status/prompt line, bottom bar, dialog; and the
 * loop's paint now (app_paint: the frame, the data-paint mark, the key-to-paint trace). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"
#include "app_priv.h"
#include "batches.h"
#include "binding.h"
#include "clip.h"
#include "dialog.h"
#include "draw.h"
#include "lastknown.h"
#include "paint.h"
#include "password.h"

static int put(WINDOW *w, int y, int x, int maxx, const char *clean, int attr)
{
    if (x >= maxx)
        return x;
    return x + draw_clean(w, y, x, maxx - x, clean, attr);
}

/* Raw (outside) text on the top bar: sanitized, fitted, no padding beyond its width. */
static int put_raw_tight(WINDOW *w, int y, int x, int maxx, const char *raw, int attr, unsigned san)
{
    if (x >= maxx || !raw)
        return x;
    char *clean = sanitize_str(raw, san);
    int width = sanitize_width(clean);
    int cols = width < maxx - x ? width : maxx - x;
    if (width > cols) {                    /* cut: never inside a parenthesis */
        char fit[1024];
        cols = sanitize_fit_clause(clean, cols, fit, sizeof fit, san);
        draw_clean(w, y, x, cols, fit, attr);
    } else
        draw_clean(w, y, x, cols, clean, attr);
    free(clean);
    return x + cols;
}

/* A source error for the top bar: its first line, trimmed, at most cap-1 bytes cut on a
 * character boundary (libpq's DETAIL/HINT lines stay for the sources panel). */
static void topbar_error(const char *err, char *out, size_t cap)
{
    while (*err == ' ' || *err == '\t')
        err++;
    size_t n = strcspn(err, "\r\n");
    char *line = xstrndup(err, n);
    while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
        line[--n] = 0;
    ui_copy_text(out, cap, line);
    free(line);
}

/* Reading from replicas: " @host:port standby lag 3s", and " failed over 12s ago" for ten
 * minutes after the source moved to another host of its list. */
static int topbar_replica(ui_app *app, WINDOW *w, int x, int maxx, int bar,
                          const rd_source_status *s)
{
    char t[160] = "", lag[24] = "";
    if (s->lag_known)
        snprintf(lag, sizeof lag, " lag %.0fs", s->lag_s);
    if (s->host[0] || (s->role[0] && strcmp(s->role, "primary") != 0))
        snprintf(t, sizeof t, "%s%.95s%s%s%s", s->host[0] ? " @" : "", s->host,
                 s->role[0] ? " " : "", s->role, lag);
    x = put_raw_tight(w, 0, x, maxx, t, bar, app->ctx.san);
    if (s->failover[0] && app->ctx.now - s->failover_at < 600) {
        char age[24];
        ctx_age(&app->ctx, s->failover_at, age, sizeof age);
        snprintf(t, sizeof t, " failed over %s ago", age);
        x = put_raw_tight(w, 0, x, maxx, t, theme_attr(app->theme, TS_WARNING), 0);
    }
    return x;
}

static int topbar_sources(ui_app *app, WINDOW *w, int x, int maxx, int bar)
{
    const rd_model *m = app_model(app);
    for (size_t i = 0; i < m->sources.n && x < maxx; i++) {
        const rd_source_status *s = &m->sources.items[i];
        char age[24], t[96];
        int slot = TS_TOPBAR;
        if (s->state == RD_SRC_OK) {
            /* answered within the poll cadence: "ok", so a steady poll does not redraw it */
            bool fresh = ctx_source_fresh(&app->ctx, s, age, sizeof age);
            snprintf(t, sizeof t, " %s %s", s->name, fresh ? "ok" : age);
        } else if (s->state == RD_SRC_STALE) {
            ctx_age(&app->ctx, s->last_ok, age, sizeof age);
            snprintf(t, sizeof t, " %s STALE %s", s->name, age);
            slot = TS_STALE;
        } else if (s->state == RD_SRC_DOWN) {
            snprintf(t, sizeof t, " %s DOWN", s->name);
            slot = TS_DOWN;
        } else
            snprintf(t, sizeof t, " %s ...", s->name);
        x = put_raw_tight(w, 0, x, maxx, t, slot == TS_TOPBAR ? bar : theme_attr(app->theme, (ui_slot)slot), app->ctx.san);
        x = topbar_replica(app, w, x, maxx, bar, s);
        if (s->state >= RD_SRC_STALE && s->error[0]) {
            char first[200];   /* the bar's width cuts it (put_raw_tight), not this */
            topbar_error(s->error, first, sizeof first);
            char *e = xasprintf(": %s", first);
            x = put_raw_tight(w, 0, x, maxx, e, theme_attr(app->theme, (ui_slot)slot), app->ctx.san);
            free(e);
        }
        x = put_raw_tight(w, 0, x, maxx, " |", bar, 0);
    }
    return x;
}

/* "core ok as alice (retry: 1 of 1 succeeded) " / "core down: connection refused ". */
static int topbar_core(ui_app *app, WINDOW *w, int x, int maxx, int bar)
{
    const rd_core_status *k = &app_model(app)->core;
    char first[33], t[256];   /* the reason, short: the overview has it whole */
    int slot = TS_TOPBAR;
    if (k->state == RD_CORE_OK && k->identity[0])
        snprintf(t, sizeof t, "core ok as %.127s", k->identity);
    else if (k->state == RD_CORE_OK)
        snprintf(t, sizeof t, "core ok (not logged in)");
    else if (k->state == RD_CORE_CHECKING)
        snprintf(t, sizeof t, "core ...");
    else {
        topbar_error(k->error, first, sizeof first);
        snprintf(t, sizeof t, "core %s: %s", k->state == RD_CORE_DOWN ? "down" : "error", first);
        slot = TS_DOWN;
    }
    x = put_raw_tight(w, 0, x, maxx, t, slot == TS_TOPBAR ? bar : theme_attr(app->theme, (ui_slot)slot),
                      app->ctx.san);
    if (k->last_action[0]) {
        char *a = xasprintf(" (%.60s)", k->last_action);
        x = put_raw_tight(w, 0, x, maxx, a, k->last_action_failed ? theme_attr(app->theme, TS_WARNING) : bar,
                          app->ctx.san);
        free(a);
    }
    return put_raw_tight(w, 0, x, maxx, " ", bar, 0);
}

static void paint_topbar(ui_app *app, WINDOW *w, int cols)
{
    int bar = theme_attr(app->theme, TS_TOPBAR), danger = theme_attr(app->theme, TS_DANGER);
    draw_fill(w, 0, 0, cols, bar);
    int x = put_raw_tight(w, 0, 0, cols, " redrive ", bar, 0);
    const rd_sessions *fleet = binding_fleet(app->bind);
    const rd_system_cfg *sys = app_sys(app);
    rd_actor *actor = app_actor(app);
    if (app->cur == VIEW_FLEET && fleet) {   /* every system: no one system's bar */
        char *t = xasprintf("fleet: %zu systems", sessions_count(fleet));
        put_raw_tight(w, 0, x, cols, t, bar | A_BOLD, 0);
        free(t);
        return;
    }
    x = put_raw_tight(w, 0, x, cols, sys ? sys->name : "(no system)", bar | A_BOLD, app->ctx.san);
    x = put_raw_tight(w, 0, x, cols, " ", bar, 0);
    if (sys && sys->ui.banner && *sys->ui.banner) {
        char *b = xasprintf(" %s ", sys->ui.banner);
        x = put_raw_tight(w, 0, x, cols, b, danger, app->ctx.san);
        free(b);
        x = put_raw_tight(w, 0, x, cols, " ", bar, 0);
    }
    if ((sys && sys->http.insecure) || (actor && actor_insecure(actor))) {
        x = put_raw_tight(w, 0, x, cols, " insecure ", danger, 0);
        x = put_raw_tight(w, 0, x, cols, " ", bar, 0);
    }
    if (sys && sys->store.tls.insecure) {   /* Redis TLS without verification */
        x = put_raw_tight(w, 0, x, cols, " TLS NOT VERIFIED ", danger, 0);
        x = put_raw_tight(w, 0, x, cols, " ", bar, 0);
    }
    if (app->ctx.read_only)
        x = put_raw_tight(w, 0, x, cols, "[read-only] ", bar, 0);
    if (app->ctx.wide)
        x = put_raw_tight(w, 0, x, cols, "[wide] ", bar, 0);
    if (app->ctx.abs_time || app->ctx.local_time)   /* how times read: clock, zone */
        x = put_raw_tight(w, 0, x, cols, app->ctx.abs_time ? (app->ctx.local_time ? "[clock local] " : "[clock UTC] ")
                                                           : "[local] ", bar, 0);
    char stale[48];   /* the data on screen is the last-known snapshot: before the rest */
    lastknown_label(binding_cache(app->bind), stale, sizeof stale);
    if (stale[0]) {
        x = put_raw_tight(w, 0, x, cols, stale, theme_attr(app->theme, TS_STALE), 0);
    }
    const char *who = actor ? actor_identity(actor) : NULL;
    if (app_model(app)->core.state != RD_CORE_NONE)
        x = topbar_core(app, w, x, cols, bar);
    else if (who) {
        char *t = xasprintf("as %s ", who);
        x = put_raw_tight(w, 0, x, cols, t, bar, app->ctx.san);
        free(t);
    }
    x = put_raw_tight(w, 0, x, cols, "|", bar, 0);
    x = topbar_sources(app, w, x, cols, bar);
}

static void paint_bottombar(ui_app *app, WINDOW *w, int y, int cols)
{
    draw_fill(w, y, 0, cols, theme_attr(app->theme, TS_BOTTOMBAR));
    const ui_action *bar = dialog_modal(app) ? NULL : app->views[app->cur].ops->bar;
    static const ui_action dlg_confirm[] = {UA_CONFIRM, UA_CANCEL, UA_NONE};
    static const ui_action dlg_loops[] = {UA_CONFIRM, UA_OVERRIDE, UA_CANCEL, UA_NONE};
    static const ui_action dlg_type[] = {UA_NONE};   /* raw keys: the box says what to type */
    static const ui_action dlg_progress[] = {UA_ABORT, UA_CANCEL, UA_NONE};
    static const ui_action dlg_resend[] = {UA_RESEND, UA_ABORT, UA_CANCEL, UA_NONE};
    if (!bar)
        bar = app->dlg.state == DLG_TYPE                                     ? dlg_type
              : app->dlg.state == DLG_CONFIRM && dialog_held(app) && !app->dlg.set ? dlg_loops
              : app->dlg.state == DLG_CONFIRM || app->dlg.state == DLG_RESEND ? dlg_confirm
              : dialog_offers_resend(app)                                    ? dlg_resend
                                                                             : dlg_progress;
    rd_actor *actor = app_actor(app);
    char keys[16][48], labels[16][48];
    int n = 0, total = 0, keep = 2;
    /* a table: W while a column is cut or hidden, and in wide mode the scroll keys and W
     * back, kept with help and quit when the bar is too wide */
    const ui_view *v = &app->views[app->cur];
    ui_action with[20];
    int nw = 0;
    bool wide = !dialog_modal(app) && v->h.table && app->ctx.wide;
    if (wide) {
        with[nw++] = UA_SCROLL_LEFT;
        with[nw++] = UA_SCROLL_RIGHT;
        with[nw++] = UA_WIDE;
    }
    int at = 0;
    for (; bar[at] != UA_NONE && nw < 17; at++)
        with[nw++] = bar[at];
    if (!wide && !dialog_modal(app) && v->h.table && v->h.cut && nw >= 2) {
        memmove(&with[nw - 1], &with[nw - 2], 2 * sizeof *with);   /* before help, quit */
        with[nw - 2] = UA_WIDE;
        nw++;
        keep = 3;
    }
    with[nw] = UA_NONE;
    bar = with;
    for (int i = 0; bar[i] != UA_NONE && n < 16; i++) {
        const ui_action_info *a = actlist_info(bar[i]);
        if ((a->flags & UA_DANGER) && app->ctx.read_only)
            continue;
        rd_action kind;   /* the UI's action names the core action it starts */
        if (actor && action_from_name(a->name, &kind) && !actor_supports(actor, kind))
            continue;     /* the profile has no such action: not offered */
        if (!keymap_first(app->km, bar[i], keys[n], sizeof keys[n]))
            continue;
        snprintf(labels[n], sizeof labels[n], " %s ", bar[i] == UA_WIDE && wide ? "fit" : a->label);
        total += (int)(strlen(keys[n]) + strlen(labels[n]));
        n++;
    }
    /* too wide: drop items before the last two (help, quit stay visible; W too) and after
     * the wide mode's keys */
    int first = wide ? 3 : 0;
    while (total > cols && n > keep + first) {
        int k = n - keep - 1;
        total -= (int)(strlen(keys[k]) + strlen(labels[k]));
        memmove(keys[k], keys[k + 1], (size_t)(n - k - 1) * sizeof keys[0]);
        memmove(labels[k], labels[k + 1], (size_t)(n - k - 1) * sizeof labels[0]);
        n--;
    }
    int x = 0;
    for (int i = 0; i < n && x < cols; i++) {
        int kl = (int)strlen(keys[i]), ll = (int)strlen(labels[i]);
        x = put(w, y, x, x + kl < cols ? x + kl : cols, keys[i], theme_attr(app->theme, TS_KEY));
        x = put(w, y, x, x + ll < cols ? x + ll : cols, labels[i], theme_attr(app->theme, TS_BOTTOMBAR));
    }
}

static void paint_status(ui_app *app, WINDOW *w, int y, int cols)
{
    if (app->prompt.active) {
        static const char *const leads[] = {":", "/", "jump to id: ", ""};
        const char *lead = app->prompt.kind == PROMPT_TYPED ? app->prompt.lead : leads[app->prompt.kind];
        char *t = xasprintf("%s%s", lead, app->prompt.buf);
        int used = sanitize_width(app->prompt.buf) + (int)strlen(lead);
        draw_raw(w, y, 0, cols, t, 0, app->ctx.san);
        free(t);
        if (app->prompt.hint[0] && used + 3 < cols)   /* Tab's matches, after the line */
            draw_clean(w, y, used + 3, cols - used - 3, app->prompt.hint, theme_attr(app->theme, TS_DIM));
        return;
    }
    if (app->n_pending) {
        char k[32], t[64];
        key_text(app->pending[0], true, k, sizeof k);
        snprintf(t, sizeof t, "%s - (waiting for the next key)", k);
        draw_clean(w, y, 0, cols, t, theme_attr(app->theme, TS_WARNING));
        return;
    }
    char bg[160];   /* a batch put away: its progress at the right end */
    dialog_status(app, bg, sizeof bg);
    int bw = bg[0] ? (int)strlen(bg) : 0;
    bw = bw + 2 < cols ? bw : 0;
    /* a question (quit?) or an error that the progress would cut: the whole line is its */
    if (bw && (app->quit_ask || (app->ctx.msg_error && text_cols(app->ctx.msg, app->ctx.san) > cols - bw - 2)))
        bw = 0;
    draw_raw(w, y, 0, cols - (bw ? bw + 2 : 0), app->ctx.msg,
             theme_attr(app->theme, app->ctx.msg_error ? TS_ERROR : TS_MESSAGE), app->ctx.san);
    if (bw)
        draw_clean(w, y, cols - bw, bw, bg, theme_attr(app->theme, TS_WARNING));
}

void paint_frame(ui_app *app)
{
    WINDOW *w = stdscr;
    int rows = getmaxy(w), cols = getmaxx(w);
    app->ctx.now = app_now(app);
    if (app->cur == VIEW_FLEET)
        app_fleet_rows(app);
    if (app->cur == VIEW_BATCHES)
        batches_rows(app);
    const rd_system_cfg *sys = app_sys(app);
    double poll = sys && sys->poll_s > 0 ? sys->poll_s : 2.0;
    app->ctx.fresh_s = 2 * poll + 1;   /* one missed poll is still fresh */
    app->ctx.poll_s = poll;            /* a source with a longer cadence: its own window */
    app->ctx.exec_timeout_s = binding_exec_timeout(app->bind);
    app->ctx.n_ages = 0;
    app->ctx.ages_overflow = false;
    werase(w);
    if (rows < 5 || cols < 20) {
        draw_clean(w, 0, 0, cols, "terminal too small", 0);
    } else {
        paint_topbar(app, w, cols);
        ui_view *v = &app->views[app->cur];
        ui_rect r = {1, 0, rows - 3, cols};
        v->h.table = v->h.cut = false;   /* view_table sets them: the bar reads them */
        v->ops->draw(v, &app->ctx, w, r);
        paint_status(app, w, rows - 2, cols);
        paint_bottombar(app, w, rows - 1, cols);
        if (dialog_modal(app))
            dialog_draw(app, w);
        if (app->clip)
            clip_draw(app, w);
        if (app->pw.active)
            password_draw(app, w);
    }
    if (app->prompt.active && !app->pw.active) {
        curs_set(1);
        int len = (int)(app->prompt.kind == PROMPT_JUMP ? 12 : 1) + sanitize_width(app->prompt.buf);
        wmove(w, rows - 2, len < cols ? len : cols - 1);
    } else
        curs_set(0);
    if (app->full_redraw) {
        clearok(curscr, TRUE);
        app->full_redraw = false;
    }
    wnoutrefresh(w);
    doupdate();
    app->painted_gen = app_model(app)->generation;
    app->dirty = false;
}

/* REDRIVE_LATENCY_TRACE: each key handled since the last paint, key-to-paint in microseconds. */
static void latency_record(ui_loop *l)
{
    if (!l->latency || !l->n_lat)
        return;
    double now = clock_mono();
    for (int i = 0; i < l->n_lat; i++)
        fprintf(l->latency, "%.0f\n", (now - l->lat_t0[i]) * 1e6);
    fflush(l->latency);
    l->n_lat = 0;
}

/* Paint now (the loop's: keys, a repaint due, the first frames): the frame, then the
 * pacing's mark of a paint that showed new data (app_ctx.c paces from it) and the
 * key-to-paint trace; a quit asked for ends the loop. */
void app_paint(ui_app *app)
{
    bool data = app_model(app)->generation != app->painted_gen;
    paint_frame(app);
    if (app->loop) {
        if (data)
            app->loop->last_data_paint = clock_mono();
        latency_record(app->loop);
    }
    if (app->quit)
        loop_break(app->base);
}
