/* Workers: sorted by health then depth; reported vs computed health when they disagree.
 * DEPTH is the broker's count of the worker's own queue where a broker is configured (the
 * worker's own figure beside it as OWN: a worker stuck in an error loop reports 0 while
 * its queue fills), else the worker's own figure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/drain.h"
#include "../core/xalloc.h"
#include "draw.h"
#include "table.h"
#include "view.h"

typedef struct workers_st {
    size_t *rows;
    size_t n_rows, cap;
    /* what rows were built from: a key or a paint with the same model, generation and
     * filter reuses them (the sort runs once per change, not twice per key) */
    const rd_model *model;
    uint64_t gen;
    long *depth;            /* per model worker: the broker's depth of its queues, -1 none */
    size_t depth_cap;
    bool broker;            /* the system has a broker: BROKER and OWN columns */
    char filter[sizeof ((ui_filter *)0)->text];
    bool built;
} workers_st;

static const ui_action workers_bar[] = {UA_OPEN, UA_DRAIN, UA_UNDRAIN, UA_DEACTIVATE, UA_ACTIVATE,
                                        UA_SEARCH, UA_HELP, UA_QUIT, UA_NONE};

static workers_st *st_of(ui_view *v)
{
    if (!v->st)
        v->st = xcalloc(1, sizeof(workers_st));
    return v->st;
}

static int health_rank(rd_health h)
{
    switch (h) {
    case RD_HEALTH_UNHEALTHY: return 0;
    case RD_HEALTH_DEGRADED: return 1;
    case RD_HEALTH_UNKNOWN: return 2;
    default: return 3;
    }
}

/* The depth the view sorts by: the broker's where it knows the worker's queue. */
static long sort_depth(const workers_st *s, size_t i, const rd_worker *w)
{
    return s->depth[i] >= 0 ? s->depth[i] : w->queue_depth;
}

static int worker_cmp(const workers_st *s, size_t ia, size_t ib, const rd_model *m)
{
    const rd_worker *a = &m->workers.items[ia], *b = &m->workers.items[ib];
    int d = health_rank(a->health) - health_rank(b->health);
    if (d)
        return d;
    long da = sort_depth(s, ia, a), db = sort_depth(s, ib, b);
    return (da < db) - (da > db);
}

static bool worker_visible(const rd_worker *w, const char *text)
{
    return ui_match(w->name, text) || ui_match(w->id, text) || ui_match(w->status, text) ||
           ui_match(w->tags, text) || ui_match(health_name(w->health), text);
}

static void workers_rows(workers_st *s, const ui_ctx *c)
{
    const rd_model *m = c->model;
    if (s->built && s->model == m && s->gen == m->generation && strcmp(s->filter, c->filter[VIEW_WORKERS].text) == 0)
        return;
    s->built = true;
    s->model = m;
    s->gen = m->generation;
    snprintf(s->filter, sizeof s->filter, "%s", c->filter[VIEW_WORKERS].text);
    xgrow(&s->rows, &s->cap, m->workers.n + 1, sizeof *s->rows);
    xgrow(&s->depth, &s->depth_cap, m->workers.n + 1, sizeof *s->depth);
    s->broker = drain_has_broker(m);
    for (size_t i = 0; i < m->workers.n; i++)
        s->depth[i] = drain_broker_depth(m, &m->workers.items[i], NULL);
    s->n_rows = 0;
    for (size_t i = 0; i < m->workers.n; i++) {
        if (!worker_visible(&m->workers.items[i], c->filter[VIEW_WORKERS].text))
            continue;
        size_t j = s->n_rows++;
        while (j > 0 && worker_cmp(s, s->rows[j - 1], i, m) > 0) {
            s->rows[j] = s->rows[j - 1];
            j--;
        }
        s->rows[j] = i;
    }
}

static const char *workers_row_id(const ui_ctx *c, const void *st, int row)
{
    const workers_st *s = st;
    return c->model->workers.items[s->rows[row]].id;
}

static bool health_disagrees(const rd_worker *w)
{
    return w->reported_health && *w->reported_health &&
           strcasecmp(w->reported_health, health_name(w->health)) != 0;
}

static void worker_cells(const rd_worker *w, long broker, ui_ctx *c, char cells[][64])
{
    ctx_age(c, w->heartbeat_at, cells[0], 64);
    fmt_long(w->queue_depth, cells[1], 64);
    fmt_long(broker, cells[6], 64);
    if (w->in_flight >= 0 && w->capacity >= 0)
        snprintf(cells[2], 64, "%d/%d", w->in_flight, w->capacity);
    else if (w->in_flight >= 0)
        snprintf(cells[2], 64, "%d/-", w->in_flight);
    else
        snprintf(cells[2], 64, "-");
    if (w->failure_rate >= 0)
        snprintf(cells[3], 64, "%.0f%%", w->failure_rate * 100);
    else
        snprintf(cells[3], 64, "-");
    fmt_long(w->consecutive_failures, cells[4], 64);
    snprintf(cells[5], 64, "%s%s", health_disagrees(w) ? "!" : "", health_name(w->health));
}

static void workers_detail(const rd_worker *w, long broker, ui_ctx *c, WINDOW *win, int y, ui_rect r)
{
    char *t;
    const char *qname = NULL;
    if (broker >= 0 && broker != w->queue_depth && drain_broker_depth(c->model, w, &qname) >= 0 && qname) {
        char own[24];
        fmt_long(w->queue_depth, own, sizeof own);
        t = xasprintf("%s: the broker holds %ld in %s%s; the worker reports %s", w->name ? w->name : w->id,
                      broker, qname, broker > 0 && w->queue_depth <= 0 ? " (not consumed?)" : "", own);
        draw_raw(win, y, r.x, r.w, t, theme_attr(c->theme, TS_WARNING), c->san);
        free(t);
        return;
    }
    if (health_disagrees(w))
        t = xasprintf("%s reports '%s' but is %s: %s", w->name ? w->name : w->id, w->reported_health,
                      health_name(w->health), w->health_reason);
    else
        t = xasprintf("%s  %s: %s  status %s  tags %s", w->name ? w->name : "-", health_name(w->health),
                      w->health_reason[0] ? w->health_reason : "-", w->status ? w->status : "-",
                      w->tags ? w->tags : "-");
    draw_raw(win, y, r.x, r.w, t, theme_attr(c->theme, health_disagrees(w) ? TS_WARNING : TS_DIM), c->san);
    free(t);
}

/* The heartbeat as wide as clock times need (the others are sized to the rows on screen
 * by the table). */
static void workers_widths(const ui_view *v, const ui_ctx *c, ui_col *cols)
{
    (void)v;
    col_clock(c, &cols[4]);
}

static void worker_row(ui_ctx *c, const ui_table_row *row)
{
    const workers_st *s = row->st;
    const rd_worker *w = &c->model->workers.items[s->rows[row->idx]];
    bool cur = row->cur;
    int base = row_base(c, row);
    char cells[7][64];
    long broker = s->depth[s->rows[row->idx]];
    worker_cells(w, broker, c, cells);
    char *reason = health_disagrees(w) ? xasprintf("%s (reports %s)", w->health_reason, w->reported_health)
                                       : xstrdup(w->health_reason);
    /* with a broker: DEPTH is the broker's (BROKER), the worker's own figure beside it (OWN) */
    const char *text[] = {w->name ? w->name : w->id, w->status ? w->status : "-", NULL, NULL, cells[0],
                          s->broker ? cells[6] : cells[1], s->broker ? cells[1] : cells[2],
                          s->broker ? cells[2] : cells[3], s->broker ? cells[3] : cells[4],
                          s->broker ? cells[4] : w->tags ? w->tags : "", w->tags ? w->tags : ""};
    row_cells(c, row, text, base);
    row_cell(c, row, 2, cells[5], cur ? base : theme_attr(c->theme, (ui_slot)slot_for_health(w->health)));
    row_cell(c, row, 3, reason,
             cur ? base : theme_attr(c->theme, health_disagrees(w) ? TS_WARNING : TS_NORMAL));
    free(reason);
}

static void workers_draw(ui_view *v, ui_ctx *c, WINDOW *win, ui_rect r)
{
    workers_st *s = st_of(v);
    workers_rows(s, c);
    size_t bad = 0;
    for (size_t i = 0; i < c->model->workers.n; i++)
        bad += c->model->workers.items[i].health == RD_HEALTH_UNHEALTHY;
    char t[160];
    int n = snprintf(t, sizeof t, "Workers  %zu shown of %zu  %zu unhealthy  sorted by health, then depth",
                     s->n_rows, c->model->workers.n, bad);
    draw_clean(win, r.y, r.x, r.w, t, theme_attr(c->theme, TS_TITLE));
    n = filter_title(c, win, r, n, &c->filter[VIEW_WORKERS]);   /* the filter before the note */
    if (s->broker && n < r.w)
        draw_clean(win, r.y, r.x + n, r.w - n, "  (depth: BROKER the broker's count, OWN the worker's)",
                   theme_attr(c->theme, TS_TITLE));
    ui_col cols[] = {
        {.title = "NAME", .min = 10, .want = 18, .weight = 2, .mid = true},
        {.title = "STATUS", .min = 8, .want = 9},
        {.title = "HEALTH", .min = 10, .want = 10},
        {.title = "REASON", .min = 14, .want = 24, .weight = 3},
        {.title = "HB", .min = 4, .want = 5, .right = true},
        {.title = "DEPTH", .min = 5, .want = 6, .right = true},
        {.title = "LOAD", .min = 5, .want = 7, .right = true},
        {.title = "FAIL", .min = 4, .want = 5, .drop = 2, .right = true},
        {.title = "CF", .min = 3, .want = 4, .drop = 3, .right = true},
        {.title = "TAGS", .min = 8, .want = 16, .weight = 1, .drop = 4},
    };
    ui_col bcols[] = {
        cols[0], cols[1], cols[2], cols[3], cols[4],
        {.title = "BROKER", .min = 6, .want = 6, .right = true},
        {.title = "OWN", .min = 4, .want = 5, .drop = 2, .right = true},
        cols[6], cols[7], cols[8], cols[9],
    };
    ui_col *use = s->broker ? bcols : cols;
    int n_use = s->broker ? (int)(sizeof bcols / sizeof *bcols) : (int)(sizeof cols / sizeof *cols);
    view_table(v, c, win, r, &(ui_table){   /* re-sorted by health: the worker is followed */
        .cols = use, .n_cols = n_use, .y = r.y + 1, .rows = r.h - 3,
        .n = (int)s->n_rows, .st = s, .row_id = workers_row_id, .what = "worker", .fit = workers_widths,
        .empty = "no workers", .row = worker_row});
    if (s->n_rows && r.h >= 5)
        workers_detail(&c->model->workers.items[s->rows[v->list.cur]], s->depth[s->rows[v->list.cur]], c, win,
                       r.y + r.h - 1, r);
}

static void note_line(const char *line, void *ud)
{
    sel_note(ud, "%s", line);
}

/* What the operator must see before draining or deactivating this worker. */
static void workers_notes(ui_ctx *c, const rd_worker *w, rd_action kind)
{
    const rd_model *m = c->model;
    ui_sel *sel = &c->sel;
    if (w->in_flight >= 0)
        sel_note(sel, "in flight on this worker: %d (capacity %d)", w->in_flight, w->capacity);
    else
        sel_note(sel, "in flight on this worker: unknown");
    size_t shown = 0;
    for (size_t i = 0; i < m->execs.n && shown < 5; i++) {
        const rd_execution *e = &m->execs.items[i];
        if (e->worker && (strcmp(e->worker, w->id) == 0 || (w->name && strcmp(e->worker, w->name) == 0)) &&
            e->status && strcasecmp(e->status, "running") == 0) {
            sel_note(sel, "  running here: %s %s", e->id, e->name ? e->name : "");
            shown++;
        }
    }
    drain_warnings(m, w, note_line, sel);   /* the rules: core/drain.h, as `redrive drain` */
    if (kind == RD_ACT_DRAIN)
        sel_note(sel, "the drain cockpit opens and follows it until it is empty");
}

static unsigned workers_act(ui_ctx *c, const rd_worker *w, ui_action a)
{
    rd_action kind = a == UA_DRAIN ? RD_ACT_DRAIN : a == UA_UNDRAIN ? RD_ACT_UNDRAIN
                     : a == UA_DEACTIVATE ? RD_ACT_DEACTIVATE : RD_ACT_ACTIVATE;
    if (!w) {
        ctx_msg(c, true, "no worker selected");
        return UI_CH_REDRAW;
    }
    sel_clear(&c->sel);
    sel_add(&c->sel, w->id, NULL, w->name, NULL);
    if (kind == RD_ACT_DRAIN || kind == RD_ACT_DEACTIVATE)
        workers_notes(c, w, kind);
    ctx_fx(c, FX_ACT, (int)kind, NULL);
    return UI_CH_REDRAW;
}

static unsigned workers_key(ui_view *v, ui_ctx *c, ui_action a)
{
    workers_st *s = st_of(v);
    workers_rows(s, c);
    v->list.n = (int)s->n_rows;
    bool kept = list_follow(&v->list, c, "worker", workers_row_id, s);
    list_fit(&v->list, v->rows);
    const rd_worker *w = s->n_rows ? &c->model->workers.items[s->rows[v->list.cur]] : NULL;
    unsigned ch = list_nav(&v->list, a, v->rows);
    if (!(ch & UI_CH_UNHANDLED)) {
        list_pin(&v->list, c, workers_row_id, s);
        return ch;
    }
    if (!kept && (a == UA_DRAIN || a == UA_UNDRAIN || a == UA_DEACTIVATE || a == UA_ACTIVATE ||
                  a == UA_OPEN)) {
        char was[sizeof c->msg];   /* never act on the worker that slid under the cursor */
        memcpy(was, c->msg, sizeof was);
        ctx_msg(c, true, "%.200s: nothing done", was);
        return UI_CH_REDRAW;
    }
    switch (a) {
    case UA_DRAIN: case UA_UNDRAIN: case UA_DEACTIVATE: case UA_ACTIVATE:
        return workers_act(c, w, a);
    case UA_OPEN:
        if (w && w->status && (strcasecmp(w->status, "draining") == 0 || strcasecmp(w->status, "cordoned") == 0)) {
            ctx_fx(c, FX_VIEW, VIEW_DRAIN, w->id);   /* a draining worker: its cockpit */
            return UI_CH_REDRAW;
        }
        if (w) {   /* the executions this worker ran: stores record its id, not its name */
            ui_filter *f = &c->filter[VIEW_EXECS];
            memset(f, 0, sizeof *f);
            ui_copy_text(f->worker, sizeof f->worker, w->id);
            ctx_fx(c, FX_FILTER, VIEW_EXECS, NULL);
            ctx_fx(c, FX_VIEW, VIEW_EXECS, NULL);
        }
        return UI_CH_REDRAW;
    case UA_COPY:
        sel_clear(&c->sel);
        if (w)
            sel_add(&c->sel, w->id, NULL, NULL, NULL);
        ctx_fx(c, FX_COPY, 0, NULL);
        return UI_CH_REDRAW;
    case UA_REFRESH: ctx_fx(c, FX_REFRESH, 0, NULL); return UI_CH_REDRAW;
    default: return UI_CH_UNHANDLED;
    }
}

static void workers_free(ui_view *v)
{
    workers_st *s = v->st;
    if (s) {
        free(s->rows);
        free(s->depth);
    }
    free(s);
    v->st = NULL;
}

const ui_view_ops view_workers_ops = {
    .name = "workers", .title = "Workers", .bar = workers_bar,
    .panels = PANELS_WORKERS, .snapshot = "workers",
    .draw = workers_draw, .key = workers_key, .search = true,
    .clickable = true, .row_id = workers_row_id, .free = workers_free,
};
