/* Queues: depth, ready/unacked, consumers, rates; DLQs and unconsumed queues stand out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "draw.h"
#include "histdraw.h"
#include "table.h"
#include "view.h"

typedef struct queues_st {
    size_t *rows;
    size_t n_rows, cap;
} queues_st;

static const ui_action queues_bar[] = {UA_OPEN, UA_VIEW_DLQ, UA_SEARCH, UA_REFRESH, UA_HELP, UA_QUIT, UA_NONE};

static queues_st *st_of(ui_view *v)
{
    if (!v->st)
        v->st = xcalloc(1, sizeof(queues_st));
    return v->st;
}

/* messages waiting with nobody consuming them */
static bool queue_alert(const rd_queue *q)
{
    return q->depth > 0 && q->consumers == 0;
}

static int queue_rank(const rd_queue *q)
{
    return queue_alert(q) || q->not_draining ? 0 : q->is_dlq && q->depth > 0 ? 1 : 2;
}

static int queue_cmp(const rd_queue *a, const rd_queue *b)
{
    int d = queue_rank(a) - queue_rank(b);
    if (d)
        return d;
    return (a->depth < b->depth) - (a->depth > b->depth);
}

static void queues_rows(queues_st *s, const ui_ctx *c)
{
    const rd_model *m = c->model;
    xgrow(&s->rows, &s->cap, m->queues.n + 1, sizeof *s->rows);
    s->n_rows = 0;
    for (size_t i = 0; i < m->queues.n; i++) {
        if (!ui_match(m->queues.items[i].name, c->filter[VIEW_QUEUES].text))
            continue;
        size_t j = s->n_rows++;
        while (j > 0 && queue_cmp(&m->queues.items[s->rows[j - 1]], &m->queues.items[i]) > 0) {
            s->rows[j] = s->rows[j - 1];
            j--;
        }
        s->rows[j] = i;
    }
}

static void rate_text(double r, char *out, size_t cap)
{
    if (r < 0)
        snprintf(out, cap, "-");
    else
        snprintf(out, cap, "%.1f", r);
}

static void queue_row(ui_ctx *c, const ui_table_row *row)
{
    const queues_st *s = row->st;
    const rd_queue *q = &c->model->queues.items[s->rows[row->idx]];
    int base = row->cur ? theme_attr(c->theme, TS_CURSOR)
               : queue_alert(q) || q->not_draining ? theme_attr(c->theme, TS_ALERT)
               : q->is_dlq && q->depth > 0 ? theme_attr(c->theme, TS_WARNING) : 0;
    char cells[7][32];
    fmt_long(q->depth, cells[0], 32);
    fmt_long(q->ready, cells[1], 32);
    fmt_long(q->unacked, cells[2], 32);
    fmt_long(q->consumers, cells[3], 32);
    rate_text(q->publish_rate, cells[4], 32);
    rate_text(q->deliver_rate, cells[5], 32);
    if (q->ttl_ms >= 0)
        snprintf(cells[6], 32, "%lds", q->ttl_ms / 1000);
    else
        snprintf(cells[6], 32, "-");
    const char *note = queue_alert(q) ? "no consumers!" : q->not_draining ? "NOT DRAINING"
                       : q->dead_letter_exchange ? q->dead_letter_exchange : "";
    const char *text[] = {q->name ? q->name : "-", cells[0], cells[1], cells[2], cells[3], cells[4],
                          cells[5], q->is_dlq ? "DLQ" : "", cells[6], note, NULL};
    row_cells(c, row, text, base);
    int series = q->name ? histd_queue(c->hist, q->name) : -1;
    if (row->n_cols > 10 && row->cols[10].w > 0 && series >= 0 && !row->seen)
        histd_spark(c, row->w, row->y, row->r.x + row->cols[10].x, row->cols[10].w, c->hist, series,
                    row->cur ? base : theme_attr(c->theme, TS_RUNNING));
}

static void queues_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    queues_st *s = st_of(v);
    queues_rows(s, c);
    size_t alerts = 0, dlqs = 0, stuck = 0;
    for (size_t i = 0; i < c->model->queues.n; i++) {
        alerts += queue_alert(&c->model->queues.items[i]);
        dlqs += c->model->queues.items[i].is_dlq;
        stuck += c->model->queues.items[i].not_draining;
    }
    char t[200];
    snprintf(t, sizeof t, "Queues  %zu shown of %zu  %zu DLQ  %zu with messages and no consumers", s->n_rows,
             c->model->queues.n, dlqs, alerts);
    if (stuck)
        snprintf(t + strlen(t), sizeof t - strlen(t), "  %zu NOT DRAINING", stuck);
    alerts += stuck;
    draw_clean(w, r.y, r.x, r.w, t, theme_attr(c->theme, alerts ? TS_WARNING : TS_TITLE));
    filter_title(c, w, r, (int)strlen(t), &c->filter[VIEW_QUEUES]);
    ui_col cols[] = {
        {.title = "QUEUE", .min = 14, .want = 30, .weight = 3},
        {.title = "DEPTH", .min = 6, .want = 7, .right = true},
        {.title = "READY", .min = 6, .want = 7, .drop = 2, .right = true},
        {.title = "UNACK", .min = 5, .want = 6, .drop = 3, .right = true},
        {.title = "CONS", .min = 4, .want = 5, .right = true},
        {.title = "IN/s", .min = 5, .want = 6, .drop = 4, .right = true},
        {.title = "OUT/s", .min = 5, .want = 6, .drop = 4, .right = true},
        {.title = "DLQ", .min = 3, .want = 3},
        {.title = "TTL", .min = 4, .want = 6, .drop = 5, .right = true},
        {.title = "NOTE", .min = 10, .want = 16, .weight = 1, .drop = 1},
        {.title = "DEPTH 1H", .min = 8, .want = 24, .drop = 6},   /* the depth's last hour (histdraw.h) */
    };
    int nc = (int)(sizeof cols / sizeof *cols) - (histd_queues(c->hist) ? 0 : 1);
    if (stuck)
        cols[9].min = 12;       /* "NOT DRAINING" whole */
    view_table(v, c, w, r, &(ui_table){
        .cols = cols, .n_cols = nc, .y = r.y + 1, .rows = r.h - 2, .n = (int)s->n_rows, .st = s,
        .empty = "no queues (no broker configured, or none match)", .row = queue_row});
}

static unsigned queues_key(ui_view *v, ui_ctx *c, ui_action a)
{
    queues_st *s = st_of(v);
    queues_rows(s, c);
    v->list.n = (int)s->n_rows;
    unsigned ch = list_key(&v->list, c, a, v->rows);
    if (!(ch & UI_CH_UNHANDLED))
        return ch;
    if (a == UA_OPEN && s->n_rows) {
        const rd_queue *q = &c->model->queues.items[s->rows[v->list.cur]];
        if (q->is_dlq)
            ctx_fx(c, FX_VIEW, VIEW_DLQ, NULL);
        else
            ctx_msg(c, false, "only DLQs can be opened (peek)");
        return UI_CH_REDRAW;
    }
    return UI_CH_UNHANDLED;
}

static void queues_free(ui_view *v)
{
    queues_st *s = v->st;
    if (s)
        free(s->rows);
    free(s);
    v->st = NULL;
}

const ui_view_ops view_queues_ops = {
    .name = "queues", .title = "Queues", .bar = queues_bar,
    .panels = PANELS_NONE, .snapshot = "queues",
    .draw = queues_draw, .key = queues_key, .clickable = true, .search = true, .free = queues_free,
};
