/* List columns sized to their content; the wide mode's sideways layout (colfit.h). */
#include "colfit.h"

#include <string.h>

#include "../core/sanitize.h"
#include "../core/textutil.h"

enum { ID_MIN = 12 };   /* an id cut in the middle keeps at least this much */

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

static bool is_num(const ui_col *c) { return (c->num || c->right) && !c->mid; }
/* a text column: takes the room left, by weight (ids and names are sized first) */
static bool is_text(const ui_col *c) { return c->weight > 0 && !c->mid; }
static bool measured(const ui_colseen *seen, int k) { return seen && seen[k].w >= 0; }

void colseen_note(ui_colseen *s, const ui_col *col, const char *raw, unsigned san)
{
    int w = imin(sanitize_raw_width(raw ? raw : "", san), COLFIT_SEEN_MAX), ws = w;
    char t[256];
    if (is_num(col) && w >= 4 && text_short_numbers(raw, 2, t, sizeof t))
        ws = imin(sanitize_raw_width(t, san), w);
    s->w = imax(s->w, w);
    s->w_short = imax(s->w_short, ws);
}

/* min and want from the cells seen: want the widest (and the title); an id's min at most
 * ID_MIN unless less shows it whole, a number's its short form, another's no more than
 * its widest cell. A text column keeps (columns are hidden for it) halfway from its
 * static min to its want, or its widest cell when narrower. */
static void fit_one(ui_col *c, const ui_colseen *s, int *keep)
{
    int title = (int)strlen(c->title), seen = imax(s->w, title);
    *keep = imin(imax(c->min, (c->min + c->want) / 2), seen);
    if (c->mid)
        c->min = imin(seen, imax(c->min, ID_MIN));
    else if (is_num(c))
        c->min = imax(title, imin(seen, s->w_short));
    else
        c->min = imin(c->min, seen);
    c->want = seen;
    if (!is_text(c))
        *keep = c->min;
}

/* Columns hidden (w = -1), highest drop first, until what each keeps fits (the text
 * columns their keep, the others their min). */
static void hide_to_fit(ui_col *c, int n, int width, const int *keep)
{
    for (;;) {
        int need = 0, shown = 0, worst = -1;
        for (int i = 0; i < n; i++)
            if (c[i].w >= 0) {
                need += keep[i] + (shown++ ? 1 : 0);
                if (c[i].drop > 0 && (worst < 0 || c[i].drop > c[worst].drop))
                    worst = i;
            }
        if (need <= width || worst < 0)
            return;
        c[worst].w = -1;
    }
}

/* The room left shared by the text columns by weight, each up to its widest cell (one
 * not measured takes any share), until none is left or none takes more. */
static void share_text(ui_col *c, int n, const ui_colseen *seen, int spare)
{
    while (spare > 0) {
        int weights = 0, given = 0;
        for (int i = 0; i < n; i++)
            if (c[i].w >= 0 && is_text(&c[i]) && (!measured(seen, i) || c[i].w < c[i].want))
                weights += c[i].weight;
        if (!weights)
            return;
        for (int i = 0; i < n && given < spare; i++) {
            if (c[i].w < 0 || !is_text(&c[i]) || (measured(seen, i) && c[i].w >= c[i].want))
                continue;
            int add = imax(1, spare * c[i].weight / weights);
            add = imin(add, spare - given);
            if (measured(seen, i))
                add = imin(add, c[i].want - c[i].w);
            c[i].w += add;
            given += add;
        }
        spare -= given;
    }
}

static void place(ui_col *c, int n)
{
    int x = 0;
    for (int i = 0; i < n; i++) {
        c[i].skip = 0;
        if (c[i].w < 0)
            c[i].w = 0;
        if (!c[i].w)
            continue;
        c[i].x = x;
        x += c[i].w + 1;
    }
}

bool colfit_layout(ui_col *c, int n, int width, const ui_colseen *seen)
{
    bool any = false;
    int keep[COLFIT_MAX];
    for (int i = 0; i < n; i++) {
        c[i].w = 0;
        c[i].skip = 0;
        keep[i] = c[i].min;
        if (measured(seen, i)) {
            fit_one(&c[i], &seen[i], &keep[i]);
            any = true;
        }
    }
    if (!any) {
        cols_layout(c, n, width);
        return false;
    }
    hide_to_fit(c, n, width, keep);
    int total = -1;
    for (int i = 0; i < n; i++)
        if (c[i].w >= 0) {
            c[i].w = c[i].min;
            total += c[i].w + 1;
        }
    /* ids, names, numbers, short texts: whole when they all fit; else a column at a time
     * round the ones still cut (a short name whole before two UUIDs cut evenly) */
    for (bool grew = true; grew && total < width;) {
        grew = false;
        for (int i = 0; i < n && total < width; i++)
            if (c[i].w >= 0 && !is_text(&c[i]) && c[i].w < c[i].want) {
                c[i].w++;
                total++;
                grew = true;
            }
    }
    share_text(c, n, seen, width - total);
    bool cut = false;
    for (int i = 0; i < n; i++)
        cut |= c[i].w < 0 || (measured(seen, i) && c[i].w < c[i].want);
    place(c, n);
    return cut;
}

/* The table scrolled by one key: to the next (previous) column's start, at most half the
 * width at once. */
static int scroll_step(const int *vx, int n, int x, int dir, int width)
{
    int to = dir > 0 ? x + width / 2 : x - width / 2;
    for (int i = 0; i < n; i++)
        if (dir > 0 && vx[i] > x && vx[i] < to)
            to = vx[i];
        else if (dir < 0 && vx[i] < x && vx[i] > to)
            to = vx[i];
    return to;
}

void colfit_wide(ui_col *c, int n, int width, const ui_colseen *seen, ui_hscroll *h)
{
    int vx[COLFIT_MAX], vw[COLFIT_MAX], total = -1;
    for (int i = 0; i < n && i < COLFIT_MAX; i++) {
        int keep;
        if (measured(seen, i))
            fit_one(&c[i], &seen[i], &keep);
        vw[i] = imax(c[i].want, c[i].min);
        vx[i] = total + 1;
        total += vw[i] + 1;
    }
    h->left = h->right = false;
    if (total <= width) {   /* all of it shows */
        colfit_layout(c, n, width, seen);
        h->x = h->steps = 0;
        return;
    }
    int most = total - width;
    for (; h->steps > 0; h->steps--)
        h->x = scroll_step(vx, n, h->x, 1, width);
    for (; h->steps < 0; h->steps++)
        h->x = scroll_step(vx, n, h->x, -1, width);
    h->x = imax(0, imin(h->x, most));
    for (int i = 0; i < n; i++) {
        int a = imax(vx[i], h->x), b = imin(vx[i] + vw[i], h->x + width);
        c[i].skip = imax(0, h->x - vx[i]);
        c[i].x = a - h->x;
        c[i].w = b > a ? b - a : 0;
        if (is_num(&c[i]) && c[i].w < vw[i])   /* digits are never cut: past the edge */
            c[i].w = 0;
        if (c[i].w < vw[i])                     /* cut by an edge: at that edge, marked */
            c[i].mid = false;
    }
    h->left = h->x > 0;
    h->right = h->x < most;
}
