#pragma once
/* A list's columns sized to the cells on screen (view_table measures them, table.h): an id
 * as wide as the widest id shown (cut in the middle, marked, only when they cannot all
 * show), a number never cut (in short form, 14.8k, when its column is too narrow), the
 * text columns (those with a weight: ERROR, REASON) taking what is left, each up to its
 * widest cell; and the wide mode's layout: every column whole, the table scrolled sideways. */
#include <stdbool.h>

#include "draw.h"
#include "view.h"

enum { COLFIT_MAX = 24,          /* columns of one table */
       COLFIT_SEEN_MAX = 512 };  /* a wider cell counts as this wide */

/* What the cells on screen need of a column: w its widest cell (-1: none measured), w_short
 * that of the same in short form (a number column: text_short_numbers level 2). */
typedef struct ui_colseen {
    int w, w_short;
} ui_colseen;

/* A cell of column col noted in s (raw: drawn sanitized with san). */
void colseen_note(ui_colseen *s, const ui_col *col, const char *raw, unsigned san);
/* c laid out across width for the cells seen (a column with seen[k].w < 0, or seen NULL,
 * keeps its min/want/weight: as cols_layout lays it out). True when a column shows less
 * than its widest cell, or is hidden: wide mode (W) would show more. */
bool colfit_layout(ui_col *c, int n, int width, const ui_colseen *seen);
/* Wide mode: every column whole. When that fits width, colfit_layout's; else the table is
 * laid out from h->x on (h->steps applied: to the next column's start, at most half the
 * width at once; h->x kept within the table; h->left, h->right set): a column before
 * h->x hidden, one across it cut on its left (skip), a number column the right edge
 * would cut hidden. */
void colfit_wide(ui_col *c, int n, int width, const ui_colseen *seen, ui_hscroll *h);
