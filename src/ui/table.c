/* The list views' table: layout, header, list rows, scrolling, empty note, row loop. */
#include "table.h"

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

void view_table(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r, const ui_table *t)
{
    v->rows = t->rows < 1 ? 1 : t->rows;
    v->list_y = t->y + 1;
    v->list.n = t->n;
    if (t->row_id)
        list_follow(&v->list, c, t->what, t->row_id, t->st);
    list_fit(&v->list, v->rows);
    if (t->fit)
        t->fit(v, c, t->cols);
    table_head(c, w, r, t->y, t->cols, t->n_cols);
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
    draw_fill(row->w, row->y, row->r.x, row->r.w, attr);
}
