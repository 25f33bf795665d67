/* Overview: source freshness, counts by status, failing rate, DLQ size, unhealthy
 * workers, orphan suspects, and any config/theme/keymap problems. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fleet.h"
#include "../core/xalloc.h"
#include "draw.h"
#include "histdraw.h"
#include "view.h"

static const ui_action overview_bar[] = {UA_VIEW_EXECS, UA_VIEW_WORKERS, UA_VIEW_QUEUES, UA_VIEW_DLQ,
                                         UA_VIEW_JOURNAL, UA_COMMAND, UA_HELP, UA_QUIT, UA_NONE};

/* The core API as the last probe saw it, and the outcome of the last action. */
static int overview_core(ui_ctx *c, WINDOW *w, int y, ui_rect r)
{
    const rd_core_status *k = &c->model->core;
    char since[24] = "";
    char *t;
    int slot = TS_OK;
    switch (k->state) {
    case RD_CORE_NONE: return y;
    case RD_CORE_OK:
        t = k->identity[0] ? xasprintf("  %-12s ok        as %s", "core API", k->identity)
                           : xasprintf("  %-12s ok        not logged in yet", "core API");
        break;
    case RD_CORE_CHECKING:
        t = xasprintf("  %-12s checking", "core API");
        slot = TS_DIM;
        break;
    default:
        ctx_age(c, k->since, since, sizeof since);
        t = xasprintf("  %-12s %-9s for %s: %s", "core API", k->state == RD_CORE_DOWN ? "DOWN" : "ERROR",
                      since, k->error);
        slot = TS_DOWN;
        break;
    }
    draw_raw(w, y++, r.x, r.w, t, theme_attr(c->theme, (ui_slot)slot), c->san);
    free(t);
    if (k->last_action[0]) {
        t = xasprintf("  %-12s last action: %s", "", k->last_action);
        draw_raw(w, y++, r.x, r.w, t, theme_attr(c->theme, k->last_action_failed ? TS_WARNING : TS_NORMAL), c->san);
        free(t);
    }
    return y;
}

static int overview_sources(ui_ctx *c, WINDOW *w, int y, ui_rect r)
{
    const rd_model *m = c->model;
    draw_clean(w, y++, r.x, r.w, "Sources", theme_attr(c->theme, TS_HEADER));
    if (!m->sources.n)
        draw_clean(w, y++, r.x + 2, r.w - 2, "none yet", theme_attr(c->theme, TS_DIM));
    for (size_t i = 0; i < m->sources.n; i++) {
        const rd_source_status *s = &m->sources.items[i];
        char ok[24] = "", since[24] = "";
        char *t;
        if (s->state == RD_SRC_OK) {
            /* within the poll cadence: "just now", so a steady poll does not redraw it */
            bool fresh = ctx_source_fresh(c, s, ok, sizeof ok);
            t = xasprintf("  %-12s ok        updated %s%s", s->name, fresh ? "just now" : ok, fresh ? "" : " ago");
        } else if (s->state == RD_SRC_STALE) {
            ctx_age(c, s->last_ok, ok, sizeof ok);
            ctx_age(c, s->since, since, sizeof since);
            t = xasprintf("  %-12s STALE     since %s, data %s old: %s", s->name, since, ok, s->error);
        } else if (s->state == RD_SRC_DOWN) {
            ctx_age(c, s->since, since, sizeof since);
            t = xasprintf("  %-12s DOWN      for %s: %s", s->name, since, s->error);
        } else if (s->progress.active) {   /* the first sweep, long: how far */
            char prog[200];
            source_progress_text(s, prog, sizeof prog);
            t = xasprintf("  %-12s %s", s->name, prog);
        } else
            t = xasprintf("  %-12s connecting", s->name);
        int slot = s->state == RD_SRC_OK ? TS_OK : s->state == RD_SRC_STALE ? TS_STALE
                   : s->state == RD_SRC_DOWN ? TS_DOWN : TS_DIM;
        draw_raw(w, y++, r.x, r.w, t, theme_attr(c->theme, (ui_slot)slot), c->san);
        free(t);
        /* optional parts that failed (the source stays ok): one line each */
        for (size_t k = 0; k < s->n_notes && k < RD_SRC_NOTES; k++) {
            t = xasprintf("  %-12s note: %.*s", "", (int)RD_SRC_NOTE_LEN, s->notes[k]);
            draw_raw(w, y++, r.x, r.w, t, theme_attr(c->theme, TS_STALE), c->san);
            free(t);
        }
        if (s->push[0]) {             /* the store's notifications (docs/sources.md "Push") */
            t = xasprintf("  %-12s push: %.*s", "", (int)sizeof s->push, s->push);
            bool on = strncmp(s->push, "on", 2) == 0;
            draw_raw(w, y++, r.x, r.w, t, theme_attr(c->theme, on ? TS_DIM : TS_STALE), c->san);
            free(t);
        }
    }
    return overview_core(c, w, y, r);
}

static int overview_counts(ui_ctx *c, WINDOW *w, int y, ui_rect r)
{
    const rd_model *m = c->model;
    char part[220];
    if (model_partial_text(m, part, sizeof part)) {   /* counts of the tasks read so far */
        char *h = xasprintf("Executions by status (%s)", part);
        draw_clean(w, y++, r.x, r.w, h, theme_attr(c->theme, TS_WARNING));
        free(h);
    } else
        draw_clean(w, y++, r.x, r.w, "Executions by status", theme_attr(c->theme, TS_HEADER));
    int x = r.x + 2;
    if (!m->counts.n)
        draw_clean(w, y, x, r.w - 2, "no counts yet", theme_attr(c->theme, TS_DIM));
    for (size_t i = 0; i < m->counts.n; i++) {
        const rd_count *k = &m->counts.items[i];
        char t[96];
        snprintf(t, sizeof t, "%s %s%ld%s", k->status, k->estimated ? "\xe2\x89\x88" : "", k->count,
                 k->capped ? "+" : "");
        if (c->san)   /* ASCII mode: "~" for estimated */
            snprintf(t, sizeof t, "%s %s%ld%s", k->status, k->estimated ? "~" : "", k->count, k->capped ? "+" : "");
        char *clean = xstrdup(t);
        int need = (int)strlen(t) + 3;
        if (x + need > r.x + r.w && x > r.x + 2) {
            y++;
            x = r.x + 2;
        }
        draw_raw(w, y, x, need - 3 < r.x + r.w - x ? need - 3 : r.x + r.w - x, clean,
                 theme_attr(c->theme, (ui_slot)slot_for_status(k->status)), c->san);
        free(clean);
        x += need;
    }
    return y + 1;
}

/* SQS (alakai): the backlog, the DLQ and any queue that stopped draining. */
static int overview_backlog(ui_ctx *c, WINDOW *w, int y, ui_rect r)
{
    rd_backlog b;
    model_backlog(c->model, &b);
    if (!b.queues && !b.dlqs)
        return y;
    char t[256];
    snprintf(t, sizeof t, "  SQS backlog %ld visible, %ld in flight, %ld delayed   SQS DLQ %ld",
             b.visible, b.in_flight, b.delayed, b.dead);
    draw_clean(w, y++, r.x, r.w, t, theme_attr(c->theme, b.dead > 0 ? TS_WARNING : TS_NORMAL));
    if (b.stuck) {
        char *s = xasprintf("  NOT DRAINING: %s (visible grows, nothing in flight)%s", b.stuck,
                            b.not_draining > 1 ? " and others" : "");
        draw_raw(w, y++, r.x, r.w, s, theme_attr(c->theme, TS_ALERT), c->san);
        free(s);
    }
    return y;
}

static int overview_health(ui_ctx *c, WINDOW *w, int y, ui_rect r)
{
    const rd_model *m = c->model;
    size_t unhealthy = 0, degraded = 0, idle_q = 0;
    for (size_t i = 0; i < m->workers.n; i++) {
        unhealthy += m->workers.items[i].health == RD_HEALTH_UNHEALTHY;
        degraded += m->workers.items[i].health == RD_HEALTH_DEGRADED;
    }
    for (size_t i = 0; i < m->queues.n; i++)
        idle_q += m->queues.items[i].depth > 0 && m->queues.items[i].consumers == 0;
    char rate[32], dlq[160], orphans[32], t[320];
    if (m->failing_rate >= 0)
        snprintf(rate, sizeof rate, "%.1f/min", m->failing_rate);
    else
        snprintf(rate, sizeof rate, "-");
    fmt_long(m->dlq_total, dlq, sizeof dlq);
    if (m->dlq_total >= 0) {   /* which source holds what: " (redis 2 + sqs 0)" */
        size_t l = strlen(dlq);
        model_dlq_breakdown(m, dlq + l, sizeof dlq - l);
    }
    if (m->dlq_total >= 0 && m->dlq_cached_at > 0) {   /* until the live total replaces it */
        char age[16];
        ctx_age(c, m->dlq_cached_at, age, sizeof age);
        size_t l = strlen(dlq);
        snprintf(dlq + l, sizeof dlq - l, " (cached %s ago)", age);
    }
    fmt_long(m->orphan_suspects, orphans, sizeof orphans);
    draw_clean(w, y++, r.x, r.w, "Health", theme_attr(c->theme, TS_HEADER));
    snprintf(t, sizeof t, "  failing now %s   DLQ size %s   orphan suspects %s", rate, dlq, orphans);
    draw_clean(w, y++, r.x, r.w, t, theme_attr(c->theme, m->orphan_suspects > 0 ? TS_WARNING : TS_NORMAL));
    char store[200];
    fleet_store_line(m, c->now, store, sizeof store);   /* the fleet's cells, same text */
    snprintf(t, sizeof t, "  %s", store);
    draw_clean(w, y++, r.x, r.w, t, theme_attr(c->theme, TS_NORMAL));
    snprintf(t, sizeof t, "  workers %zu: %zu unhealthy, %zu degraded   queues %zu: %zu unconsumed with messages",
             m->workers.n, unhealthy, degraded, m->queues.n, idle_q);
    draw_clean(w, y++, r.x, r.w, t, theme_attr(c->theme, unhealthy || idle_q ? TS_FAILED : TS_NORMAL));
    return overview_backlog(c, w, y, r);
}

/* The last hour beside the numbers above: failures/min, DLQ and backlog (nothing while
 * the history has no sample of them). */
static int overview_history(ui_ctx *c, WINDOW *w, int y, ui_rect r)
{
    static const struct { const char *label; int series; bool rate; int slot; } rows[] = {
        {"failures/min", HIST_FAIL_RATE, true, TS_FAILED},
        {"DLQ", HIST_DLQ, false, TS_WARNING},
        {"backlog", HISTD_BACKLOG, false, TS_RUNNING},
    };
    float v[HIST_N];
    bool any = false;
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        any |= histd_series(c->hist, rows[i].series, c->now, v);
    int width = r.w - 16 - 12;
    if (!any || width < 8 || y + 4 > r.y + r.h)
        return y;
    if (width > HIST_N / 3)
        width = HIST_N / 3;
    draw_clean(w, y++, r.x, r.w, "Last hour", theme_attr(c->theme, TS_HEADER));
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++, y++) {
        char t[32], top[16];
        snprintf(t, sizeof t, "  %-13s", rows[i].label);
        draw_clean(w, y, r.x, 16, t, theme_attr(c->theme, TS_NORMAL));
        float max = histd_spark(c, w, y, r.x + 16, width, c->hist, rows[i].series,
                                theme_attr(c->theme, (ui_slot)rows[i].slot));
        histd_value(max, rows[i].rate, top, sizeof top);
        snprintf(t, sizeof t, " max %s", top);
        if (histd_series(c->hist, rows[i].series, c->now, v))
            draw_clean(w, y, r.x + 16 + width, r.w - 16 - width, t, theme_attr(c->theme, TS_DIM));
    }
    return y;
}

static void overview_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    const char *sys = c->cfg ? c->cfg->name : "no system configured";
    char *t = xasprintf("Overview  %s%s%s", sys, c->cfg && c->cfg->profile ? "  profile " : "",
                        c->cfg && c->cfg->profile ? c->cfg->profile : "");
    draw_raw(w, r.y, r.x, r.w, t, theme_attr(c->theme, TS_TITLE), c->san);
    free(t);
    int y = overview_sources(c, w, r.y + 2, r);
    y = overview_counts(c, w, y + 1, r);
    y = overview_health(c, w, y + 1, r);
    y = overview_history(c, w, y + 1, r) - 1;
    if (c->diags && c->diags->n && y + 2 < r.y + r.h) {
        y++;
        draw_clean(w, y++, r.x, r.w, "Problems in the configuration files", theme_attr(c->theme, TS_WARNING));
        for (size_t i = 0; i < c->diags->n && y < r.y + r.h; i++)
            draw_raw(w, y++, r.x + 2, r.w - 2, c->diags->msgs[i], theme_attr(c->theme, TS_WARNING), c->san);
    }
    v->rows = r.h;
}

static unsigned overview_key(ui_view *v, ui_ctx *c, ui_action a)
{
    (void)v;
    if (a == UA_REFRESH) {
        ctx_fx(c, FX_REFRESH, 0, NULL);
        return UI_CH_REDRAW;
    }
    if (a == UA_OPEN) {
        ctx_fx(c, FX_VIEW, VIEW_EXECS, NULL);
        return UI_CH_REDRAW;
    }
    return UI_CH_UNHANDLED;
}

const ui_view_ops view_overview_ops = {
    .name = "overview", .title = "Overview", .bar = overview_bar,
    .panels = PANELS_WORKERS, .snapshot = "overview",
    .draw = overview_draw, .key = overview_key,
};
