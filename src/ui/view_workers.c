/* Workers: sorted by health then depth; reported vs computed health when they disagree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/drain.h"
#include "../core/xalloc.h"
#include "draw.h"
#include "view.h"

typedef struct workers_st {
    size_t *rows;
    size_t n_rows, cap;
    /* what rows were built from: a key or a paint with the same model, generation and
     * filter reuses them (the sort runs once per change, not twice per key) */
    const rd_model *model;
    uint64_t gen;
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

static int worker_cmp(const rd_worker *a, const rd_worker *b)
{
    int d = health_rank(a->health) - health_rank(b->health);
    if (d)
        return d;
    return (a->queue_depth < b->queue_depth) - (a->queue_depth > b->queue_depth);
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
    s->n_rows = 0;
    for (size_t i = 0; i < m->workers.n; i++) {
        if (!worker_visible(&m->workers.items[i], c->filter[VIEW_WORKERS].text))
            continue;
        size_t j = s->n_rows++;
        while (j > 0 && worker_cmp(&m->workers.items[s->rows[j - 1]], &m->workers.items[i]) > 0) {
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

static void worker_cells(const rd_worker *w, ui_ctx *c, char cells[][64])
{
    ctx_age(c, w->heartbeat_at, cells[0], 64);
    fmt_long(w->queue_depth, cells[1], 64);
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

static void workers_detail(const rd_worker *w, ui_ctx *c, WINDOW *win, int y, ui_rect r)
{
    char *t;
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
    filter_title(c, win, r, n, &c->filter[VIEW_WORKERS]);
    ui_col cols[] = {
        {"NAME", 10, 18, 2, 0, false, 0, 0},  {"STATUS", 8, 9, 0, 0, false, 0, 0},
        {"HEALTH", 10, 10, 0, 0, false, 0, 0}, {"REASON", 14, 24, 3, 0, false, 0, 0},
        {"HB", 4, 5, 0, 0, true, 0, 0},       {"DEPTH", 5, 6, 0, 0, true, 0, 0},
        {"LOAD", 5, 7, 0, 0, true, 0, 0},     {"FAIL", 4, 5, 0, 2, true, 0, 0},
        {"CF", 3, 4, 0, 3, true, 0, 0},       {"TAGS", 8, 16, 1, 4, false, 0, 0},
    };
    int nc = (int)(sizeof cols / sizeof *cols);
    v->rows = r.h - 3 < 1 ? 1 : r.h - 3;
    v->list_y = r.y + 2;
    v->list.n = (int)s->n_rows;
    list_follow(&v->list, c, "worker", workers_row_id, s);   /* re-sorted by health */
    list_fit(&v->list, v->rows);
    int namew = 0;   /* the names on screen, whole up to 32 columns, else cut in the middle */
    for (int i = v->list.top; i < v->list.top + v->rows && i < v->list.n; i++) {
        const rd_worker *w = &c->model->workers.items[s->rows[i]];
        int wn = text_cols(w->name ? w->name : w->id, c->san);
        namew = wn > namew ? wn : namew;
    }
    if (s->n_rows)
        col_content(&cols[0], namew, 20, 32);
    col_clock(c, &cols[4]);
    cols_layout(cols, nc, r.w);
    cols_header(win, r.y + 1, r.x, cols, nc, theme_attr(c->theme, TS_HEADER));
    if (!s->n_rows)
        draw_clean(win, r.y + 2, r.x + 2, r.w - 2, "no workers", theme_attr(c->theme, TS_DIM));
    for (int i = 0; i < v->rows && v->list.top + i < v->list.n; i++) {
        int idx = v->list.top + i;
        const rd_worker *w = &c->model->workers.items[s->rows[idx]];
        bool cur = idx == v->list.cur;
        int base = cur ? theme_attr(c->theme, TS_CURSOR) : 0, y = r.y + 2 + i;
        char cells[6][64];
        worker_cells(w, c, cells);
        draw_fill(win, y, r.x, r.w, base);
        char *reason = health_disagrees(w) ? xasprintf("%s (reports %s)", w->health_reason, w->reported_health)
                                           : xstrdup(w->health_reason);
        cols_cell_mid(win, y, r.x, &cols[0], w->name ? w->name : w->id, base, c->san);
        cols_cell(win, y, r.x, &cols[1], w->status ? w->status : "-", base, c->san);
        cols_cell(win, y, r.x, &cols[2], cells[5], cur ? base : theme_attr(c->theme, (ui_slot)slot_for_health(w->health)), c->san);
        cols_cell(win, y, r.x, &cols[3], reason, cur ? base : theme_attr(c->theme, health_disagrees(w) ? TS_WARNING : TS_NORMAL), c->san);
        cols_cell(win, y, r.x, &cols[4], cells[0], base, c->san);
        cols_cell(win, y, r.x, &cols[5], cells[1], base, c->san);
        cols_cell(win, y, r.x, &cols[6], cells[2], base, c->san);
        cols_cell(win, y, r.x, &cols[7], cells[3], base, c->san);
        cols_cell(win, y, r.x, &cols[8], cells[4], base, c->san);
        cols_cell(win, y, r.x, &cols[9], w->tags ? w->tags : "", base, c->san);
        free(reason);
    }
    if (s->n_rows && r.h >= 5)
        workers_detail(&c->model->workers.items[s->rows[v->list.cur]], c, win, r.y + r.h - 1, r);
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
    if (s)
        free(s->rows);
    free(s);
    v->st = NULL;
}

const ui_view_ops view_workers_ops = {
    .name = "workers", .title = "Workers", .bar = workers_bar,
    .draw = workers_draw, .key = workers_key, .search = true,
    .clickable = true, .row_id = workers_row_id, .free = workers_free,
};
