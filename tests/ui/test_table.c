/* The list views' table (table.h) and the dialog frame (draw.h) on an off-screen curses
 * screen: what view_table sets, which rows it hands the view, where the header and the
 * empty note go, and the cells row_cells leaves to the view. */
#include "table.h"

#include <curses.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "check.h"

/* n cells from y,x as UTF-8 */
static char *text_at(int y, int x, int n)
{
    static char buf[256];
    size_t used = 0;
    for (int i = 0; i < n && used + MB_LEN_MAX < sizeof buf; i++) {
        cchar_t cc;
        wchar_t wch[CCHARW_MAX + 1] = {0};
        attr_t attrs;
        short pair;
        if (mvin_wch(y, x + i, &cc) == ERR || getcchar(&cc, wch, &attrs, &pair, NULL) == ERR)
            wch[0] = L'?';
        mbstate_t st;
        memset(&st, 0, sizeof st);
        size_t k = wcrtomb(buf + used, wch[0], &st);
        used += k == (size_t)-1 ? 0 : k;
    }
    buf[used] = 0;
    return buf;
}

/* What the row function and the fit saw. */
static struct {
    int calls, first_idx, last_idx, first_y, cur_idx, fit_top, fit_calls;
} seen;

static void note_row(ui_ctx *c, const ui_table_row *row)
{
    (void)c;
    if (row->seen)   /* the table measuring its rows: nothing drawn */
        return;
    if (!seen.calls++) {
        seen.first_idx = row->idx;
        seen.first_y = row->y;
    }
    seen.last_idx = row->idx;
    if (row->cur)
        seen.cur_idx = row->idx;
}

static void note_fit(const ui_view *v, const ui_ctx *c, ui_col *cols)
{
    (void)c;
    seen.fit_top = v->list.top;   /* the list is scrolled before the columns are sized */
    seen.fit_calls++;
    cols[1].want = 3;
}

static const char *ids[] = {"a", "b", "c", "d", "e", "f", "g"};

static const char *id_of(const ui_ctx *c, const void *st, int row)
{
    (void)c, (void)st;
    return row >= 0 && row < 7 ? ids[row] : NULL;
}

static ui_theme *theme;

static ui_ctx ctx_new(void)
{
    ui_ctx c;
    memset(&c, 0, sizeof c);
    c.theme = theme;
    return c;
}

static void test_rows_cursor_and_fit(void)
{
    ui_ctx c = ctx_new();
    ui_view v = {0};
    v.list.cur = 30;
    ui_col cols[] = {{.title = "NAME", .min = 4, .want = 10}, {.title = "N", .min = 1, .want = 9}};
    memset(&seen, 0, sizeof seen);
    seen.cur_idx = -1;
    ui_rect r = {1, 0, 12, 40};
    view_table(&v, &c, stdscr, r, &(ui_table){
        .cols = cols, .n_cols = 2, .y = r.y + 1, .rows = 10, .n = 50, .fit = note_fit,
        .empty = "none", .row = note_row});
    CHECK(v.rows == 10 && v.list_y == 3 && v.list.n == 50);
    CHECK(v.list.top == 21 && v.list.cur == 30);       /* scrolled so the cursor shows */
    CHECK(seen.calls == 10 && seen.first_idx == 21 && seen.last_idx == 30 && seen.first_y == 3);
    CHECK(seen.cur_idx == 30);
    CHECK(seen.fit_calls == 1 && seen.fit_top == 21);
    CHECK(cols[1].want == 3 && cols[1].w == 3);         /* the fit's width, laid out */
    CHECK_STR(text_at(2, 0, 7), "NAME   ");               /* the header on row y */
    CHECK(table_shown(&v) == 10);
}

static void test_few_rows_and_empty_note(void)
{
    ui_ctx c = ctx_new();
    ui_view v = {0};
    ui_col cols[] = {{.title = "ID", .min = 2, .want = 8}};
    ui_rect r = {10, 4, 2, 30};
    memset(&seen, 0, sizeof seen);
    erase();
    view_table(&v, &c, stdscr, r, &(ui_table){
        .cols = cols, .n_cols = 1, .y = 10, .rows = -3, .n = 0, .empty = "no rows here", .row = note_row});
    CHECK(v.rows == 1 && v.list_y == 11 && v.list.n == 0 && table_shown(&v) == 0);
    CHECK(seen.calls == 0);
    CHECK_STR(text_at(11, 6, 12), "no rows here");        /* two columns in */
    erase();
    view_table(&v, &c, stdscr, r, &(ui_table){
        .cols = cols, .n_cols = 1, .y = 10, .rows = 5, .n = 3, .empty = "no rows here", .row = note_row});
    CHECK(seen.calls == 3 && table_shown(&v) == 3);
    CHECK(strstr(text_at(11, 0, 40), "no rows") == NULL);  /* only without rows */
}

static void test_follow(void)
{
    ui_ctx c = ctx_new();
    ui_view v = {0};
    snprintf(v.list.follow, sizeof v.list.follow, "f");
    ui_col cols[] = {{.title = "ID", .min = 2, .want = 8}};
    memset(&seen, 0, sizeof seen);
    view_table(&v, &c, stdscr, (ui_rect){0, 0, 10, 40}, &(ui_table){
        .cols = cols, .n_cols = 1, .y = 0, .rows = 4, .n = 7, .row_id = id_of, .what = "thing",
        .row = note_row});
    CHECK(v.list.cur == 5 && v.list.top == 2 && !c.msg[0]);
    snprintf(v.list.follow, sizeof v.list.follow, "zz");
    view_table(&v, &c, stdscr, (ui_rect){0, 0, 10, 40}, &(ui_table){
        .cols = cols, .n_cols = 1, .y = 0, .rows = 4, .n = 7, .row_id = id_of, .what = "thing",
        .row = note_row});
    CHECK_STR(c.msg, "thing zz left the view");
    CHECK(v.list.cur == 5 && strcmp(v.list.follow, "f") == 0);
}

/* row_cells: plain cells from one array, a NULL cell left to the view, a mid column cut
 * in its middle, a right column aligned. */
static void cells_row(ui_ctx *c, const ui_table_row *row)
{
    const char *text[] = {"0123456789abcdef", NULL, "7", "0123456789abcdef"};
    if (!row->seen)
        mvaddstr(row->y, 0, "################################");
    row_cells(c, row, text, A_BOLD);
    if (!row->seen)
        mvaddstr(row->y, row->cols[1].x, "b");   /* the view's own cell */
}

static void test_row_cells(void)
{
    ui_ctx c = ctx_new();
    ui_view v = {0};
    ui_col cols[] = {{.title = "A", .min = 6, .want = 6}, {.title = "B", .min = 3, .want = 3},
                     {.title = "C", .min = 3, .want = 3, .right = true},
                     {.title = "D", .min = 6, .want = 6, .mid = true}};
    erase();
    view_table(&v, &c, stdscr, (ui_rect){0, 0, 5, 30}, &(ui_table){
        .cols = cols, .n_cols = 4, .y = 0, .rows = 1, .n = 1, .row = cells_row});
    /* the row blanked up to the table's width, each cell at its column, sized to it: A and
     * D share what is left a column at a time, A cut at its end, D (an id) in its middle;
     * C as wide as its number; B (the view's own) as it asked */
    CHECK_STR(text_at(1, 0, 32), "01234567\u2026 b   7 012345\u20269abcdef##");
    CHECK((mvinch(1, 7) & A_BOLD) && (mvinch(1, 29) & A_BOLD) && !(mvinch(1, 30) & A_BOLD));
}

/* Rows of a list with an id, a count, a status and an error: the cells come from rows[]. */
static const char *const (*fit_rows)[4];
static void fit_row(ui_ctx *c, const ui_table_row *row)
{
    row_cells(c, row, (const char *const *)fit_rows[row->idx], 0);
}

static ui_col fit_cols[4];
static void fit_table(ui_view *v, ui_ctx *c, int width, int n)
{
    const ui_col cols[] = {
        {.title = "ID", .min = 8, .want = 12, .weight = 1, .mid = true},
        {.title = "COUNT", .min = 5, .want = 5, .right = true},
        {.title = "STATUS", .min = 9, .want = 10},
        {.title = "ERROR", .min = 20, .want = 30, .weight = 4},
    };
    memcpy(fit_cols, cols, sizeof cols);
    erase();
    view_table(v, c, stdscr, (ui_rect){0, 0, 10, width}, &(ui_table){
        .cols = fit_cols, .n_cols = 4, .y = 0, .rows = 8, .n = n, .row = fit_row});
}

static const char *const uuid_rows[][4] = {
    {"0b7c1f3e-5a2d-4c8e-9f10-2d3e4f5a6b7c", "14810", "failed", "max_retries_exceeded: budget 3"},
    {"1c8d2a4f-6b3e-4d9f-8a21-3e4f5a6b7c8d", "7", "completed", ""},
};
static const char *const num_rows[][4] = {{"1100", "3", "failed", "KeyError: 'customer_id'"},
                                          {"99", "12", "failed", "connection refused"}};

static void test_columns_fit_content(void)
{
    ui_ctx c = ctx_new();
    ui_view v = {0};
    fit_rows = uuid_rows;
    fit_table(&v, &c, 120, 2);   /* room: the ids whole, the count whole, the error whole */
    CHECK_STR(text_at(1, 0, 83), "0b7c1f3e-5a2d-4c8e-9f10-2d3e4f5a6b7c 14810 failed    "
                                 "max_retries_exceeded: budget 3");
    CHECK(fit_cols[0].w == 36 && fit_cols[1].w == 5 && fit_cols[3].w == 30 && !v.h.cut);
    CHECK_STR(text_at(0, 0, 13), "ID           ");
    fit_table(&v, &c, 49, 2);    /* narrow: the id cut in its middle, marked; the text cut,
                                  * never a digit */
    CHECK_STR(text_at(1, 0, 49), "0b7c1\u20265a6b7c 14810 failed    max_retries_exceede\u2026");
    CHECK(fit_cols[0].w == 12 && fit_cols[3].w == 20 && v.h.cut);
    fit_table(&v, &c, 60, 2);    /* the ids before the text */
    CHECK(fit_cols[0].w == 23 && fit_cols[3].w == 20);
    fit_rows = num_rows;         /* numeric ids: as narrow as they are */
    fit_table(&v, &c, 80, 2);
    CHECK(fit_cols[0].w == 4 && fit_cols[1].w == 5);
    CHECK_STR(text_at(1, 0, 41), "1100     3 failed KeyError: 'customer_id'");
    CHECK_STR(text_at(2, 0, 41), "99      12 failed connection refused     ");
}

/* A number column narrower than its digits (a view's fixed width): the short form. */
static void test_number_short(void)
{
    ui_col col = {.title = "N", .min = 4, .want = 4, .right = true, .x = 0, .w = 4};
    erase();
    cols_cell(stdscr, 0, 0, &col, "14810", 0, 0);
    cols_cell(stdscr, 1, 0, &col, "999", 0, 0);
    col.w = 5;
    cols_cell(stdscr, 2, 0, &col, "148100", 0, 0);
    col.w = 4;
    cols_cell(stdscr, 3, 0, &col, "1234567", 0, 0);
    CHECK_STR(text_at(0, 0, 4), " 15k");
    CHECK_STR(text_at(1, 0, 4), " 999");
    CHECK_STR(text_at(2, 0, 5), " 148k");
    CHECK_STR(text_at(3, 0, 4), "1.2M");
    ui_col trend = {.title = "TREND", .min = 9, .want = 14, .num = true, .x = 0, .w = 18};
    erase();                      /* a text of numbers: whole, then 3 figures, then none */
    cols_cell(stdscr, 0, 0, &trend, "rising 14810/20330", 0, 0);
    trend.w = 17;
    cols_cell(stdscr, 1, 0, &trend, "rising 14810/20330", 0, 0);
    trend.w = 14;
    cols_cell(stdscr, 2, 0, &trend, "rising 14810/20330", 0, 0);
    CHECK_STR(text_at(0, 0, 18), "rising 14810/20330");
    CHECK_STR(text_at(1, 0, 18), "rising 15k/20k    ");   /* 14.8k/20.3k is as wide */
    CHECK_STR(text_at(2, 0, 14), "rising 15k/20k");
}

/* Wide mode: every column whole, scrolled by the view's h; marks at the header's ends. */
static void test_wide_scroll(void)
{
    ui_ctx c = ctx_new();
    c.wide = true;
    ui_view v = {0};
    fit_rows = uuid_rows;
    fit_table(&v, &c, 40, 2);    /* 36 + 5 + 9 + 30 + 3 = 83 columns, 40 shown */
    CHECK(v.h.table && v.h.x == 0 && !v.h.left && v.h.right);
    CHECK_STR(text_at(1, 0, 40), "0b7c1f3e-5a2d-4c8e-9f10-2d3e4f5a6b7c    ");
    CHECK_STR(text_at(0, 39, 1), "\u203a");
    v.h.steps = 1;               /* one key right: to the next column's start, at most half */
    fit_table(&v, &c, 40, 2);
    CHECK(v.h.x == 20 && v.h.left && v.h.right);
    CHECK_STR(text_at(1, 0, 40), "f10-2d3e4f5a6b7c 14810 failed    max_re\u2026");   /* cut on its left */
    CHECK_STR(text_at(0, 0, 1), "\u2039");
    v.h.steps = 3;               /* past the end: the last columns, no mark at the right */
    fit_table(&v, &c, 40, 2);
    CHECK(v.h.x == 43 && v.h.left && !v.h.right);
    CHECK_STR(text_at(1, 0, 40), "failed    max_retries_exceeded: budget 3");
    v.h.steps = -1;
    fit_table(&v, &c, 40, 2);
    CHECK(v.h.x == 37);
    v.h.x = 0;                   /* an id the right edge cuts: cut there, marked */
    fit_table(&v, &c, 30, 2);
    CHECK_STR(text_at(1, 0, 30), "0b7c1f3e-5a2d-4c8e-9f10-2d3e4\u2026");
    c.wide = false;              /* fitted again: from the left */
    fit_table(&v, &c, 40, 2);
    CHECK(v.h.x == 0 && !v.h.left && !v.h.right && v.h.cut);
}

static void test_draw_box(void)
{
    erase();
    mvaddstr(3, 2, "xxxxxxxxxxxx");
    draw_box(stdscr, (ui_rect){2, 1, 4, 10}, A_BOLD);
    CHECK((mvinch(2, 1) & A_CHARTEXT) == (ACS_ULCORNER & A_CHARTEXT));
    CHECK((mvinch(2, 10) & A_CHARTEXT) == (ACS_URCORNER & A_CHARTEXT));
    CHECK((mvinch(5, 1) & A_CHARTEXT) == (ACS_LLCORNER & A_CHARTEXT));
    CHECK((mvinch(5, 10) & A_CHARTEXT) == (ACS_LRCORNER & A_CHARTEXT));
    CHECK((mvinch(2, 5) & A_CHARTEXT) == (ACS_HLINE & A_CHARTEXT));
    CHECK((mvinch(4, 1) & A_CHARTEXT) == (ACS_VLINE & A_CHARTEXT));
    CHECK((mvinch(4, 10) & A_CHARTEXT) == (ACS_VLINE & A_CHARTEXT));
    CHECK_STR(text_at(3, 2, 8), "        ");               /* the inside blanked */
    CHECK((mvinch(3, 5) & A_BOLD) != 0);
    CHECK_STR(text_at(3, 11, 3), "xxx");                   /* outside untouched */
    CHECK((mvinch(6, 1) & A_CHARTEXT) == ' ');
}

int main(void)
{
    setlocale(LC_ALL, "C.UTF-8");
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    SCREEN *s = newterm("xterm", out, in);
    if (!s) {
        fprintf(stderr, "no xterm terminfo\n");
        return 1;
    }
    resizeterm(24, 132);
    theme = theme_new();
    test_rows_cursor_and_fit();
    test_few_rows_and_empty_note();
    test_follow();
    test_row_cells();
    test_columns_fit_content();
    test_number_short();
    test_wide_scroll();
    test_draw_box();
    theme_free(theme);
    endwin();
    delscreen(s);
    fclose(out);
    fclose(in);
    return check_done("table");
}
