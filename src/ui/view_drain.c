/* The drain cockpit: one worker followed until it is empty. What is in flight on it (ids,
 * age, expected finish from the timeout), what is left over time (a sparkline), the drain
 * rate and the ETA to empty, the risks of the drain; undrain is one key. The rules are in
 * core/drain.h; this view only samples the model and draws. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/drain.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "draw.h"
#include "table.h"
#include "view.h"

enum { DRAIN_ROWS_MAX = 500, DRAIN_WINDOW_S = 300 };

typedef struct drain_st {
    char worker[160];          /* the followed worker's id */
    rd_drain_hist hist;
    size_t n_rows, n_all;      /* shown / running in all (the store's answer for the worker) */
    bool known;                /* the store answered for this worker */
} drain_st;

static const ui_action drain_bar[] = {UA_UNDRAIN, UA_OPEN, UA_COPY, UA_BACK, UA_HELP, UA_QUIT, UA_NONE};

static drain_st *st_of(ui_view *v)
{
    if (!v->st)
        v->st = xcalloc(1, sizeof(drain_st));
    return v->st;
}

static const rd_worker *drain_worker(const ui_ctx *c, const drain_st *s)
{
    const rd_model *m = c->model;
    for (size_t i = 0; i < m->workers.n; i++) {
        const rd_worker *w = &m->workers.items[i];
        if ((w->id && strcmp(w->id, s->worker) == 0) || (w->name && strcmp(w->name, s->worker) == 0))
            return w;
    }
    return NULL;
}

static void drain_open(ui_view *v, ui_ctx *c, const char *arg)
{
    drain_st *s = st_of(v);
    if (arg && *arg)   /* its running executions from the store, on every poll */
        ctx_fx(c, FX_WORKER, 0, arg);
    if (!arg || !*arg || strcmp(arg, s->worker) == 0)
        return;   /* back to the same worker: keep its history */
    memset(s, 0, sizeof *s);
    ui_copy_text(s->worker, sizeof s->worker, arg);
    memset(&v->list, 0, sizeof v->list);
}

/* The worker's queue depth: the broker's count of its own queues, else its own metric. */
static long drain_depth(const ui_ctx *c, const rd_worker *w, const char **qname)
{
    long sum = drain_broker_depth(c->model, w, qname);
    return sum >= 0 ? sum : w->queue_depth;
}

/* The worker's running executions, as the store answered for this worker; NULL unknown. */
static const rd_model *drain_running(const ui_ctx *c, const rd_worker *w)
{
    const rd_model *m = c->model;
    const char *rw = m->running_worker;
    if (!m->running_known || !rw || !((w->id && strcmp(rw, w->id) == 0) || (w->name && strcmp(rw, w->name) == 0)))
        return NULL;
    return m;
}

/* What is left now; at most one sample a second in the history (a paint per key must not
 * crowd out the minutes the ETA needs). */
static void drain_sample(drain_st *s, const ui_ctx *c, const rd_worker *w, long *depth, long *fl,
                         const char **qname)
{
    const rd_model *run = drain_running(c, w);
    s->known = run != NULL;
    s->n_all = run ? run->running.n : 0;
    s->n_rows = s->n_all < DRAIN_ROWS_MAX ? s->n_all : DRAIN_ROWS_MAX;
    *depth = drain_depth(c, w, qname);
    *fl = run ? (long)s->n_all : -1;   /* the store's word only: never the page on screen */
    rd_drain_sample *last = s->hist.n ? &s->hist.s[s->hist.n - 1] : NULL;
    if (last && c->now >= last->t && c->now - last->t < 1.0) {
        last->depth = *depth;   /* the same second: the newest values, its time kept */
        last->in_flight = *fl;
    } else
        drain_hist_add(&s->hist, c->now, *depth, *fl);
}

static void fmt_dur(double s, char *out, size_t cap)
{
    long v = (long)(s + 0.5);
    if (v < 60)
        snprintf(out, cap, "%lds", v);
    else if (v < 3600)
        snprintf(out, cap, "%ldm %02lds", v / 60, v % 60);
    else
        snprintf(out, cap, "%ldh %02ldm", v / 3600, (v % 3600) / 60);
}

/* One line of text; a warning wraps instead (never cut). */
static int line(ui_ctx *c, WINDOW *win, int y, ui_rect r, int slot, const char *raw)
{
    if (y >= r.y + r.h)
        return y + 1;
    if (slot == TS_WARNING)
        return y + draw_wrap(win, y, r.x, r.w, r.y + r.h - y, raw, theme_attr(c->theme, (ui_slot)slot), c->san);
    draw_raw(win, y, r.x, r.w, raw, theme_attr(c->theme, (ui_slot)slot), c->san);
    return y + 1;
}

static int drain_head(ui_ctx *c, WINDOW *win, ui_rect r, drain_st *s, const rd_worker *w)
{
    long depth, fl;
    const char *qname;
    drain_sample(s, c, w, &depth, &fl, &qname);
    int y = r.y;
    char *t = xasprintf("Drain cockpit  %s (%s)  status %s  health %s", w->name ? w->name : w->id, w->id,
                        w->status ? w->status : "-", health_name(w->health));
    y = line(c, win, y, r, TS_TITLE, t);
    free(t);
    char d[24], f[24], cap[24];
    fmt_long(depth, d, sizeof d);
    fmt_long(fl, f, sizeof f);
    fmt_long(w->capacity, cap, sizeof cap);
    rd_drain_sample now = {c->now, depth, fl};
    long left = drain_left(&now);
    char l[24];
    fmt_long(left, l, sizeof l);
    t = xasprintf("queue depth %s%s%s%s   running %s/%s   left %s", d, qname ? " (" : "", qname ? qname : "",
                  qname ? ")" : "", f, cap, l);
    y = line(c, win, y, r, TS_NORMAL, t);
    free(t);
    char spark[4 * 100];
    int width = r.w - 24 < 100 ? r.w - 24 : 100;
    drain_spark(&s->hist, width, (c->san & SAN_ASCII) != 0, spark, sizeof spark);
    t = xasprintf("left over time  %s  (%zu samples)", spark[0] ? spark : "-", s->hist.n);
    y = line(c, win, y, r, TS_NORMAL, t);
    free(t);
    rd_drain_eta e = drain_eta(&s->hist, DRAIN_WINDOW_S);
    char eta[48];
    int slot = TS_NORMAL;
    bool draining = w->status && strcasecmp(w->status, "draining") == 0;
    switch (e.kind) {
    case DRAIN_ETA_EMPTY:   /* both known zero now: the ETA may be an older sample's */
        if (depth == 0 && fl == 0 && draining) {
            t = xstrdup("EMPTY: nothing queued or running on this worker; the worker can be stopped");
            slot = TS_OK;
        } else if (depth == 0 && fl == 0)
            t = xasprintf("nothing queued or running, but the worker is %s, not draining: it takes new work",
                          w->status ? w->status : "of unknown status");
        else
            t = xasprintf("not known to be empty: queue depth %s, running %s", depth < 0 ? "unknown" : "0",
                          fl < 0 ? "unknown" : "0");
        break;
    case DRAIN_ETA_STALLED:
        t = xasprintf("STALLED: nothing drained over the last %.0fs (rate %.2f/s): it may never empty",
                      c->now - s->hist.s[0].t < DRAIN_WINDOW_S ? c->now - s->hist.s[0].t : (double)DRAIN_WINDOW_S, e.rate);
        slot = TS_WARNING;
        break;
    case DRAIN_ETA_OK:
        fmt_dur(e.eta_s, eta, sizeof eta);
        t = xasprintf("drain rate %.2f/s   ETA to empty: %s", e.rate, eta);
        break;
    default:
        t = xasprintf("ETA to empty: measuring (needs %.0fs of samples, %.0fs to call it stalled)", DRAIN_MIN_SPAN_S,
                      DRAIN_STALL_SPAN_S);
        break;
    }
    y = line(c, win, y, r, slot, t);
    free(t);
    return y;
}

static int drain_risks(ui_ctx *c, WINDOW *win, ui_rect r, int y, const rd_worker *w)
{
    rd_drain_risk k;
    drain_risk(c->model, w, &k);
    for (size_t i = 0; i < k.n_last_queue; i++) {
        char *t = xasprintf("WARNING: last consumer of queue %s (%ld messages): it stops draining",
                            k.last_queue[i]->name, k.last_queue[i]->depth);
        y = line(c, win, y, r, TS_WARNING, t);
        free(t);
    }
    if (k.others_unhealthy) {
        char *t = xasprintf("WARNING: every other compatible worker (%zu) is unhealthy or not taking work", k.compatible);
        y = line(c, win, y, r, TS_WARNING, t);
        free(t);
    } else if (k.no_other)
        y = line(c, win, y, r, TS_WARNING, "WARNING: no other compatible worker");
    return y;
}

static const char *drain_row_id(const ui_ctx *c, const void *st, int row)
{
    const drain_st *s = st;
    return row >= 0 && (size_t)row < s->n_rows && (size_t)row < c->model->running.n
               ? c->model->running.items[row].id : NULL;
}

static void drain_row(ui_ctx *c, const ui_table_row *row)
{
    const rd_execution *e = &c->model->running.items[row->idx];
    int base = row_base(c, row);
    char age[24], fin[24];
    ctx_age(c, e->created_at, age, sizeof age);
    ctx_eta(c, drain_expected_finish(e, c->exec_timeout_s), fin, sizeof fin);
    const char *text[] = {e->id ? e->id : "", e->name ? e->name : "-", e->status ? e->status : "", age, fin};
    row_cells(c, row, text, base);
}

static void drain_rows(ui_view *v, ui_ctx *c, WINDOW *win, ui_rect r, int y)
{
    drain_st *s = st_of(v);
    char t[160], timeout[24] = "";
    if (c->exec_timeout_s > 0)
        fmt_dur(c->exec_timeout_s, timeout, sizeof timeout);
    snprintf(t, sizeof t, "Running on this worker: %zu%s  expected finish %s%s", s->n_all,
             s->n_all > s->n_rows ? " (first shown)" : "", timeout[0] ? "= start + timeout " : "",
             timeout[0] ? timeout : "unknown (no execution_timeout in the profile or config)");
    y = line(c, win, y + 1, r, TS_HEADER, t);
    ui_col cols[] = {
        {.title = "ID", .min = 8, .want = 16, .weight = 1, .mid = true},
        {.title = "NAME", .min = 10, .want = 24, .weight = 3},
        {.title = "STATUS", .min = 7, .want = 10, .drop = 2},
        {.title = "AGE", .min = 4, .want = 8, .right = true},
        {.title = "FINISH BY", .min = 9, .want = 12, .drop = 1, .right = true},
    };
    if (y >= r.y + r.h)
        return;
    view_table(v, c, win, r, &(ui_table){
        .cols = cols, .n_cols = (int)(sizeof cols / sizeof *cols), .y = y, .rows = r.y + r.h - y - 1,
        .n = (int)s->n_rows, .st = s, .row_id = drain_row_id, .what = "execution", .row = drain_row,
        .empty = y + 1 >= r.y + r.h ? NULL : s->known
                 ? "nothing running on this worker (the store, queried by this worker)"
                 : "running executions unknown: the store has not answered for this worker "
                   "(or the profile has no worker_running query)"});
}

static void drain_draw(ui_view *v, ui_ctx *c, WINDOW *win, ui_rect r)
{
    drain_st *s = st_of(v);
    const rd_worker *w = s->worker[0] ? drain_worker(c, s) : NULL;
    if (!w) {
        char *t = xasprintf("Drain cockpit: worker '%s' is not in the model (yet)", s->worker);
        line(c, win, r.y, r, TS_WARNING, t);
        free(t);
        v->list.n = 0;
        return;
    }
    int y = drain_head(c, win, r, s, w);
    y = drain_risks(c, win, r, y, w);
    drain_rows(v, c, win, r, y);
}

static unsigned drain_key(ui_view *v, ui_ctx *c, ui_action a)
{
    drain_st *s = st_of(v);
    const rd_worker *w = s->worker[0] ? drain_worker(c, s) : NULL;
    unsigned ch = list_nav(&v->list, a, v->rows);
    if (!(ch & UI_CH_UNHANDLED)) {
        list_pin(&v->list, c, drain_row_id, s);
        return ch;
    }
    const rd_execution *e = v->list.n > 0 && v->list.cur < (int)s->n_rows && (size_t)v->list.cur < c->model->running.n
                                ? &c->model->running.items[v->list.cur] : NULL;
    switch (a) {
    case UA_UNDRAIN:   /* one key: undoing the operator's own drain needs no second thought */
        if (!w) {
            ctx_msg(c, true, "worker '%s' is not in the model: nothing done", s->worker);
            return UI_CH_REDRAW;
        }
        sel_clear(&c->sel);
        sel_add(&c->sel, w->id, NULL, w->name, NULL);
        ctx_fx(c, FX_ACT, (int)RD_ACT_UNDRAIN, "now");
        return UI_CH_REDRAW;
    case UA_OPEN:
        if (e)
            ctx_fx(c, FX_VIEW, VIEW_CHAIN, e->id);
        return UI_CH_REDRAW;
    case UA_COPY:
        sel_clear(&c->sel);
        if (e)
            sel_add(&c->sel, e->id, NULL, NULL, NULL);
        else if (w)
            sel_add(&c->sel, w->id, NULL, NULL, NULL);
        ctx_fx(c, FX_COPY, 0, NULL);
        return UI_CH_REDRAW;
    case UA_REFRESH: ctx_fx(c, FX_REFRESH, 0, NULL); return UI_CH_REDRAW;
    default: return UI_CH_UNHANDLED;
    }
}

static void drain_free(ui_view *v)
{
    free(v->st);
    v->st = NULL;
}

const ui_view_ops view_drain_ops = {
    .name = "cockpit", .title = "Drain cockpit", .bar = drain_bar, .open = drain_open,
    .panels = PANELS_ALL,
    .draw = drain_draw, .key = drain_key,
    .clickable = true, .row_id = drain_row_id, .free = drain_free,
};
