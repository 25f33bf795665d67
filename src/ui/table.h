#pragma once
/* The table of a list view: its columns laid out across the view under a header row, the
 * list of rows below with the cursor scrolled into view, a note when there are none, and
 * each row on screen drawn by the view's row function. Every list view draws through
 * view_table; the view keeps its title, its detail lines and what a row shows. */
#include <curses.h>
#include <stdbool.h>

#include "colfit.h"
#include "draw.h"
#include "view.h"

/* One row on screen, handed to the view's row function. */
typedef struct ui_table_row {
    WINDOW *w;
    ui_rect r;              /* the table's rect: a row spans r.x .. r.x + r.w */
    const ui_col *cols;     /* laid out */
    int n_cols;
    const void *st;         /* the table's st */
    int idx;                /* the row's index in the list */
    int y;                  /* its screen row */
    bool cur;               /* under the cursor */
    /* Non-NULL while the table measures its rows (before the layout: cols[k].w is the
     * column's want, x is 0): row_cell notes each cell in seen[k] and draws nothing,
     * row_fill does nothing; a view drawing a cell of its own (a chart) skips it. */
    ui_colseen *seen;
} ui_table_row;

typedef struct ui_table {
    ui_col *cols;
    int n_cols;
    int y;                  /* the header's screen row; the list starts on the next */
    int rows;               /* list rows there is room for (at least one is used) */
    int n;                  /* rows in the list */
    const void *st;         /* the view's rows: handed to row_id and row */
    /* With row_id, the cursor goes back to its row's id after the rows moved (list_follow;
     * `what` names, on the status line, a row that left). */
    ui_row_id row_id;
    const char *what;
    /* Columns adjusted before the layout (col_clock): called once the list is scrolled
     * (v->list.top is final). Every column a cell of goes through row_cell is then sized to
     * the rows on screen (colfit.h). */
    void (*fit)(const ui_view *v, const ui_ctx *c, ui_col *cols);
    const char *empty;      /* a dim note on the first list row when n is 0; NULL: none */
    void (*row)(ui_ctx *c, const ui_table_row *row);
} ui_table;

/* Draws t in r: v->rows (t->rows, at least 1), v->list_y and v->list.n set, the cursor
 * followed (row_id) and scrolled into view, the rows on screen measured (t->row with
 * row.seen), the columns laid out across r.w for them (colfit.h; in wide mode, c->wide,
 * every column whole and scrolled by v->h, a mark at the header's ends where more of it
 * is to the left or right) with their header on row t->y, then the empty note or t->row
 * for each row on screen. */
void view_table(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r, const ui_table *t);
/* How many list rows view_table drew (from v->list_y on). */
int table_shown(const ui_view *v);
/* The columns laid out across r.w, their header on row y (view_table's header alone). */
void table_head(const ui_ctx *c, WINDOW *w, ui_rect r, int y, ui_col *cols, int n);

/* The whole row blanked in base, then text[k] in base for each column k (n_cols of them);
 * a NULL text[k] is left to the view (a cell in its own colour: row_cell). */
void row_cells(const ui_ctx *c, const ui_table_row *row, const char *const *text, int base);
/* A row's cell in column k (cols_cell: cut at its end, or in its middle for a mid column). */
void row_cell(const ui_ctx *c, const ui_table_row *row, int k, const char *raw, int attr);
/* The cursor's colour on the cursor row, else 0. */
int row_base(const ui_ctx *c, const ui_table_row *row);
/* The whole row blanked in attr. */
void row_fill(const ui_table_row *row, int attr);
