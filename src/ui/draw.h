#pragma once
/* Drawing helpers: every outside string is sanitized here before it reaches curses. */
#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

#include "view.h"

/* Sanitize raw, fit into cols (padding with blanks), draw at y,x. Returns columns. */
int draw_raw(WINDOW *w, int y, int x, int cols, const char *raw, int attr, unsigned san);
/* Same for text we produced ourselves (still fitted; never data as a format). */
int draw_clean(WINDOW *w, int y, int x, int cols, const char *clean, int attr);
void draw_fill(WINDOW *w, int y, int x, int cols, int attr);
/* cols cells from y,x keep their text and take attr (a chart's marked columns). */
void draw_recolor(WINDOW *w, int y, int x, int cols, int attr);
/* Every row of b blanked in attr (a panel drawn over the view). */
void draw_panel(WINDOW *w, ui_rect b, int attr);
/* The same with a line frame on its edge (the dialogs' box). */
void draw_box(WINDOW *w, ui_rect b, int attr);

/* Table columns: when the minimums do not fit, columns with the highest drop are hidden. */
typedef struct ui_col {
    const char *title;
    int min, want;       /* width when there is room */
    int weight;          /* share of the remaining space */
    int drop;            /* 0 = always shown; higher = hidden first */
    bool right;
    bool mid;            /* cut in the middle (ids, names: they differ at their ends) */
    int x, w;            /* computed; w == 0 → hidden */
} ui_col;

void cols_layout(ui_col *c, int n, int width);
void cols_header(WINDOW *w, int y, int x, const ui_col *c, int n, int attr);
/* A cell of column c: cut at its end, or in its middle with c->mid; right-aligned with c->right. */
void cols_cell(WINDOW *w, int y, int x, const ui_col *c, const char *raw, int attr, unsigned san);
/* Display width of raw as drawn (sanitized). */
int text_cols(const char *raw, unsigned san);
/* An id/name column sized to its content (`widest`, text_cols of the rows shown), at most
 * cap columns: want = that, no share of spare room once all of it shows. Its minimum grows
 * to the content up to min_cap (other columns drop first), never past want. */
void col_content(ui_col *c, int widest, int min_cap, int cap);
/* A column of ages: wide enough for clock times while the toggle-time key shows them. */
void col_clock(const ui_ctx *ctx, ui_col *c);

/* "12s" / "5m" / "-" (unknown) / "+3s" (future); ages against now. */
void fmt_age(double now, double t, char *out, size_t cap);
/* "2026-05-01 12:00:03" UTC, "-" when 0 */
void fmt_time(double t, char *out, size_t cap);
void fmt_long(long v, char *out, size_t cap);   /* "-" when < 0 */
/* Wrap a sanitized multi-line text to width; calls line() per screen line. */
int text_wrap(const char *clean, int width, void (*line)(const char *s, size_t n, void *ud), void *ud);
/* The same, breaking at the last blank that fits (a word longer than width is cut into
 * pieces); the blank at a break is dropped. For sentences: warnings wrap, never cut. */
int text_wrap_words(const char *clean, int width, void (*line)(const char *s, size_t n, void *ud), void *ud);
/* A wrapped text's lines down a window (text_wrap's line callback, ud a ui_lines): the
 * first skip lines passed over, then at most left drawn from row y on; count counts all. */
typedef struct ui_lines {
    WINDOW *w;
    int y, x, cols, skip, left, count, attr;
} ui_lines;
void draw_lines_cb(const char *s, size_t n, void *ud);
/* Draws raw (sanitized) word-wrapped into cols from y on, at most max_lines lines; returns
 * the lines drawn. */
int draw_wrap(WINDOW *w, int y, int x, int cols, int max_lines, const char *raw, int attr, unsigned san);

int slot_for_status(const char *status);   /* ui_slot for an execution status */
int slot_for_health(rd_health h);
