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

/* Table columns: when the minimums do not fit, columns with the highest drop are hidden. */
typedef struct ui_col {
    const char *title;
    int min, want;       /* width when there is room */
    int weight;          /* share of the remaining space */
    int drop;            /* 0 = always shown; higher = hidden first */
    bool right;
    int x, w;            /* computed; w == 0 → hidden */
} ui_col;

void cols_layout(ui_col *c, int n, int width);
void cols_header(WINDOW *w, int y, int x, const ui_col *c, int n, int attr);
void cols_cell(WINDOW *w, int y, int x, const ui_col *c, const char *raw, int attr, unsigned san);

/* "12s" / "5m" / "-" (unknown) / "+3s" (future); ages against now. */
void fmt_age(double now, double t, char *out, size_t cap);
/* "2026-05-01 12:00:03" UTC, "-" when 0 */
void fmt_time(double t, char *out, size_t cap);
void fmt_long(long v, char *out, size_t cap);   /* "-" when < 0 */
/* Wrap a sanitized multi-line text to width; calls line() per screen line. */
int text_wrap(const char *clean, int width, void (*line)(const char *s, size_t n, void *ud), void *ud);

int slot_for_status(const char *status);   /* ui_slot for an execution status */
int slot_for_health(rd_health h);
