/* History: the system's last hour as charts with their axes (core/history.h): failures
 * per minute, retry-eligible, DLQ, unhealthy workers, then each queue recorded. One chart
 * a list row: up/down scroll by chart. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/groupid.h"
#include "../core/onset.h"
#include "../core/sanitize.h"
#include "../core/storegroups.h"
#include "../core/spark.h"
#include "../core/xalloc.h"
#include "draw.h"
#include "histdraw.h"
#include "view.h"

enum { CHART_H_MAX = 8, AXIS_W = 8, CHART_W_MAX = 1024 };

static const ui_action history_bar[] = {UA_VIEW_OVERVIEW, UA_VIEW_QUEUES, UA_REFRESH, UA_HELP, UA_QUIT,
                                        UA_NONE};

static const struct { const char *label; int series; bool rate; int slot; } fixed[] = {
    {"failures/min", HIST_FAIL_RATE, true, TS_FAILED},
    {"retry-eligible", HIST_ELIGIBLE, false, TS_MARKED},
    {"DLQ", HIST_DLQ, false, TS_WARNING},
    {"unhealthy workers", HIST_UNHEALTHY, false, TS_FAILED},
};
enum { N_FIXED = sizeof fixed / sizeof *fixed };

/* The charts: the fixed ones, then each queue the history names, deepest first. */
static int charts(const ui_ctx *c, int *series)
{
    int n = 0;
    for (int i = 0; i < N_FIXED; i++)
        series[n++] = fixed[i].series;
    if (c->hist)   /* the deepest queues first, chosen again as their depths change */
        n += history_queues_deepest(c->hist, c->now, series + n);
    return n;
}

/* The onsets of the store's biggest groups within the hour (onset.h): marked '^' on each
 * chart's time axis and named in the title. */
enum { ONSET_MARKS = 3 };
typedef struct marks {
    double at[ONSET_MARKS];
    char id[ONSET_MARKS][GROUPID_LEN + 1];
    int n;
} marks;

static void onset_marks(const ui_ctx *c, marks *mk)
{
    const rd_sgroups *s = c->model ? c->model->sgroups : NULL;
    mk->n = 0;
    for (size_t i = 0; i < sgroups_n(s) && mk->n < ONSET_MARKS; i++) {
        const rd_group *g = sgroups_at(s, i);
        rd_onset on;
        if (!sgroups_onset(s, c->hist, g->fp, &on) || on.state == ONSET_BEFORE_WINDOW ||
            on.at <= c->now - HIST_N * HIST_STEP_S || on.at > c->now)
            continue;
        mk->at[mk->n] = on.at;
        groupid_make(g->fp, mk->id[mk->n++]);
    }
}

/* "-60m      -45m      -30m      -15m      now" under a chart width cells wide, a '^'
 * at each onset. */
static void time_axis(ui_ctx *c, WINDOW *w, int y, int x, int width)
{
    marks mk;
    onset_marks(c, &mk);
    char line[CHART_W_MAX + 1];
    memset(line, ' ', (size_t)width);
    line[width] = '\0';
    for (int m = 60; m >= 0; m -= 15) {
        char lab[8];
        snprintf(lab, sizeof lab, m ? "-%dm" : "now", m);
        int len = (int)strlen(lab);
        int at = (int)((long)(60 - m) * width / 60) - (m ? 0 : len);
        if (m < 60 && m > 0)
            at -= len / 2;
        if (at < 0 || at + len > width)
            continue;
        memcpy(line + at, lab, (size_t)len);
    }
    double span = HIST_N * HIST_STEP_S;
    for (int k = 0; k < mk.n; k++) {
        int col = (int)((mk.at[k] - (c->now - span)) * width / span);
        if (col >= 0 && col < width)
            line[col] = '^';
    }
    draw_clean(w, y, x, width, line, theme_attr(c->theme, TS_DIM));
}

/* The columns of a chart width cells wide that show a sample which is a bound (the cells
 * spark_cells gives each column) drawn underlined in the warning colour: the title says
 * what the mark means. */
static void mark_bounds(ui_ctx *c, WINDOW *w, int y, int x, int width, int height, int series)
{
    float v[HIST_N];
    unsigned char mk[HIST_N];
    history_series(c->hist, series, c->now, v, HIST_N);
    history_marks(c->hist, series, c->now, mk, HIST_N);
    int attr = theme_attr(c->theme, TS_WARNING) | (int)A_UNDERLINE;
    for (int col = 0; col < width; col++) {
        int a = (int)((long)col * HIST_N / width), b = (int)((long)(col + 1) * HIST_N / width);
        bool marked = false;
        for (int i = a; i < (b > a ? b : a + 1) && i < HIST_N; i++)
            marked |= !isnan(v[i]) && mk[i] != HIST_EXACT;
        for (int i = 0; marked && i < height; i++)
            draw_recolor(w, y + i, x + col, 1, attr);
    }
}

/* One chart: its title with the newest value (marked when it is a bound, and how many of
 * the hour's samples are) and the top, height rows with the top and zero on the axis,
 * then the time axis. Returns the rows used. */
static int chart(ui_ctx *c, WINDOW *w, int y, ui_rect r, int series, int height)
{
    const rd_history *h = c->hist;
    bool queue = series >= HIST_FIXED;
    int fi = 0;
    while (!queue && fi < N_FIXED && fixed[fi].series != series)
        fi++;
    bool rate = !queue && fixed[fi].rate;
    int slot = queue ? TS_RUNNING : fixed[fi].slot;
    float v[HIST_N], last = NAN;
    rd_hist_mark mark = HIST_EXACT;
    bool any = histd_series(h, series, c->now, v);
    if (h)
        history_newest(h, series, c->now, 3, &last, &mark);
    char num[16], nowv[24], note[96] = "", title[HIST_QNAME + 160];
    histd_value(last, rate, num, sizeof num);
    history_mark_text(isnan(last) ? HIST_EXACT : mark, num, nowv, sizeof nowv);
    if (h && !queue)
        history_bounds_note(h, series, c->now, note, sizeof note);
    snprintf(title, sizeof title, "%s%s  now %s%s", queue ? "queue " : "",
             queue ? h->qname[series - HIST_FIXED] : fixed[fi].label, nowv, note);
    draw_raw(w, y, r.x, r.w, title, theme_attr(c->theme, TS_HEADER), c->san);
    int width = r.w - AXIS_W > CHART_W_MAX ? CHART_W_MAX : r.w - AXIS_W;
    if (!any || width < 8) {
        draw_clean(w, y + 1, r.x + 2, r.w - 2, any ? "too narrow for a chart" : "no samples in the last hour",
                   theme_attr(c->theme, TS_DIM));
        return 2;
    }
    char buf[CHART_H_MAX][CHART_W_MAX * 3 + 1];
    char *lines[CHART_H_MAX];
    for (int i = 0; i < height; i++)
        lines[i] = buf[i];
    float top = spark_chart(v, HIST_N, width, height, (c->san & SAN_ASCII) != 0, lines, sizeof buf[0]);
    const char *bar = (c->san & SAN_ASCII) ? "|" : "\xe2\x94\xa4";   /* ┤ */
    for (int i = 0; i < height; i++) {
        char ax[24] = "";
        if (i == 0 || i == height - 1)
            histd_value(i == 0 ? top : 0, rate, ax, sizeof ax);
        char lab[40];
        snprintf(lab, sizeof lab, "%*s %s", AXIS_W - 2, ax, bar);
        draw_clean(w, y + 1 + i, r.x, AXIS_W, lab, theme_attr(c->theme, TS_DIM));
        draw_clean(w, y + 1 + i, r.x + AXIS_W, width, lines[i], theme_attr(c->theme, (ui_slot)slot));
    }
    if (!queue)
        mark_bounds(c, w, y + 1, r.x + AXIS_W, width, height, series);
    time_axis(c, w, y + 1 + height, r.x + AXIS_W, width);
    return height + 2;
}

static void history_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    int series[N_FIXED + HIST_QUEUES];
    int n = charts(c, series);
    marks mk;
    onset_marks(c, &mk);
    char on[160] = "";
    for (int k = 0, used = 0; k < mk.n && used < (int)sizeof on; k++) {
        char when[32];
        time_t tt = (time_t)mk.at[k];
        struct tm tm;
        if (c->local_time)
            localtime_r(&tt, &tm);
        else
            gmtime_r(&tt, &tm);
        strftime(when, sizeof when, "%H:%M", &tm);
        used += snprintf(on + used, sizeof on - (size_t)used, "%s%s %s", k ? ", " : "  ^ onset: ", mk.id[k], when);
    }
    char *t = xasprintf("History  %s  the last hour, one sample per %.0f s (a gap: no sample)%s",
                        c->cfg ? c->cfg->name : "no system configured", HIST_STEP_S, on);
    draw_raw(w, r.y, r.x, r.w, t, theme_attr(c->theme, TS_TITLE), c->san);
    free(t);
    int height = r.h >= 40 ? 4 : 3;
    int per = height + 3;            /* title, chart, axis, a blank line (not after the last) */
    v->rows = (r.h - 1) / per < 1 ? 1 : (r.h - 1) / per;
    v->list.n = n;
    list_fit(&v->list, v->rows);
    int y = r.y + 2, i = v->list.top;
    for (; i < n && y + per - 1 <= r.y + r.h; i++)
        y += chart(c, w, y, r, series[i], height) + 1;
    if (i < n && y < r.y + r.h)
        draw_clean(w, r.y + r.h - 1, r.x, r.w, "more below: down / page-down", theme_attr(c->theme, TS_DIM));
}

static unsigned history_key(ui_view *v, ui_ctx *c, ui_action a)
{
    int series[N_FIXED + HIST_QUEUES];
    v->list.n = charts(c, series);
    if (a == UA_DOWN || a == UA_UP) {   /* scroll: the top chart moves */
        bool can = a == UA_DOWN ? v->list.top + v->rows < v->list.n : v->list.top > 0;
        if (can)
            v->list.cur = a == UA_DOWN ? v->list.top + v->rows : v->list.top - 1;
        return can ? UI_CH_REDRAW : UI_CH_NONE;
    }
    unsigned ch = list_key(&v->list, c, a, v->rows);
    if (!(ch & UI_CH_UNHANDLED))
        return ch;
    return UI_CH_UNHANDLED;
}

const ui_view_ops view_history_ops = {
    .name = "history", .title = "History", .bar = history_bar,
    .panels = PANELS_WORKERS, .snapshot = "history",
    .draw = history_draw, .key = history_key,
};
