/* Batches (:batches, issue 35): every batch record of every system, newest first, with
 * its progress, its result counts, its rate and window and its age; a batch this console
 * sends counts live. Enter opens a batch's items grouped by state (failed first); S
 * resumes (pressed twice), P pauses (recorded), x aborts, + - change the rate and > < the
 * requests in flight, all through the app (FX_BATCH, batches.c), which reads the records
 * off the loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../actions/batchrec.h"
#include "../core/xalloc.h"
#include "draw.h"
#include "table.h"
#include "view.h"

static const ui_action batches_bar[] = {UA_OPEN, UA_BATCH_RESUME, UA_BATCH_PAUSE, UA_BATCH_ABORT,
                                        UA_BATCH_RATE_UP, UA_BATCH_RATE_DOWN, UA_REFRESH, UA_BACK,
                                        UA_HELP, UA_NONE};

typedef struct batches_st {
    char open[17];             /* the batch whose items are listed, "" = the list */
    int list_cur;              /* the list's cursor, kept while its items show */
} batches_st;

static batches_st *st_of(ui_view *v)
{
    if (!v->st)
        v->st = xcalloc(1, sizeof(batches_st));
    return v->st;
}

static const ui_batches *data(const ui_ctx *c)
{
    static const ui_batches none = {0};
    return c->batches ? c->batches : &none;
}

static void batches_open(ui_view *v, ui_ctx *c, const char *arg)
{
    (void)arg;
    st_of(v)->open[0] = 0;
    ctx_fx(c, FX_BATCH, BATCH_OP_LIST, "");
}

static const char *row_id(const ui_ctx *c, const void *st, int row)
{
    (void)st;
    const ui_batches *d = data(c);
    return row >= 0 && (size_t)row < d->n ? d->rows[row].id : NULL;
}

static ui_slot state_slot(const char *state)
{
    if (!strcmp(state, "running"))
        return TS_RUNNING;
    if (!strcmp(state, "paused") || !strcmp(state, "open"))
        return TS_WARNING;
    if (!strcmp(state, "done"))
        return TS_OK;
    return TS_DIM;
}

static void rate_text(const ui_batch_row *b, char *out, size_t cap)
{
    if (b->rate <= 0)
        snprintf(out, cap, "-");
    else   /* the system's rate_limit, not its own: marked */
        snprintf(out, cap, "%g/s%s", b->rate, b->rate_own ? "" : "*");
}

static void batch_row(ui_ctx *c, const ui_table_row *row)
{
    const ui_batch_row *b = &data(c)->rows[row->idx];
    int base = row_base(c, row);
    char id[12], prog[48], ok[24], failed[24], unknown[24], held[24], rate[24], conc[12], age[24];
    snprintf(id, sizeof id, "%.8s", b->id);
    snprintf(prog, sizeof prog, "%zu/%zu", b->sent, b->total);
    snprintf(ok, sizeof ok, "%zu", b->ok);
    snprintf(failed, sizeof failed, "%zu", b->failed);
    snprintf(unknown, sizeof unknown, "%zu", b->unknown);
    if (b->live)
        snprintf(held, sizeof held, "%zu", b->held);
    else
        snprintf(held, sizeof held, "-");
    rate_text(b, rate, sizeof rate);
    if (b->concurrency > 0)
        snprintf(conc, sizeof conc, "%d", b->concurrency);
    else
        snprintf(conc, sizeof conc, "-");
    ctx_age(c, b->created, age, sizeof age);
    const char *text[] = {id, b->system, b->action, NULL, prog, ok, failed, unknown, held, rate, conc,
                          age, b->outcome ? b->outcome : "-"};
    row_cells(c, row, text, base);
    row_cell(c, row, 3, b->state, row->cur ? base : theme_attr(c->theme, state_slot(b->state)));
}

static void list_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    const ui_batches *d = data(c);
    size_t running = 0;
    for (size_t i = 0; i < d->n; i++)
        running += !strcmp(d->rows[i].state, "running");
    char t[280], dmg[80] = "", late[64] = "";
    if (d->damaged)
        snprintf(dmg, sizeof dmg, "; %zu damaged left out (redrive batch list)", d->damaged);
    if (d->read && c->now - d->read_at > 5) {   /* the reader is behind: the counts are older */
        char ago[24];
        ctx_age(c, d->read_at, ago, sizeof ago);
        snprintf(late, sizeof late, " (as read %s ago)", ago);
    }
    snprintf(t, sizeof t, "Batches  %zu, %zu running%s  (newest first; counts from the journal%s%s)", d->n,
             running, dmg, d->read ? ", read every 2 s; running here: live" : ": reading ...", late);
    draw_raw(w, r.y, r.x, r.w, t, theme_attr(c->theme, TS_TITLE), c->san);
    ui_col cols[] = {
        {.title = "ID", .min = 8, .want = 8},
        {.title = "SYSTEM", .min = 6, .want = 12, .weight = 1, .mid = true},
        {.title = "ACTION", .min = 6, .want = 7, .drop = 3},
        {.title = "STATE", .min = 9, .want = 9},
        {.title = "SENT/TOTAL", .min = 10, .want = 13, .right = true},
        {.title = "OK", .min = 5, .want = 7, .right = true},
        {.title = "FAILED", .min = 6, .want = 7, .right = true},
        {.title = "UNKNOWN", .min = 7, .want = 7, .right = true, .drop = 2},
        {.title = "HELD", .min = 5, .want = 5, .right = true, .drop = 4},
        {.title = "RATE", .min = 6, .want = 8, .right = true},
        {.title = "WINDOW", .min = 6, .want = 6, .right = true, .drop = 1},
        {.title = "AGE", .min = 5, .want = 6, .right = true, .drop = 5},
        {.title = "OUTCOME", .min = 8, .want = 24, .weight = 2, .drop = 6},
    };
    int nc = (int)(sizeof cols / sizeof *cols);
    col_clock(c, &cols[11]);
    int foot = d->error ? 2 : 1;
    view_table(v, c, w, r, &(ui_table){
        .cols = cols, .n_cols = nc, .y = r.y + 1, .rows = r.h - 2 - foot, .n = (int)d->n, .st = d,
        .row_id = row_id, .what = "batch",
        .empty = d->read ? "no batches: R or r sends a whole set as one (then it is listed here)"
                         : "reading the batch records ...",
        .row = batch_row});
    int y = r.y + r.h - foot;
    if (d->error) {
        char *e = xasprintf("cannot read the batch records: %s", d->error);
        draw_raw(w, y++, r.x, r.w, e, theme_attr(c->theme, TS_ERROR), c->san);
        free(e);
    }
    draw_raw(w, y, r.x, r.w, "RATE *: the system's rate_limit (none set for the batch)   "
             "S resume  P pause  x abort  + - rate  > < window  Enter: its items",
             theme_attr(c->theme, TS_DIM), c->san);
}

/* ---- one batch's items ---------------------------------------------------------------- */

static const char *item_state(unsigned char s)
{
    return s == BITEM_FAILED ? "failed" : s == BITEM_UNKNOWN ? "unknown" : s == BITEM_NONE ? "not sent" : "ok";
}

static void item_row(ui_ctx *c, const ui_table_row *row)
{
    const ui_batch_item *it = &data(c)->items[row->idx];
    int base = row_base(c, row);
    char num[24];
    snprintf(num, sizeof num, "%zu", it->item);
    const char *text[] = {NULL, num, it->target};
    row_cells(c, row, text, base);
    ui_slot slot = it->state == BITEM_FAILED ? TS_FAILED : it->state == BITEM_UNKNOWN ? TS_WARNING
                   : it->state == BITEM_NONE ? TS_DIM : TS_OK;
    row_cell(c, row, 0, item_state(it->state), row->cur ? base : theme_attr(c->theme, slot));
}

static const ui_batch_row *row_of(const ui_ctx *c, const char *id)
{
    const ui_batches *d = data(c);
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->rows[i].id, id))
            return &d->rows[i];
    return NULL;
}

static void items_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r, const char *id)
{
    const ui_batches *d = data(c);
    const ui_batch_row *b = row_of(c, id);
    char t[300];
    if (b)
        snprintf(t, sizeof t, "Batch %s  %s on %s, %s: %zu ok, %zu failed, %zu unknown, %zu not sent of %zu"
                 "  (Back: the list)", id, b->action, b->system, b->state, b->ok, b->failed, b->unknown,
                 b->total - b->sent, b->total);
    else
        snprintf(t, sizeof t, "Batch %s  (Back: the list)", id);
    draw_raw(w, r.y, r.x, r.w, t, theme_attr(c->theme, TS_TITLE), c->san);
    bool ready = d->items_read && !strcmp(d->items_of, id);
    char sub[160] = "";
    if (ready && d->n_items < d->items_total)
        snprintf(sub, sizeof sub, "items grouped by state, failed first: the first %zu of %zu shown (each group's first)",
                 d->n_items, d->items_total);
    else if (ready)
        snprintf(sub, sizeof sub, "items grouped by state, failed first (read every 2 s)");
    draw_raw(w, r.y + 1, r.x, r.w, sub, theme_attr(c->theme, TS_DIM), c->san);
    ui_col cols[] = {
        {.title = "STATE", .min = 8, .want = 9},
        {.title = "ITEM", .min = 5, .want = 7, .right = true},
        {.title = "TARGET", .min = 10, .want = 40, .weight = 1, .mid = true},
    };
    view_table(v, c, w, r, &(ui_table){
        .cols = cols, .n_cols = 3, .y = r.y + 2, .rows = r.h - 3, .n = ready ? (int)d->n_items : 0,
        .st = d, .empty = ready ? "no items" : "reading its items ...", .row = item_row});
}

static void batches_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    batches_st *s = st_of(v);
    if (s->open[0])
        items_draw(v, c, w, r, s->open);
    else
        list_draw(v, c, w, r);
}

/* The batch under the cursor (the list), or the one open. */
static const char *selected(ui_view *v, const ui_ctx *c)
{
    batches_st *s = st_of(v);
    if (s->open[0])
        return s->open;
    return row_id(c, NULL, v->list.cur);
}

static unsigned batches_key(ui_view *v, ui_ctx *c, ui_action a)
{
    batches_st *s = st_of(v);
    unsigned ch = list_nav(&v->list, a, v->rows);
    if (!(ch & UI_CH_UNHANDLED))
        return ch;
    static const struct { ui_action a; int op; } ops[] = {
        {UA_BATCH_RESUME, BATCH_OP_RESUME}, {UA_BATCH_PAUSE, BATCH_OP_PAUSE},
        {UA_BATCH_ABORT, BATCH_OP_ABORT}, {UA_BATCH_RATE_UP, BATCH_OP_RATE_UP},
        {UA_BATCH_RATE_DOWN, BATCH_OP_RATE_DOWN}, {UA_BATCH_CONC_UP, BATCH_OP_CONC_UP},
        {UA_BATCH_CONC_DOWN, BATCH_OP_CONC_DOWN},
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (ops[i].a == a) {
            const char *id = selected(v, c);
            if (!id)
                ctx_msg(c, true, "no batch selected");
            else
                ctx_fx(c, FX_BATCH, ops[i].op, id);
            return UI_CH_REDRAW;
        }
    if (a == UA_REFRESH) {
        ctx_fx(c, FX_BATCH, BATCH_OP_LIST, "");
        if (s->open[0])
            ctx_fx(c, FX_BATCH, BATCH_OP_ITEMS, s->open);
        return UI_CH_REDRAW;
    }
    if (a == UA_OPEN && !s->open[0] && selected(v, c)) {
        snprintf(s->open, sizeof s->open, "%s", selected(v, c));
        s->list_cur = v->list.cur;
        v->list = (ui_list){0};
        ctx_fx(c, FX_BATCH, BATCH_OP_ITEMS, s->open);
        return UI_CH_REDRAW;
    }
    if ((a == UA_BACK || a == UA_QUIT) && s->open[0]) {   /* from the items to the list */
        s->open[0] = 0;
        v->list = (ui_list){.cur = s->list_cur};
        ctx_fx(c, FX_BATCH, BATCH_OP_ITEMS, "");
        return UI_CH_REDRAW;
    }
    return UI_CH_UNHANDLED;
}

static void batches_free(ui_view *v)
{
    free(v->st);
    v->st = NULL;
}

const ui_view_ops view_batches_ops = {
    .name = "batches", .title = "Batches", .bar = batches_bar,
    .panels = PANELS_KEEP,
    .open = batches_open, .draw = batches_draw, .key = batches_key, .clickable = true,
    .row_id = row_id, .free = batches_free,
};
