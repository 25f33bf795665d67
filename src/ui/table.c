/* The list views' table: layout, header, list rows, scrolling, empty note, row loop. */
#include "table.h"

#include <assert.h>

#include "../core/sanitize.h"

void table_head(const ui_ctx *c, WINDOW *w, ui_rect r, int y, ui_col *cols, int n)
{
    cols_layout(cols, n, r.w);
    cols_header(w, y, r.x, cols, n, theme_attr(c->theme, TS_HEADER));
}

int table_shown(const ui_view *v)
{
    int left = v->list.n - v->list.top;
    return left < 0 ? 0 : left < v->rows ? left : v->rows;
}

/* The rows on screen handed to t->row with row.seen: what each column's cells need. The
 * ages they note for the tick are dropped (the drawing notes them again). False when no
 * row is on screen. */
static bool table_measure(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r, const ui_table *t, ui_colseen *seen)
{
    for (int k = 0; k < t->n_cols; k++)
        seen[k] = (ui_colseen){-1, -1};
    int shown = table_shown(v);
    if (!shown)
        return false;
    ui_col probe[COLFIT_MAX];
    for (int k = 0; k < t->n_cols; k++) {
        probe[k] = t->cols[k];
        probe[k].x = probe[k].skip = 0;
        probe[k].w = probe[k].want > 0 ? probe[k].want : 1;
    }
    int n_ages = c->n_ages;
    bool overflow = c->ages_overflow;
    ui_table_row row = {.w = w, .r = r, .cols = probe, .n_cols = t->n_cols, .st = t->st, .seen = seen};
    for (int i = 0; i < shown; i++) {
        row.idx = v->list.top + i;
        row.y = v->list_y + i;
        row.cur = row.idx == v->list.cur;
        t->row(c, &row);
    }
    c->n_ages = n_ages;
    c->ages_overflow = overflow;
    return true;
}

/* The header's ends in wide mode: a mark where more of the table is to that side. */
static void table_marks(const ui_view *v, const ui_ctx *c, WINDOW *w, ui_rect r, int y)
{
    int attr = theme_attr(c->theme, TS_HEADER);
    bool ascii = c->san & SAN_ASCII;
    if (v->h.left)
        draw_clean(w, y, r.x, 1, ascii ? "<" : "\xe2\x80\xb9", attr);
    if (v->h.right)
        draw_clean(w, y, r.x + r.w - 1, 1, ascii ? ">" : "\xe2\x80\xba", attr);
}

void view_table(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r, const ui_table *t)
{
    assert(t->n_cols <= COLFIT_MAX);
    v->rows = t->rows < 1 ? 1 : t->rows;
    v->list_y = t->y + 1;
    v->list.n = t->n;
    if (t->row_id)
        list_follow(&v->list, c, t->what, t->row_id, t->st);
    list_fit(&v->list, v->rows);
    if (t->fit)
        t->fit(v, c, t->cols);
    ui_colseen seen[COLFIT_MAX];
    bool any = table_measure(v, c, w, r, t, seen);
    v->h.table = true;
    if (c->wide) {
        colfit_wide(t->cols, t->n_cols, r.w, any ? seen : NULL, &v->h);
        v->h.cut = false;
    } else {
        v->h.cut = colfit_layout(t->cols, t->n_cols, r.w, any ? seen : NULL);
        v->h.x = v->h.steps = 0;
        v->h.left = v->h.right = false;
    }
    cols_header(w, t->y, r.x, t->cols, t->n_cols, theme_attr(c->theme, TS_HEADER));
    table_marks(v, c, w, r, t->y);
    if (!t->n && t->empty)
        draw_clean(w, v->list_y, r.x + 2, r.w - 2, t->empty, theme_attr(c->theme, TS_DIM));
    ui_table_row row = {.w = w, .r = r, .cols = t->cols, .n_cols = t->n_cols, .st = t->st};
    for (int i = 0, shown = table_shown(v); i < shown; i++) {
        row.idx = v->list.top + i;
        row.y = v->list_y + i;
        row.cur = row.idx == v->list.cur;
        t->row(c, &row);
    }
}

void row_cell(const ui_ctx *c, const ui_table_row *row, int k, const char *raw, int attr)
{
    if (row->seen) {
        colseen_note(&row->seen[k], &row->cols[k], raw, c->san);
        return;
    }
    cols_cell(row->w, row->y, row->r.x, &row->cols[k], raw, attr, c->san);
}

void row_cells(const ui_ctx *c, const ui_table_row *row, const char *const *text, int base)
{
    row_fill(row, base);
    for (int k = 0; k < row->n_cols; k++)
        if (text[k])
            row_cell(c, row, k, text[k], base);
}

int row_base(const ui_ctx *c, const ui_table_row *row)
{
    return row->cur ? theme_attr(c->theme, TS_CURSOR) : 0;
}

void row_fill(const ui_table_row *row, int attr)
{
    if (row->seen)
        return;
    draw_fill(row->w, row->y, row->r.x, row->r.w, attr);
}
