/* Error groups: the failures of the store's last hour (or the window `:groups 6h` asks for)
 * grouped by error fingerprint, computed by the store's source when the view opens and on
 * ^r (storegroups.h); a store that cannot compute them: the loaded failed executions
 * (groups.h). Count, retry-eligible members, loop retries, trend, first/last seen and the
 * actions affected. Enter lists a group's executions; retry retries the whole group in the
 * window (setretry.h), the store selecting it when asked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/groupid.h"
#include "../core/onset.h"
#include "../core/storegroups.h"
#include "../core/xalloc.h"
#include "draw.h"
#include "table.h"
#include "view.h"

typedef struct groups_st {
    rd_group *g;
    size_t n;
    size_t failed;         /* failed executions among the loaded ones */
    size_t all, shown;     /* groups built / left by the view's filter (s->n == shown) */
    int *loops;            /* per loaded execution: ctx_loop */
    size_t cap_loops;
    double window_s;       /* the store's window asked for (0: not yet) */
    bool store;            /* the groups shown are the store's (else the loaded page's) */
    int pick;              /* what stands out: the item picked (1..), 0 none */
    char pick_fp[256];     /* ... about this group (another group: none) */
} groups_st;

enum { SO_SHOWN = 3 };     /* what stands out: the first three under the group */

static const ui_action groups_bar[] = {UA_OPEN, UA_RETRY, UA_REFRESH, UA_VIEW_EXECS, UA_HELP, UA_QUIT, UA_NONE};

static groups_st *st_of(ui_view *v)
{
    if (!v->st)
        v->st = xcalloc(1, sizeof(groups_st));
    return v->st;
}

static const char *groups_row_id(const ui_ctx *c, const void *st, int row)
{
    (void)c;
    return ((const groups_st *)st)->g[row].fp;
}

static bool group_visible(const rd_group *g, const char *text)
{
    bool hit = ui_match(g->fp, text) || ui_match(g->sample, text);
    for (size_t k = 0; k < g->n_actions && !hit; k++)
        hit = ui_match(g->actions[k].name, text);
    return hit;
}

/* Keeps the groups the view's search text matches (its own filter, ctx.filter[VIEW_GROUPS]). */
static void groups_filter(groups_st *s, const char *text)
{
    size_t kept = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (group_visible(&s->g[i], text))
            s->g[kept++] = s->g[i];
        else
            groups_free_one(&s->g[i]);
    }
    s->shown = kept;
}

/* The groups as the model and the journal stand now, the cursor on the fingerprint it
 * was on; NULL when there is none (kept=false when that group is gone). */
static const rd_group *groups_current(ui_view *v, ui_ctx *c, bool *kept)
{
    groups_st *s = st_of(v);
    const rd_model *m = c->model;
    groups_free(s->g, s->n);
    xgrow(&s->loops, &s->cap_loops, m->execs.n + 1, sizeof *s->loops);
    s->failed = 0;
    for (size_t i = 0; i < m->execs.n; i++) {
        s->loops[i] = ctx_loop(c, &m->execs.items[i]);
        s->failed += exec_failed(&m->execs.items[i]);
    }
    s->store = m->sgroups || m->sgroups_pending;
    s->n = sgroups_of_model(m, s->loops, c->now, &s->g);
    s->all = s->n;
    groups_filter(s, c->filter[VIEW_GROUPS].text);
    s->n = s->shown;
    v->list.n = (int)s->n;
    *kept = list_follow(&v->list, c, "error group", groups_row_id, s);
    list_fit(&v->list, v->rows);
    return s->n ? &s->g[v->list.cur] : NULL;
}

/* The store's groups with a baseline of their window get a line of what stands out. */
static bool has_standout(const ui_ctx *c)
{
    return c->model->sgroups && sgroups_base(c->model->sgroups);
}

/* The item picked about g (0 none: the pick was about another group). */
static int pick_of(const groups_st *s, const rd_group *g)
{
    return s->pick && strcmp(s->pick_fp, g->fp) == 0 ? s->pick : 0;
}

/* "stands out: 90 % on worker 7 (2.5 % of the hour) · [60 % ingest.parse (17 %)]": the
 * first SO_SHOWN, the one picked in brackets; or the note saying why there is none. */
static void standout_line(const groups_st *s, const ui_ctx *c, const rd_group *g, char *out, size_t cap)
{
    const rd_sgroups *sg = c->model->sgroups;
    const rd_standout *l;
    size_t n;
    int pick = pick_of(s, g);
    if (sgroups_standout(sg, g->fp, &l, &n) != SO_LISTED || !n || !pick) {
        sgroups_standout_text(sg, g, SO_SHOWN, out, cap);
        if (n && (size_t)snprintf(NULL, 0, "%s", out) + 24 < cap)
            strcat(out, "  (tab: pick one)");
        return;
    }
    size_t used = (size_t)snprintf(out, cap, "stands out: ");
    for (size_t k = 0; k < n && k < SO_SHOWN && used < cap; k++) {
        char item[256];
        so_item_text(&l[k], sgroups_window(sg), k == 0, item, sizeof item);
        bool on = (int)k + 1 == pick;
        used += (size_t)snprintf(out + used, cap - used, "%s%s%s%s", k ? " \u00b7 " : "", on ? "[" : "",
                                 item, on ? "]" : "");
    }
    if (so_base_capped(sgroups_base(sg)) && used < cap)     /* the baseline's bound, said */
        used += (size_t)snprintf(out + used, cap - used, " [the window's newest %zu executions]",
                                 so_base_executions(sgroups_base(sg)));
    if (used < cap)
        snprintf(out + used, cap - used, "  enter: its members on it");
}

static void actions_text(const rd_group *g, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = 0;
    for (size_t k = 0; k < g->n_actions && used + 1 < cap; k++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s(%zu)", k ? " " : "", g->actions[k].name,
                                 g->actions[k].count);
}

static void groups_detail(const groups_st *s, const rd_group *g, ui_ctx *c, WINDOW *w, int y, ui_rect r)
{
    if (has_standout(c)) {          /* what stands out about it, over its breakdown */
        char so[1024];
        standout_line(s, c, g, so, sizeof so);
        draw_raw(w, y++, r.x, r.w, so, theme_attr(c->theme, pick_of(s, g) ? TS_TITLE : TS_WARNING), c->san);
    }
    rd_onset on;                    /* when it started, and what changed then (onset.h) */
    if (c->model->sgroups && sgroups_onset(c->model->sgroups, c->hist, g->fp, &on)) {
        char t[1024];
        onset_text(&on, c->local_time, t, sizeof t);
        draw_clean(w, y++, r.x, r.w, t, theme_attr(c->theme, on.n ? TS_WARNING : TS_DIM));
    }
    char acts[256];
    actions_text(g, acts, sizeof acts);
    char *l1 = xasprintf("%zu failed, %zu retry-eligible, %zu ineligible, %zu loop retr%s  last 15m: %zu, before: "
                         "%zu  actions: %s", g->count, g->eligible, g->count - g->eligible, g->loops,
                         g->loops == 1 ? "y" : "ies", g->recent, g->before, acts);
    draw_raw(w, y, r.x, r.w, l1, theme_attr(c->theme, g->loops ? TS_WARNING : TS_DIM), c->san);
    free(l1);
    char *l2 = xasprintf("newest error: %s", g->sample ? g->sample : "-");
    draw_raw(w, y + 1, r.x, r.w, l2, theme_attr(c->theme, TS_FAILED), c->san);
    free(l2);
}

static void groups_row(ui_ctx *c, const ui_table_row *row)
{
    const groups_st *s = row->st;
    const rd_group *g = &s->g[row->idx];
    bool cur = row->cur;
    int base = row_base(c, row);
    char id[GROUPID_LEN + 1], count[16], elig[16], loops[16], trend[32], first[24], last[24], acts[256];
    groupid_make(g->fp, id);
    snprintf(count, sizeof count, "%zu", g->count);
    snprintf(elig, sizeof elig, "%zu", g->eligible);
    snprintf(loops, sizeof loops, "%zu", g->loops);
    snprintf(trend, sizeof trend, "%s %zu/%zu", trend_name(g->trend), g->recent, g->before);
    ctx_age(c, g->first_seen, first, sizeof first);
    ctx_age(c, g->last_seen, last, sizeof last);
    actions_text(g, acts, sizeof acts);
    int trend_slot = g->trend == TREND_RISING || g->trend == TREND_NEW ? TS_FAILED : TS_DIM;
    const char *text[] = {id, count, elig, NULL, NULL, first, last, acts, g->fp[0] ? g->fp : "(no error text)"};
    row_cells(c, row, text, base);
    row_cell(c, row, 3, loops, g->loops && !cur ? theme_attr(c->theme, TS_WARNING) : base);
    row_cell(c, row, 4, trend, cur ? base : theme_attr(c->theme, (ui_slot)trend_slot));
}

/* The title: the store's window, the failures read, the age of the result and whether the
 * bound was hit; or the loaded page's. */
static int groups_title(const groups_st *s, ui_ctx *c, const char *shown, char *t, size_t cap)
{
    const rd_model *m = c->model;
    if (!s->store)
        return snprintf(t, cap, "Error groups  %s%zu group%s of %zu failed executions among the %zu loaded",
                        shown, s->all, s->all == 1 ? "" : "s", s->failed, m->execs.n);
    const rd_sgroups *g = m->sgroups;
    char win[16], age[24] = "", capped[64] = "";
    sgroups_window_text(g ? sgroups_window(g) : s->window_s, win, sizeof win);
    if (g)
        ctx_age(c, sgroups_time(g), age, sizeof age);
    if (g && sgroups_capped(g))
        snprintf(capped, sizeof capped, "  capped at %ld failures", sgroups_cap(g));
    return snprintf(t, cap, "Error groups  last %s: %s%zu group%s of %zu failures in the store  %s%s%s%s",
                    win, shown, s->all, s->all == 1 ? "" : "s", g ? sgroups_failures(g) : 0,
                    m->sgroups_pending ? "computing…" : "computed ", m->sgroups_pending ? "" : age,
                    m->sgroups_pending ? "" : " ago", capped);
}

static void groups_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    groups_st *s = st_of(v);
    bool kept;
    groups_current(v, c, &kept);
    char t[256], shown[48] = "";
    if (s->n != s->all)
        snprintf(shown, sizeof shown, "%zu shown of ", s->n);
    int tn = groups_title(s, c, shown, t, sizeof t);
    draw_clean(w, r.y, r.x, r.w, t, theme_attr(c->theme, TS_TITLE));
    int used = filter_title(c, w, r, tn, &c->filter[VIEW_GROUPS]);   /* before the legend */
    char part[220];
    if (used < r.w && model_partial_text(c->model, part + 2, sizeof part - 2)) {
        part[0] = part[1] = ' ';     /* the groups of the tasks read so far */
        draw_clean(w, r.y, r.x + used, r.w - used, part, theme_attr(c->theme, TS_WARNING));
    } else if (used < r.w)
        draw_clean(w, r.y, r.x + used, r.w - used, "  trend: last 15m/before", theme_attr(c->theme, TS_TITLE));
    ui_col cols[] = {
        {.title = "ID", .min = GROUPID_LEN, .want = GROUPID_LEN, .drop = 4},
        {.title = "COUNT", .min = 5, .want = 5, .right = true},
        {.title = "ELIG", .min = 4, .want = 4, .right = true},
        {.title = "LOOP", .min = 4, .want = 4, .drop = 1, .right = true},
        {.title = "TREND", .min = 9, .want = 14},
        {.title = "FIRST", .min = 5, .want = 5, .drop = 2, .right = true},
        {.title = "LAST", .min = 4, .want = 5, .right = true},
        {.title = "ACTIONS", .min = 10, .want = 24, .weight = 1, .drop = 3},
        {.title = "ERROR", .min = 20, .want = 40, .weight = 4},
    };
    col_clock(c, &cols[5]);
    col_clock(c, &cols[6]);
    /* the lines of what stands out and of the onset (the store's groups) */
    int extra = (has_standout(c) ? 1 : 0) + (c->model->sgroups ? 1 : 0);
    view_table(v, c, w, r, &(ui_table){
        .cols = cols, .n_cols = (int)(sizeof cols / sizeof *cols), .y = r.y + 1, .rows = r.h - 4 - extra,
        .n = (int)s->n, .st = s, .row = groups_row,
        .empty = s->all ? "no error group matches the filter"
                 : s->store ? (c->model->sgroups_pending ? "computing the error groups…" : "no failures in the window")
                 : c->model->execs.n ? "no failed executions among the loaded ones" : "no executions (yet)"});
    if (s->n && r.h >= 6 + extra)
        groups_detail(s, &s->g[v->list.cur], c, w, r.y + r.h - 2 - extra, r);
}

/* The frozen selection: the group's members as they are now; the confirmation sends the
 * retry-eligible ones (guard.h) unless overridden. */
static void groups_retry(ui_ctx *c, const rd_group *g)
{
    sel_clear(&c->sel);
    const rd_model *m = c->model;
    for (size_t k = 0; k < g->n_members; k++)
        sel_add_exec(&c->sel, c, &m->execs.items[g->members[k]]);
    for (size_t k = 0; !g->n_members && k < m->execs.n; k++) {   /* a store's group: its loaded members */
        const rd_execution *e = &m->execs.items[k];
        if (exec_failed(e) && strcmp(e->fingerprint ? e->fingerprint : "", g->fp) == 0)
            sel_add_exec(&c->sel, c, e);
    }
    c->sel.group = true;
    sel_note(&c->sel, "error group: %s", g->fp[0] ? g->fp : "(no error text)");
    ctx_fx(c, FX_ACT, RD_ACT_RETRY, NULL);
}

/* A store's group: the whole group in the view's window, selected by the store now
 * (setretry.h), not the rows loaded; the loaded page's groups: their members. */
static void groups_retry_whole(const groups_st *s, ui_ctx *c, const rd_group *g)
{
    if (!s->store) {
        groups_retry(c, g);
        return;
    }
    char what[sizeof ((ui_effect *)0)->text];
    if (snprintf(what, sizeof what, "group:%s", g->fp) >= (int)sizeof what) {
        ctx_msg(c, true, "this group's fingerprint is too long to select by: retry its rows instead");
        return;
    }
    ctx_fx(c, FX_RETRY_SET, (int)(s->window_s > 0 ? s->window_s : SGROUPS_WINDOW_S), what);
}

/* tab: the next of what stands out about g (after the last: none). */
static void standout_pick(groups_st *s, ui_ctx *c, const rd_group *g)
{
    const rd_standout *l;
    size_t n = 0;
    if (!g || !c->model->sgroups || sgroups_standout(c->model->sgroups, g->fp, &l, &n) != SO_LISTED || !n) {
        ctx_msg(c, false, "nothing stands out about %s to filter by", g ? "this group" : "no group");
        return;
    }
    int pick = pick_of(s, g) + 1;
    s->pick = pick > (int)(n < SO_SHOWN ? n : SO_SHOWN) ? 0 : pick;
    snprintf(s->pick_fp, sizeof s->pick_fp, "%s", g->fp);
}

/* The members' filter (the executions view's, :filter's) on the item picked: a worker by
 * its id, an action by its name; the filter has no attempt or host: said, and the members
 * listed. */
static void standout_filter(const groups_st *s, ui_ctx *c, const rd_group *g)
{
    const rd_standout *l;
    size_t n = 0;
    int pick = pick_of(s, g);
    if (!pick || sgroups_standout(c->model->sgroups, g->fp, &l, &n) != SO_LISTED || (size_t)pick > n)
        return;
    const rd_standout *it = &l[pick - 1];
    ui_filter *f = &c->filter[VIEW_EXECS];
    if (it->dim == SO_WORKER && strlen(it->value) < sizeof f->worker)
        snprintf(f->worker, sizeof f->worker, "%s", it->value);
    else if (it->dim == SO_ACTION && strlen(it->value) < sizeof f->text)
        snprintf(f->text, sizeof f->text, "%s", it->value);
    else
        ctx_msg(c, false, "the executions filter has no %s: the group's members are listed", so_dim_name(it->dim));
}

static unsigned groups_key(ui_view *v, ui_ctx *c, ui_action a)
{
    groups_st *s = st_of(v);
    bool kept;
    const rd_group *g = groups_current(v, c, &kept);
    unsigned ch = list_nav(&v->list, a, v->rows);
    if (!(ch & UI_CH_UNHANDLED)) {
        list_pin(&v->list, c, groups_row_id, s);
        return ch;
    }
    if ((a == UA_OPEN || a == UA_RETRY || a == UA_RETRY_ALL) && (!kept || !g)) {
        if (!g)
            ctx_msg(c, true, "no error group selected");
        return UI_CH_REDRAW;   /* never act on a group that slid under the cursor */
    }
    switch (a) {
    case UA_STANDS_OUT: standout_pick(s, c, g); return UI_CH_REDRAW;
    case UA_OPEN:   /* the group's executions: the executions view filtered by its fingerprint */
        memset(&c->filter[VIEW_EXECS], 0, sizeof c->filter[VIEW_EXECS]);
        snprintf(c->filter[VIEW_EXECS].fp, sizeof c->filter[VIEW_EXECS].fp, "%s", g->fp);
        standout_filter(s, c, g);   /* and on what stands out, when one is picked */
        /* a store's group: its members of the view's window, read from the store */
        c->filter[VIEW_EXECS].window_s = s->store ? (s->window_s > 0 ? s->window_s : SGROUPS_WINDOW_S) : 0;
        ctx_fx(c, FX_FILTER, VIEW_EXECS, NULL);
        ctx_fx(c, FX_VIEW, VIEW_EXECS, NULL);
        return UI_CH_REDRAW;
    case UA_RETRY: case UA_RETRY_ALL: groups_retry_whole(s, c, g); return UI_CH_REDRAW;
    case UA_REFRESH:
        ctx_fx(c, FX_REFRESH, 0, NULL);
        ctx_fx(c, FX_GROUPS, (int)s->window_s, NULL);   /* computed again, on demand only */
        return UI_CH_REDRAW;
    default: return UI_CH_UNHANDLED;
    }
}

/* `:groups 6h`: the window (default the last hour); the store computes the groups now. */
static void groups_open(ui_view *v, ui_ctx *c, const char *arg)
{
    groups_st *s = st_of(v);
    double w = s->window_s > 0 ? s->window_s : SGROUPS_WINDOW_S;
    if (arg && *arg && !sgroups_parse_window(arg, &w))
        ctx_msg(c, true, "groups: the window is a duration from 1m to 30d (e.g. 6h), not '%.40s'", arg);
    s->window_s = w;
    ctx_fx(c, FX_JOURNAL, 0, NULL);   /* loop retries: the journal as it is now */
    ctx_fx(c, FX_GROUPS, (int)w, NULL);
}

static void groups_view_free(ui_view *v)
{
    groups_st *s = v->st;
    if (!s)
        return;
    groups_free(s->g, s->n);
    free(s->loops);
    free(s);
    v->st = NULL;
}

const ui_view_ops view_groups_ops = {
    .name = "groups", .title = "Error groups", .bar = groups_bar,
    .panels = PANELS_EXECS, .snapshot = "groups",
    .open = groups_open, .draw = groups_draw, .key = groups_key, .search = true,
    .clickable = true, .row_id = groups_row_id, .free = groups_view_free,
};
