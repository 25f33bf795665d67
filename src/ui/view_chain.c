/* Retry chain: every attempt in order, the time between attempts, the verdict and why. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/health.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "draw.h"
#include "table.h"
#include "view.h"

typedef struct chain_st {
    char id[256];        /* the execution the chain was asked for */
} chain_st;

static const ui_action chain_bar[] = {UA_OPEN, UA_RETRY, UA_BACK, UA_REFRESH, UA_HELP, UA_QUIT, UA_NONE};

static chain_st *st_of(ui_view *v)
{
    if (!v->st)
        v->st = xcalloc(1, sizeof(chain_st));
    return v->st;
}

static bool chain_ready(ui_view *v, const ui_ctx *c)
{
    const rd_model *m = c->model;
    return m->chain_id && strcmp(m->chain_id, st_of(v)->id) == 0;
}

static void chain_open(ui_view *v, ui_ctx *c, const char *arg)
{
    chain_st *s = st_of(v);
    if (arg && *arg && strcmp(arg, s->id) != 0) {
        snprintf(s->id, sizeof s->id, "%s", arg);
        v->list.cur = 0;
        v->list.top = 0;
    }
    if (s->id[0]) {
        ctx_fx(c, FX_CHAIN, 0, s->id);
        v->list.cur = 1 << 30;   /* newest attempt selected once loaded (clamped) */
    }
}

/* When the attempt started: where the store records it, else its creation. */
static double attempt_start(const rd_execution *e)
{
    return e->started_at > 0 ? e->started_at : e->created_at;
}

/* true when the store records when attempts start (a chain row says so). */
static bool chain_has_start(const rd_model *m)
{
    for (size_t i = 0; i < m->chain.n; i++)
        if (m->chain.items[i].started_at > 0)
            return true;
    return false;
}

/* The wait between the previous attempt's end (else its start) and this one's start,
 * exact: tenths under a minute when not whole, then minutes and seconds, hours and
 * minutes ("+3s", "+0.5s", "+1m30s"). */
static void gap_text(const rd_execution *prev, const rd_execution *e, char *out, size_t cap)
{
    double from = prev ? (prev->finished_at > 0 ? prev->finished_at : attempt_start(prev)) : 0;
    double to = attempt_start(e);
    if (!prev || from <= 0 || to <= 0) {
        snprintf(out, cap, "-");
        return;
    }
    double d = to - from, a = fabs(d);
    const char *sign = d < 0 ? "-" : "+";
    long s = (long)(a + 0.5);
    if (a < 60 && fabs(a - (double)s) >= 0.05)
        snprintf(out, cap, "%s%.1fs", sign, a);
    else if (s < 60)
        snprintf(out, cap, "%s%lds", sign, s);
    else if (s < 3600)
        snprintf(out, cap, "%s%ldm%02lds", sign, s / 60, s % 60);
    else if (s < 86400)
        snprintf(out, cap, "%s%ldh%02ldm", sign, s / 3600, s / 60 % 60);
    else
        snprintf(out, cap, "%s%ldd%02ldh", sign, s / 86400, s / 3600 % 24);
}

static void chain_header(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    const rd_model *m = c->model;
    chain_st *s = st_of(v);
    char *t = xasprintf("Retry chain of %s  %zu attempt%s%s%s", s->id, m->chain.n, m->chain.n == 1 ? "" : "s",
                        m->chain.n && m->chain.items[0].chain_root ? "  root " : "",
                        m->chain.n && m->chain.items[0].chain_root ? m->chain.items[0].chain_root : "");
    draw_raw(w, r.y, r.x, r.w, t, theme_attr(c->theme, TS_TITLE), c->san);
    free(t);
    if (!m->chain.n)
        return;
    const rd_execution *last = &m->chain.items[m->chain.n - 1];
    int slot = last->elig.verdict == RD_ELIG_YES ? TS_OK : last->elig.verdict == RD_ELIG_CONFIG_ERROR
               ? TS_FAILED : TS_WARNING;
    char *vt = xasprintf("verdict: %s - %s%s   newest attempt %s is %s", elig_name(last->elig.verdict),
                         last->elig.why[0] ? last->elig.why : "no reason given",
                         last->elig.flagged ? " (flagged: check the retry settings)" : "",
                         last->id ? last->id : "-", last->status ? last->status : "-");
    draw_raw(w, r.y + 1, r.x, r.w, vt, theme_attr(c->theme, (ui_slot)slot), c->san);
    free(vt);
}

typedef struct wrap_ctx { WINDOW *w; int y, x, w_cols, left, attr; } wrap_ctx;

static void wrap_line(const char *s, size_t n, void *ud)
{
    wrap_ctx *wc = ud;
    if (wc->left <= 0)
        return;
    char *line = xstrndup(s, n);
    draw_clean(wc->w, wc->y++, wc->x, wc->w_cols, line, wc->attr);
    free(line);
    wc->left--;
}

static void chain_detail(const rd_execution *e, ui_ctx *c, WINDOW *w, int y, int h, ui_rect r)
{
    if (h < 2)
        return;
    char t1[32], t2[32], t3[32], t4[32] = "";
    ctx_time(c, e->created_at, t1, sizeof t1);
    ctx_time(c, e->updated_at, t2, sizeof t2);
    ctx_time(c, e->finished_at, t3, sizeof t3);
    if (e->started_at > 0)
        ctx_time(c, e->started_at, t4, sizeof t4);
    char *l = xasprintf("attempt %d  %s  created %s%s%s  updated %s  finished %s  worker %s", e->attempt,
                        e->id ? e->id : "-", t1, t4[0] ? "  started " : "", t4, t2, t3, e->worker ? e->worker : "-");
    draw_raw(w, y, r.x, r.w, l, theme_attr(c->theme, TS_HEADER), c->san);
    free(l);
    int loop = ctx_loop(c, e);
    char lp[96] = "";
    if (loop > 0)
        snprintf(lp, sizeof lp, "LOOP: a retry now is manual retry #%d of the same failure  ", loop + 1);
    char *why = xasprintf("%seligible: %s - %s  reason: %s", lp, elig_name(e->elig.verdict), e->elig.why,
                          e->reason ? e->reason : "-");
    draw_raw(w, y + 1, r.x, r.w, why, theme_attr(c->theme, loop > 0 ? TS_WARNING : TS_DIM), c->san);
    free(why);
    char *raw = xasprintf("error: %s", e->error ? e->error : "-");
    char *clean = sanitize_str(raw, c->san);
    wrap_ctx wc = {w, y + 2, r.x, r.w, h - 2, theme_attr(c->theme, e->error ? TS_FAILED : TS_DIM)};
    text_wrap(clean, r.w, wrap_line, &wc);
    free(clean);
    free(raw);
}

static void chain_row(ui_ctx *c, const ui_table_row *row)
{
    const rd_model *m = c->model;
    int idx = row->idx;
    const rd_execution *e = &m->chain.items[idx];
    bool cur = row->cur;
    int base = row_base(c, row);
    char num[16], gap[32], started[32];
    snprintf(num, sizeof num, "%d", e->attempt);
    gap_text(idx ? &m->chain.items[idx - 1] : NULL, e, gap, sizeof gap);
    /* STARTED: when the attempt started where the store records it ("-": not started
     * yet); CREATED (the header says which) when the store records no start */
    double at = chain_has_start(m) ? e->started_at : e->created_at;
    if (at <= 0)
        snprintf(started, sizeof started, "-");
    else if (row->cols[5].w >= 19)
        ctx_time(c, at, started, sizeof started);
    else
        ctx_age(c, at, started, sizeof started);
    const char *text[] = {num, e->id ? e->id : "-", NULL, NULL, e->worker ? e->worker : "-", started, gap,
                          e->error ? e->error : ""};
    row_cells(c, row, text, base);
    row_cell(c, row, 2, e->status ? e->status : "-",
             cur ? base : theme_attr(c->theme, (ui_slot)slot_for_status(e->status)));
    int loop = ctx_loop(c, e);
    char lp[32];
    snprintf(lp, sizeof lp, "LOOP #%d", loop + 1);   /* a retry now: manual retry #loop+1 */
    row_cell(c, row, 3, loop > 0 ? lp : e->reason ? e->reason : "-",
             loop > 0 && !cur ? theme_attr(c->theme, TS_WARNING) : base);
}

static void chain_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    const rd_model *m = c->model;
    if (!st_of(v)->id[0]) {
        draw_clean(w, r.y, r.x, r.w, "Retry chain: press Enter on an execution, or :chain ID",
                   theme_attr(c->theme, TS_DIM));
        return;
    }
    if (!chain_ready(v, c)) {
        char *t = xasprintf("Retry chain of %s: loading...", st_of(v)->id);
        draw_raw(w, r.y, r.x, r.w, t, theme_attr(c->theme, TS_DIM), c->san);
        free(t);
        return;
    }
    chain_header(v, c, w, r);
    if (!m->chain.n) {
        draw_clean(w, r.y + 3, r.x + 2, r.w - 2, "no such execution, or it has no attempts",
                   theme_attr(c->theme, TS_DIM));
        return;
    }
    ui_col cols[] = {
        {.title = "#", .min = 3, .want = 3, .right = true},
        {.title = "ID", .min = 8, .want = 14, .weight = 1, .mid = true},
        {.title = "STATUS", .min = 9, .want = 10},
        {.title = "REASON", .min = 10, .want = 18, .weight = 1, .drop = 2},
        {.title = "WORKER", .min = 8, .want = 12, .weight = 1, .drop = 3, .mid = true},
        /* clock times where there is room for them (chain_row: a narrower column, ages) */
        {.title = chain_has_start(c->model) ? "STARTED" : "CREATED", .min = 8, .want = r.w >= 120 ? 19 : 8},
        {.title = "GAP", .min = 6, .want = 7, .right = true},
        {.title = "ERROR", .min = 12, .want = 20, .weight = 4},
    };
    int detail_h = r.h >= 16 ? 6 : 4;
    view_table(v, c, w, r, &(ui_table){
        .cols = cols, .n_cols = (int)(sizeof cols / sizeof *cols), .y = r.y + 2, .rows = r.h - 3 - detail_h,
        .n = (int)m->chain.n, .row = chain_row});
    chain_detail(&m->chain.items[v->list.cur], c, w, r.y + r.h - detail_h, detail_h, r);
}

static unsigned chain_key(ui_view *v, ui_ctx *c, ui_action a)
{
    const rd_model *m = c->model;
    v->list.n = chain_ready(v, c) ? (int)m->chain.n : 0;
    unsigned ch = list_nav(&v->list, a, v->rows);
    if (!(ch & UI_CH_UNHANDLED))
        return ch;
    if (a == UA_REFRESH) {
        chain_open(v, c, NULL);
        return UI_CH_REDRAW;
    }
    if (a == UA_OPEN || a == UA_DETAIL) {   /* the attempt under the cursor, in full */
        if (v->list.n && v->list.cur >= 0 && v->list.cur < v->list.n && m->chain.items[v->list.cur].id)
            ctx_fx(c, FX_VIEW, VIEW_DETAIL, m->chain.items[v->list.cur].id);
        return UI_CH_REDRAW;
    }
    if (a == UA_COPY) {
        sel_clear(&c->sel);
        if (v->list.n && v->list.cur >= 0 && v->list.cur < v->list.n)
            sel_add(&c->sel, m->chain.items[v->list.cur].id, NULL, NULL, NULL);
        ctx_fx(c, FX_COPY, 0, NULL);
        return UI_CH_REDRAW;
    }
    if (a != UA_RETRY)
        return UI_CH_UNHANDLED;
    if (!v->list.n) {
        ctx_msg(c, true, "no attempt to retry");
        return UI_CH_REDRAW;
    }
    /* retry acts on the newest attempt: that is what the core retries. A Tasker chain's
     * rows are its step's transitions (they carry the task): the target is the step. */
    const rd_execution *e = &m->chain.items[m->chain.n - 1];
    sel_clear(&c->sel);
    sel_add_exec_as(&c->sel, c, e, e->parent_id && e->chain_root ? e->chain_root : e->id);
    ctx_fx(c, FX_ACT, RD_ACT_RETRY, NULL);
    return UI_CH_REDRAW;
}

static void chain_free(ui_view *v)
{
    free(v->st);
    v->st = NULL;
}

const ui_view_ops view_chain_ops = {
    .name = "chain", .title = "Chain", .bar = chain_bar,
    .panels = PANELS_EXECS, .snapshot = "chain",
    .open = chain_open, .draw = chain_draw, .key = chain_key,
    .clickable = true, .free = chain_free,
};
