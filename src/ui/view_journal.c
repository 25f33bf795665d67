/* Journal: the operator's actions from the audit log (who, what, when, request, result).
 * It opens at the newest line and follows it until the cursor moves. A batch is one row
 * (its items counted by state, at the place of its newest line); Enter lists its items,
 * Back returns to the journal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "draw.h"
#include "table.h"
#include "view.h"

static const ui_action journal_bar[] = {UA_REFRESH, UA_SEARCH, UA_BACK, UA_HELP, UA_QUIT, UA_NONE};

/* One row: an action, or a batch (batch set) standing for its items. */
typedef struct jrow {
    size_t e;                    /* the entry shown (a batch: its newest line) */
    const char *batch;           /* a batch row: its id; NULL for an action */
    size_t items, ok, failed, open;
} jrow;

typedef struct journal_st {
    bool newest;                 /* the cursor follows the newest row until it is moved */
    char batch[40];              /* the batch whose items are listed, "" = the journal */
    jrow *rows;
    size_t cap;
} journal_st;

static journal_st *st_of(ui_view *v)
{
    if (!v->st)
        v->st = xcalloc(1, sizeof(journal_st));
    return v->st;
}

static void journal_open(ui_view *v, ui_ctx *c, const char *arg)
{
    ctx_fx(c, FX_JOURNAL, 0, NULL);
    journal_st *st = st_of(v);
    st->newest = true;           /* the journal is read after this: follow it */
    st->batch[0] = '\0';
    v->list.cur = 1 << 30;
    (void)arg;
}

static bool code_is(const rd_journal_entry *e, const char *code)
{
    return e->code && strcmp(e->code, code) == 0;
}

static void count_item(jrow *r, const rd_journal_entry *e)
{
    r->items++;
    if (code_is(e, "ok"))
        r->ok++;
    else if (code_is(e, "pending") || code_is(e, "unknown"))
        r->open++;
    else
        r->failed++;
}

static void journal_targets(const rd_journal_entry *e, char *out, size_t cap)
{
    out[0] = 0;
    for (size_t i = 0; i < e->n_targets; i++) {
        size_t l = strlen(out);
        if (l + 4 >= cap)
            break;
        snprintf(out + l, cap - l, "%s%s", i ? "," : "", e->targets[i] ? e->targets[i] : "");
    }
}

static void batch_row(ui_ctx *c, const ui_table_row *row, const jrow *jr, int base)
{
    const rd_journal_entry *e = &c->journal[jr->e];
    char targets[64], status[24], *msg;
    /* a tail at its bound may have left the batch's older lines unread: the counts are
     * then those of the tail, a lower bound, and say so */
    bool part = c->journal_capped;
    snprintf(targets, sizeof targets, "batch of %zu%s", jr->items, part ? "+" : "");
    snprintf(status, sizeof status, "-");
    /* the counts first: they are what a narrow column keeps */
    msg = xasprintf("%zu ok, %zu failed, %zu open%s (batch %.8s; Enter: its items)", jr->ok,
                    jr->failed, jr->open, part ? " in the journal's last lines" : "", jr->batch);
    const char *text[] = {e->time ? e->time : "-", e->operator_ ? e->operator_ : "-",
                          e->system ? e->system : "-", e->action ? e->action : "-", targets, status, NULL, msg};
    row_cells(c, row, text, base);
    ui_slot slot = jr->failed ? TS_FAILED : jr->open ? TS_WARNING : TS_OK;
    row_cell(c, row, 6, jr->failed ? "failed" : jr->open ? "open" : "ok",
             row->cur ? base : theme_attr(c->theme, slot));
    free(msg);
}

/* row->st: the rows shown (jrow) */
static void journal_row(ui_ctx *c, const ui_table_row *row)
{
    const jrow *jr = &((const jrow *)row->st)[row->idx];
    const rd_journal_entry *e = &c->journal[jr->e];
    bool cur = row->cur;
    int base = row_base(c, row);
    if (jr->batch) {
        batch_row(c, row, jr, base);
        return;
    }
    if (e->malformed) {
        row_fill(row, base);
        char *t = xasprintf("(malformed line) %s", e->raw ? e->raw : "");
        int attr = cur ? base : theme_attr(c->theme, TS_WARNING);
        draw_raw(row->w, row->y, row->r.x, row->r.w, t, attr, c->san);
        free(t);
        return;
    }
    char targets[512], status[24];
    journal_targets(e, targets, sizeof targets);
    if (e->http_status > 0)
        snprintf(status, sizeof status, "%ld", e->http_status);
    else
        snprintf(status, sizeof status, "-");
    /* one row per action, in its latest state: "pending" (sent, no outcome recorded) and
     * "unknown" (redrive stopped while it was in flight) may have been applied */
    bool ok = e->code && strcmp(e->code, "ok") == 0;
    bool open = e->code && (strcmp(e->code, "pending") == 0 || strcmp(e->code, "unknown") == 0);
    ui_slot slot = ok ? TS_OK : open ? TS_WARNING : TS_FAILED;
    /* a batch's lines share its id (search it with /); an override says what it overrode */
    char *msg = xasprintf("%s%.8s%s%s%s%s%s", e->batch ? "[batch " : "", e->batch ? e->batch : "", e->batch ? "] " : "",
                          e->override_ ? "[override " : "", e->override_ ? e->override_ : "",
                          e->override_ ? "] " : "", e->result ? e->result : "");
    const char *text[] = {e->time ? e->time : "-", e->operator_ ? e->operator_ : "-",
                          e->system ? e->system : "-", e->action ? e->action : "-", targets, status, NULL, msg};
    row_cells(c, row, text, base);
    row_cell(c, row, 6, e->code ? e->code : "-", cur ? base : theme_attr(c->theme, slot));
    free(msg);
}

static bool journal_visible(const rd_journal_entry *e, const char *text)
{
    return ui_match(e->raw, text) || ui_match(e->action, text) || ui_match(e->operator_, text);
}

/* The rows: in the journal, each action and one row per batch at the place of its newest
 * line (its items counted by state); in a batch, its items. The filter applies to lines. */
static size_t journal_rows(journal_st *st, const ui_ctx *c)
{
    if (st->cap < c->n_journal + 1) {
        st->cap = c->n_journal + 1;
        st->rows = xrealloc(st->rows, st->cap * sizeof *st->rows);
    }
    size_t n = 0;
    for (size_t i = 0; i < c->n_journal; i++) {
        const rd_journal_entry *e = &c->journal[i];
        if (!journal_visible(e, c->filter[VIEW_JOURNAL].text))
            continue;
        if (st->batch[0]) {                       /* one batch's items */
            if (e->batch && strcmp(e->batch, st->batch) == 0)
                st->rows[n++] = (jrow){.e = i};
            continue;
        }
        if (!e->batch || e->malformed) {
            st->rows[n++] = (jrow){.e = i};
            continue;
        }
        size_t k = 0;                             /* the batch's row so far, moved to here */
        while (k < n && !(st->rows[k].batch && strcmp(st->rows[k].batch, e->batch) == 0))
            k++;
        jrow b = k < n ? st->rows[k] : (jrow){.batch = e->batch};
        if (k < n) {
            memmove(&st->rows[k], &st->rows[k + 1], (n - k - 1) * sizeof *st->rows);
            n--;
        }
        b.e = i;
        count_item(&b, e);
        st->rows[n++] = b;
    }
    return n;
}

static void journal_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    char t[160];
    journal_st *st = st_of(v);
    if (st->batch[0])          /* the id is the journal's text: raw, drawn sanitized */
        snprintf(t, sizeof t, "Journal  batch %.16s: its items (newest last; Back: the journal)", st->batch);
    else
        snprintf(t, sizeof t, "Journal  %zu action%s recorded (newest last)", c->n_journal,
                 c->n_journal == 1 ? "" : "s");
    int tn = text_cols(t, c->san);
    draw_raw(w, r.y, r.x, r.w, t, theme_attr(c->theme, TS_TITLE), c->san);
    filter_title(c, w, r, tn, &c->filter[VIEW_JOURNAL]);
    ui_col cols[] = {
        {.title = "TIME", .min = 19, .want = 24},
        {.title = "OPERATOR", .min = 8, .want = 12, .weight = 1, .drop = 2},
        {.title = "SYSTEM", .min = 8, .want = 12, .weight = 1, .drop = 3},
        {.title = "ACTION", .min = 7, .want = 10},
        {.title = "TARGETS", .min = 8, .want = 16, .weight = 2},
        {.title = "HTTP", .min = 4, .want = 4, .drop = 4, .right = true},
        {.title = "RESULT", .min = 8, .want = 13},
        {.title = "MESSAGE", .min = 10, .want = 20, .weight = 3, .drop = 1},
    };
    int nc = (int)(sizeof cols / sizeof *cols);
    if (c->journal_error) {   /* the header alone: the list keeps its rows */
        table_head(c, w, r, r.y + 1, cols, nc);
        v->rows = r.h - 2 < 1 ? 1 : r.h - 2;
        v->list_y = r.y + 2;
        char *e = xasprintf("cannot read the journal: %s", c->journal_error);
        draw_raw(w, r.y + 2, r.x + 2, r.w - 2, e, theme_attr(c->theme, TS_ERROR), c->san);
        free(e);
        return;
    }
    size_t n = journal_rows(st, c);
    if (st->newest)
        v->list.cur = n ? (int)n - 1 : 0;
    view_table(v, c, w, r, &(ui_table){
        .cols = cols, .n_cols = nc, .y = r.y + 1, .rows = r.h - 2, .n = (int)n, .st = st->rows,
        .empty = st->batch[0] ? "no lines of this batch in the journal's tail"
               : c->n_journal ? "no actions match the filter" : "no actions recorded yet",
        .row = journal_row});
}

static unsigned journal_key(ui_view *v, ui_ctx *c, ui_action a)
{
    journal_st *st = st_of(v);
    unsigned ch = list_nav(&v->list, a, v->rows);
    if (!(ch & UI_CH_UNHANDLED)) {
        st->newest = v->list.cur >= v->list.n - 1;   /* at the newest again: follow it */
        return ch;
    }
    if (a == UA_REFRESH) {
        ctx_fx(c, FX_JOURNAL, 0, NULL);
        return UI_CH_REDRAW;
    }
    size_t n = journal_rows(st, c);               /* the journal may have been read again */
    if (a == UA_OPEN && !st->batch[0] && v->list.cur >= 0 && (size_t)v->list.cur < n &&
        st->rows[v->list.cur].batch) {
        snprintf(st->batch, sizeof st->batch, "%s", st->rows[v->list.cur].batch);
        st->newest = true;
        return UI_CH_REDRAW;
    }
    if (a == UA_BACK && st->batch[0]) {           /* from a batch's items to the journal */
        st->batch[0] = '\0';
        st->newest = true;
        return UI_CH_REDRAW;
    }
    return UI_CH_UNHANDLED;
}

static void journal_select(ui_view *v, ui_ctx *c, int row)
{
    view_select(v, c, row);
    st_of(v)->newest = v->list.cur >= v->list.n - 1;
}

static void journal_free(ui_view *v)
{
    journal_st *st = v->st;
    if (st)
        free(st->rows);
    free(st);
    v->st = NULL;
}

const ui_view_ops view_journal_ops = {
    .name = "journal", .title = "Journal", .bar = journal_bar,
    .panels = PANELS_KEEP,
    .open = journal_open, .draw = journal_draw, .key = journal_key, .clickable = true, .search = true,
    .select = journal_select, .free = journal_free,
};
