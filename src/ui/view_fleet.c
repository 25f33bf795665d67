/* Fleet: every configured system on one line, worst first (core/fleet.h); Enter opens
 * the system under the cursor (the same as `:system NAME`). The rows come from the app,
 * which polls each system in its own background session. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "draw.h"
#include "histdraw.h"
#include "table.h"
#include "view.h"

/* The table: fleet.h's columns with the failures' last hour after FAIL/MIN, when a
 * system has one (spark). */
enum { SPARK_AT = FLEET_COL_FAILING + 1, NCOL = FLEET_COL__COUNT + 1 };
static int lay_of(int k, bool spark)
{
    return spark && k >= SPARK_AT ? k + 1 : k;
}

static bool fleet_has_history(const ui_ctx *c)
{
    float v[HIST_N];
    for (size_t i = 0; c->fleet_hist && i < c->n_fleet; i++)
        if (histd_series(c->fleet_hist[i], HIST_FAIL_RATE, c->now, v))
            return true;
    return false;
}

static const ui_action fleet_bar[] = {UA_OPEN, UA_REFRESH, UA_COMMAND, UA_HELP, UA_QUIT, UA_NONE};

static int level_slot(rd_fleet_level l)
{
    switch (l) {
    case FLEET_DOWN: return TS_DOWN;
    case FLEET_FAIL: return TS_FAILED;
    case FLEET_WARN: return TS_WARNING;
    case FLEET_WAIT: return TS_DIM;
    case FLEET_OK: return TS_OK;
    }
    return TS_NORMAL;
}

static const char *row_id(const ui_ctx *c, const void *st, int row)
{
    (void)st;
    return row >= 0 && (size_t)row < c->n_fleet ? c->fleet[row].name : NULL;
}

static void fleet_row(ui_ctx *c, const ui_table_row *row)
{
    const rd_fleet_row *f = &c->fleet[row->idx];
    bool spark = *(const bool *)row->st;
    int base = row_base(c, row);
    int lvl = row->cur ? base : theme_attr(c->theme, (ui_slot)level_slot(f->level));
    char cells[FLEET_COL__COUNT][FLEET_CELL_MAX];
    fleet_row_cells(f, cells);
    row_fill(row, base);
    for (int k = 0; k < FLEET_COL__COUNT; k++) {
        int attr = k == FLEET_COL_LEVEL || k == FLEET_COL_SOURCES ? lvl : base;
        if (k == FLEET_COL_ENV && !row->cur && f->banner[0])
            attr = theme_attr(c->theme, TS_DANGER);
        row_cell(c, row, lay_of(k, spark), cells[k], attr);
    }
    const ui_col *sp = &row->cols[SPARK_AT];
    if (spark && sp->w > 0 && !row->seen)
        histd_spark(c, row->w, row->y, row->r.x + sp->x, sp->w, c->fleet_hist[row->idx],
                    HIST_FAIL_RATE, row->cur ? base : theme_attr(c->theme, TS_FAILED));
}

/* The cursor stays on its system: on the open system's row when the view is drawn first
 * (the console's start, or after Enter, `:system`, then 0 or Back: the views are made
 * again) or the open system changed, and on the row it was moved to as the sort moves
 * rows (list_follow), so Enter opens the row it shows. */
typedef struct fleet_st {
    bool drawn;
    char sys[64];                /* the open system at the last draw */
} fleet_st;

static void fleet_pin(ui_view *v, ui_ctx *c)
{
    if (!v->st)
        v->st = xcalloc(1, sizeof(fleet_st));
    fleet_st *st = v->st;
    const char *open = c->cfg && c->cfg->name ? c->cfg->name : "";
    if ((!st->drawn || strcmp(st->sys, open) != 0) && *open)
        snprintf(v->list.follow, sizeof v->list.follow, "%s", open);
    else if (!st->drawn && c->n_fleet)
        snprintf(v->list.follow, sizeof v->list.follow, "%s", c->fleet[0].name);
    st->drawn = true;
    snprintf(st->sys, sizeof st->sys, "%s", open);
}

static void fleet_free(ui_view *v)
{
    free(v->st);
    v->st = NULL;
}

static void fleet_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    if (!c->fleet) {
        draw_clean(w, r.y, r.x, r.w, "Fleet", theme_attr(c->theme, TS_TITLE));
        draw_clean(w, r.y + 2, r.x + 2, r.w - 2, "one system configured: the fleet view needs two or more",
                   theme_attr(c->theme, TS_DIM));
        v->list.n = 0;
        return;
    }
    size_t bad = 0;
    for (size_t i = 0; i < c->n_fleet; i++)
        bad += c->fleet[i].level >= FLEET_FAIL;
    char t[160];
    snprintf(t, sizeof t, "Fleet  %zu systems, worst first  %zu failing or down", c->n_fleet, bad);
    draw_clean(w, r.y, r.x, r.w, t, theme_attr(c->theme, bad ? TS_WARNING : TS_TITLE));
    ui_col cols[FLEET_COL__COUNT] = {
        [FLEET_COL_LEVEL] = {.title = "STATE", .min = 5, .want = 5},
        [FLEET_COL_SYSTEM] = {.title = "SYSTEM", .min = 8, .want = 16},
        [FLEET_COL_ENV] = {.title = "ENV", .min = 4, .want = 8, .drop = 4},
        [FLEET_COL_SOURCES] = {.title = "SOURCES", .min = 8, .want = 12},
        [FLEET_COL_FAILING] = {.title = "FAIL/MIN", .min = 8, .want = 8, .right = true},
        [FLEET_COL_ELIGIBLE] = {.title = "RETRYABLE", .min = 9, .want = 9, .drop = 3, .right = true},
        [FLEET_COL_DLQ] = {.title = "DLQ", .min = 5, .want = 11, .right = true},   /* "3 cached 2m" */
        [FLEET_COL_TREND] = {.title = "TREND", .min = 5, .want = 6, .drop = 2, .right = true},
        [FLEET_COL_WORKERS] = {.title = "WORKERS", .min = 11, .want = 12, .drop = 1},
        [FLEET_COL_QUEUED] = {.title = "OLDEST QUEUED", .min = 13, .want = 13, .drop = 5, .right = true},
        [FLEET_COL_WHY] = {.title = "WHY", .min = 16, .want = 60, .weight = 1},   /* the level's reasons */
    };
    fleet_pin(v, c);
    bool spark = fleet_has_history(c);
    ui_col lay[NCOL];
    for (int k = 0; k < FLEET_COL__COUNT; k++)
        lay[lay_of(k, spark)] = cols[k];
    if (spark)
        lay[SPARK_AT] = (ui_col){.title = "FAIL 1H", .min = 8, .want = 16, .drop = 4};
    view_table(v, c, w, r, &(ui_table){   /* the sort moved a system: its name is followed */
        .cols = lay, .n_cols = spark ? NCOL : FLEET_COL__COUNT, .y = r.y + 1, .rows = r.h - 2,
        .n = (int)c->n_fleet, .st = &spark, .row_id = row_id, .what = "system", .row = fleet_row});
    int y = v->list_y + table_shown(v);
    /* the cursor row's whole WHY (the column may be cut), then why a system is down */
    if (v->list.n && y + 2 < r.y + r.h) {
        char why[FLEET_CELL_MAX];
        const rd_fleet_row *f = &c->fleet[v->list.cur];
        fleet_row_why(f, why, sizeof why);
        char *e = xasprintf("%s %s: %s", fleet_level_name(f->level), f->name, why);
        draw_raw(w, ++y, r.x + 2, r.w - 2, e, theme_attr(c->theme, (ui_slot)level_slot(f->level)), c->san);
        free(e);
        y++;
    }
    for (size_t i = 0; i < c->n_fleet && y + 1 < r.y + r.h; i++)
        if (c->fleet[i].src_error[0]) {
            char *e = xasprintf("%s: %s", c->fleet[i].name, c->fleet[i].src_error);
            draw_raw(w, y++, r.x + 2, r.w - 2, e, theme_attr(c->theme, TS_DOWN), c->san);
            free(e);
        }
}

static unsigned fleet_key(ui_view *v, ui_ctx *c, ui_action a)
{
    v->list.n = c->fleet ? (int)c->n_fleet : 0;
    unsigned ch = list_nav(&v->list, a, v->rows);
    if (!(ch & UI_CH_UNHANDLED)) {
        list_pin(&v->list, c, row_id, NULL);
        return ch;
    }
    if (a == UA_REFRESH) {
        ctx_fx(c, FX_REFRESH, -1, NULL);   /* -1: every system */
        return UI_CH_REDRAW;
    }
    if (a == UA_OPEN && v->list.n) {
        list_follow(&v->list, c, "system", row_id, NULL);   /* re-sorted since the draw */
        ctx_fx(c, FX_SYSTEM, 0, c->fleet[v->list.cur].name);
        return UI_CH_REDRAW;
    }
    return UI_CH_UNHANDLED;
}

const ui_view_ops view_fleet_ops = {
    .name = "fleet", .title = "Fleet", .bar = fleet_bar,
    .panels = PANELS_ALL, .snapshot = "fleet",
    .draw = fleet_draw, .key = fleet_key, .clickable = true, .row_id = row_id, .free = fleet_free,
};
