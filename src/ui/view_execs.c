/* Executions: the current keyset page, filtered, sorted, with marks for bulk actions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/sanitize.h"
#include "../core/storegroups.h"
#include "../core/xalloc.h"
#include "draw.h"
#include "picker.h"
#include "table.h"
#include "view.h"

enum { SORT_NEWEST, SORT_OLDEST, SORT_STATUS, SORT_ATTEMPT, SORT_NAME, SORT__COUNT };
static const char *const sort_names[SORT__COUNT] = {"newest", "oldest", "status", "attempts", "name"};

typedef struct execs_st {
    int sort;
    int page;              /* 1-based page number, for the title */
    ui_sel marks;          /* marked rows, copied when marked: they survive paging, sorting
                              and filtering, and are what an action acts on */
    char *last_mark;       /* id of the last mark (range start), NULL none: an id, not a
                              row index, since rows move under paging and sorting */
    size_t *rows;          /* indexes into model->execs after filter + sort */
    size_t n_rows, cap_rows;
    const void *moving;    /* a page asked for: the page it leaves (model->execs.items);
                              the cursor follows no row until another page is there */
    double follow_created; /* created_at of the execution under the cursor, as last shown */
    ui_picker pick;        /* the status picker (f) */
    ui_filter shown;       /* the filter of the page numbered: another one (`:filter`, Enter
                              on a group) starts again at page 1 */
} execs_st;

static const ui_action execs_bar[] = {UA_OPEN, UA_RETRY, UA_MARK, UA_FILTER_STATUS, UA_SEARCH,
                                      UA_FILTER_FP, UA_NEXT_PAGE, UA_SORT, UA_HELP, UA_QUIT, UA_NONE};

static execs_st *st_of(ui_view *v)
{
    if (!v->st) {
        execs_st *s = xcalloc(1, sizeof *s);
        s->page = 1;
        v->st = s;
    }
    return v->st;
}

static bool exec_visible(const rd_execution *e, const ui_filter *f)
{
    if (f->status[0] && (!e->status || strcasecmp(e->status, f->status) != 0))
        return false;
    if (f->fp[0] && (!e->fingerprint || strcmp(e->fingerprint, f->fp) != 0))
        return false;
    if (f->text[0] && !ui_match(e->id, f->text) && !ui_match(e->name, f->text) &&
        !ui_match(e->error, f->text) && !ui_match(e->worker, f->text) && !ui_match(e->parent_id, f->text))
        return false;
    if (f->worker[0] && (!e->worker || strcmp(e->worker, f->worker) != 0))
        return false;
    return true;
}

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static int exec_cmp(const rd_execution *a, const rd_execution *b, int sort)
{
    switch (sort) {
    case SORT_OLDEST: return (a->created_at > b->created_at) - (a->created_at < b->created_at);
    case SORT_STATUS: return cmp_str(a->status, b->status);
    case SORT_ATTEMPT: return b->attempt - a->attempt;
    case SORT_NAME: return cmp_str(a->name, b->name);
    default: return 0;
    }
}

/* Rebuild the row index (filter + stable insertion sort: a page is small). */
static void execs_rows(execs_st *s, const ui_ctx *c)
{
    const rd_model *m = c->model;
    xgrow(&s->rows, &s->cap_rows, m->execs.n + 1, sizeof *s->rows);
    s->n_rows = 0;
    for (size_t i = 0; i < m->execs.n; i++) {
        if (!exec_visible(&m->execs.items[i], &c->filter[VIEW_EXECS]))
            continue;
        size_t j = s->n_rows++;
        while (j > 0 && exec_cmp(&m->execs.items[s->rows[j - 1]], &m->execs.items[i], s->sort) > 0) {
            s->rows[j] = s->rows[j - 1];
            j--;
        }
        s->rows[j] = i;
    }
}

static const char *execs_row_id(const ui_ctx *c, const void *st, int row)
{
    const execs_st *s = st;
    return c->model->execs.items[s->rows[row]].id;
}

/* Only the newest page sorted newest first is live (a later page, a jump's, another sort
 * is not). */
static bool execs_live(const execs_st *s, const ui_ctx *c)
{
    return s && s->sort == SORT_NEWEST && s->page <= 1 && !s->moving && !c->model->execs_newer;
}

/* Newer executions of the live page above the rows shown: the cursor follows its
 * execution down as they arrive, and once it would scroll off the screen the screen stays
 * with it, so the newest rows are not shown: the title says so ("paused: N newer"). */
static int execs_paused(const ui_view *v, const ui_ctx *c)
{
    return execs_live(v->st, c) ? v->list.top : 0;
}

/* The followed execution is not among the rows: on a full live page whose oldest row is
 * newer than it was, newer executions pushed it off the page. */
static bool execs_pushed_out(const execs_st *s, const ui_ctx *c)
{
    return execs_live(s, c) && c->model->execs_more && s->n_rows && s->follow_created > 0 &&
           c->model->execs.items[s->rows[s->n_rows - 1]].created_at >= s->follow_created;
}

/* Follows the row under the cursor (the operator moved it), and when it was created. */
static void execs_pin(ui_view *v, const ui_ctx *c, execs_st *s)
{
    list_pin(&v->list, c, execs_row_id, s);
    bool on = v->list.cur >= 0 && (size_t)v->list.cur < s->n_rows;
    s->follow_created = on ? c->model->execs.items[s->rows[v->list.cur]].created_at : 0;
}

/* The shortest key of an action ("g" rather than "home"), "" when unbound. */
static void short_key(const ui_ctx *c, ui_action a, char *out, size_t cap)
{
    char all[256];
    keymap_all(c->km, a, all, sizeof all);
    out[0] = 0;
    for (char *tok = strtok(all, ", "); tok; tok = strtok(NULL, ", "))
        if (!out[0] || strlen(tok) < strlen(out))
            snprintf(out, cap, "%s", tok);
}

/* The rows as they are now, the cursor back on the execution it was on (kept=false when
 * that one left the view). Painting (`paint`), a cursor on the top row of the live page
 * stays on the top row: the newest execution, as a live list is watched. A key follows the
 * id painted there, so it acts on the execution shown even when a newer one came first. */
static const rd_execution *execs_current(ui_view *v, ui_ctx *c, bool *kept, bool paint)
{
    execs_st *s = st_of(v);
    execs_rows(s, c);
    v->list.n = (int)s->n_rows;
    if (paint && v->list.cur == 0 && v->list.top == 0 && execs_live(s, c))
        list_unpin(&v->list);
    if (s->moving) {       /* the rows of the page left behind are not "leaving the view" */
        list_unpin(&v->list);
        if ((const void *)c->model->execs.items != s->moving)
            s->moving = NULL;
    }
    char was[sizeof v->list.follow];
    memcpy(was, v->list.follow, sizeof was);
    *kept = list_follow(&v->list, c, "execution", execs_row_id, s);
    if (!*kept && execs_pushed_out(s, c)) {
        /* holding its row would follow whichever row slides there next, and at the page's
         * end lose it again poll after poll: the page goes live instead */
        v->list.cur = v->list.top = 0;
        execs_pin(v, c, s);
        ctx_msg(c, false, "execution %.100s left the page (newer ones pushed it out): live again", was);
    }
    list_fit(&v->list, v->rows);
    execs_pin(v, c, s);
    if (!s->n_rows)
        return NULL;
    return &c->model->execs.items[s->rows[v->list.cur]];
}

static int mark_find(const execs_st *s, const char *id)
{
    for (size_t i = 0; i < s->marks.n; i++)
        if (strcmp(s->marks.ids[i], id ? id : "") == 0)
            return (int)i;
    return -1;
}

static void mark_set(execs_st *s, const ui_ctx *c, const rd_execution *e, bool on)
{
    int i = mark_find(s, e->id);
    if (on && i < 0)
        sel_add_exec(&s->marks, c, e);
    else if (!on && i >= 0)
        sel_remove(&s->marks, (size_t)i);
}

/* "  paused: N newer - g to go live" in the title at x (after "Executions") when the
 * screen is paused; the columns it took. */
static int execs_paused_note(const ui_view *v, const ui_ctx *c, WINDOW *w, int y, int x, int cols)
{
    int newer = execs_paused(v, c);
    if (newer <= 0 || cols <= 0)
        return 0;
    char key[32], p[96];
    short_key(c, UA_TOP, key, sizeof key);
    snprintf(p, sizeof p, "  paused: %d newer %s %s to go live", newer,
             c->san & SAN_ASCII ? "-" : "\u2014", key[0] ? key : "top");
    draw_raw(w, y, x, cols, p, theme_attr(c->theme, TS_WARNING), c->san);
    char *clean = sanitize_str(p, c->san);
    int pw = sanitize_width(clean);
    free(clean);
    return pw < cols ? pw : cols;
}

/* "  group 30dcba: 20000 in the store's last 1h": the group the fingerprint filter names,
 * its whole count from the store's groups (its members are read from the store page by
 * page); just its id when the store's groups do not list it. */
static int group_title(const ui_ctx *c, char *t, size_t cap)
{
    const char *fp = c->filter[VIEW_EXECS].fp;
    if (!fp[0])
        return 0;
    char gid[GROUPID_LEN + 1], why[200], win[16];
    groupid_make(fp, gid);
    const rd_group *g = NULL;
    const rd_sgroups *sg = c->model->sgroups;
    if (!sg || sgroups_resolve(sg, fp, &g, why, sizeof why) != GROUPID_FOUND)
        return snprintf(t, cap, "  group %s", gid);
    sgroups_window_text(sgroups_window(sg), win, sizeof win);
    int n = snprintf(t, cap, "  group %s: %zu in the store's last %s", gid, g->count, win);
    return n < (int)cap ? n : (int)cap - 1;
}

static void execs_title(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    execs_st *s = st_of(v);
    char t[512];
    char more[64] = "";
    if (c->model->execs_searched > 0)
        snprintf(more, sizeof more, " (searched %ld rows; more further back)",
                 c->model->execs_searched);
    else if (c->model->execs_more)
        snprintf(more, sizeof more, " (more)");
    int n = snprintf(t, sizeof t, "  page %d%s  %zu/%zu rows  sort: %s", s->page,
                     more, s->n_rows, c->model->execs.n, sort_names[s->sort]);
    n += group_title(c, t + n, sizeof t - (size_t)n);
    if (s->marks.n) {
        size_t here = 0;   /* marks on this page as filtered: the rest are kept, not shown */
        for (size_t i = 0; i < s->n_rows; i++)
            here += mark_find(s, c->model->execs.items[s->rows[i]].id) >= 0;
        n += snprintf(t + n, sizeof t - (size_t)n, "  %zu marked", s->marks.n);
        if (here != s->marks.n)
            n += snprintf(t + n, sizeof t - (size_t)n, " (%zu on this page)", here);
    }
    /* paused first: at 80 columns the rest of the title may be cut */
    static const char head[] = "Executions";
    int used = (int)sizeof head - 1 < r.w ? (int)sizeof head - 1 : r.w;
    draw_clean(w, r.y, r.x, r.w, head, theme_attr(c->theme, TS_TITLE));
    used += execs_paused_note(v, c, w, r.y, r.x + used, r.w - used);
    draw_clean(w, r.y, r.x + used, r.w - used, t, theme_attr(c->theme, TS_TITLE));
    used = used + n < r.w ? used + n : r.w;
    filter_title(c, w, r, used, &c->filter[VIEW_EXECS]);
}

static void exec_cells(const rd_execution *e, ui_ctx *c, int loop, char cells[][64])
{
    snprintf(cells[0], 64, "%s", e->id ? e->id : "-");
    if (e->max_attempts >= 0)
        snprintf(cells[1], 64, "%d/%d", e->attempt, e->max_attempts);
    else
        snprintf(cells[1], 64, "%d", e->attempt);
    const char *el = e->elig.verdict == RD_ELIG_YES ? "yes" : e->elig.verdict == RD_ELIG_NO ? "no"
                     : e->elig.verdict == RD_ELIG_CONFIG_ERROR ? "cfg!" : "?";
    if (loop > 0)   /* the retry-loop breaker: retried by hand, failed again the same way */
        snprintf(cells[2], 64, "loop");
    else
        snprintf(cells[2], 64, "%s%s", el, e->elig.flagged ? "!" : "");
    ctx_eta(c, e->next_retry_min, cells[3], 64);
    ctx_age(c, e->created_at, cells[4], 64);
    if (e->flags & RD_EXEC_MALFORMED)
        snprintf(cells[5], 64, "malformed");
    else if (e->flags & RD_EXEC_OVERSIZED)   /* listed, its record too large to read */
        snprintf(cells[5], 64, "oversized");
    else if (e->flags & RD_EXEC_ORPHAN)
        snprintf(cells[5], 64, "orphan?");
    else
        snprintf(cells[5], 64, "%s", e->status ? e->status : "-");
}

static void execs_detail(const rd_execution *e, ui_ctx *c, WINDOW *w, int y, ui_rect r)
{
    char eta[64] = "";
    if (e->next_retry_min > 0) {
        char lo[32], hi[32];
        ctx_time(c, e->next_retry_min, lo, sizeof lo);
        ctx_time(c, e->next_retry_max, hi, sizeof hi);
        if (e->next_retry_max > e->next_retry_min + 0.5)
            snprintf(eta, sizeof eta, "  next %s..%s", lo, hi + 11);
        else
            snprintf(eta, sizeof eta, "  next %s", lo);
    }
    int loop = ctx_loop(c, e);
    char lp[96] = "";
    if (loop > 0)
        snprintf(lp, sizeof lp, "LOOP: a retry now is manual retry #%d of the same failure  ", loop + 1);
    char *l1 = xasprintf("%seligible: %s - %s%s  reason: %s%s", lp, elig_name(e->elig.verdict), e->elig.why,
                         e->elig.flagged ? " (flagged)" : "", e->reason ? e->reason : "-", eta);
    draw_raw(w, y, r.x, r.w, l1, theme_attr(c->theme, loop > 0 ? TS_WARNING : TS_DIM), c->san);
    free(l1);
    char *l2 = xasprintf("error: %s", e->error ? e->error : "-");
    draw_raw(w, y + 1, r.x, r.w, l2, theme_attr(c->theme, e->error ? TS_FAILED : TS_DIM), c->san);
    free(l2);
}

/* The time columns as wide as clock times need (the others are sized to the rows on
 * screen by the table). */
static void execs_widths(const ui_view *v, const ui_ctx *c, ui_col *cols)
{
    (void)v;
    col_clock(c, &cols[6]);
    col_clock(c, &cols[7]);
}

static void exec_row(ui_ctx *c, const ui_table_row *row)
{
    const execs_st *s = row->st;
    const rd_execution *e = &c->model->execs.items[s->rows[row->idx]];
    bool cur = row->cur, marked = mark_find(s, e->id) >= 0;
    int base = cur ? theme_attr(c->theme, TS_CURSOR) : marked ? theme_attr(c->theme, TS_MARKED) : 0;
    char cells[6][64];
    int loop = ctx_loop(c, e);
    exec_cells(e, c, loop, cells);
    int st_attr = cur ? base : theme_attr(c->theme, (e->flags & (RD_EXEC_ORPHAN | RD_EXEC_MALFORMED))
                                                    ? TS_WARNING : (ui_slot)slot_for_status(e->status));
    const char *text[] = {marked ? "*" : " ", cells[0], e->name ? e->name : "-", NULL, cells[1], NULL, cells[3],
                          cells[4], e->worker ? e->worker : "-", e->error ? e->error : ""};
    row_cells(c, row, text, base);
    row_cell(c, row, 3, cells[5], st_attr);
    row_cell(c, row, 5, cells[2], loop > 0 && !cur ? theme_attr(c->theme, TS_WARNING) : base);
}

static bool filter_same(const ui_filter *a, const ui_filter *b)
{
    return !strcmp(a->status, b->status) && !strcmp(a->text, b->text) && !strcmp(a->fp, b->fp) &&
           !strcmp(a->worker, b->worker) && a->window_s == b->window_s;
}

static void execs_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    execs_st *s = st_of(v);
    if (!filter_same(&s->shown, &c->filter[VIEW_EXECS])) {
        s->shown = c->filter[VIEW_EXECS];
        s->page = 1;
    }
    bool kept;
    execs_current(v, c, &kept, true);
    execs_title(v, c, w, r);
    ui_col cols[] = {
        {.title = "", .min = 1, .want = 1},
        {.title = "ID", .min = 8, .want = 12, .weight = 1, .mid = true},
        {.title = "NAME", .min = 10, .want = 16, .weight = 2},
        {.title = "STATUS", .min = 9, .want = 10},
        {.title = "ATT", .min = 5, .want = 5, .right = true},
        {.title = "ELIG", .min = 4, .want = 4},
        {.title = "NEXT", .min = 6, .want = 7, .drop = 2},
        {.title = "AGE", .min = 4, .want = 5, .right = true},
        {.title = "WORKER", .min = 8, .want = 14, .weight = 1, .drop = 3, .mid = true},
        {.title = "ERROR", .min = 24, .want = 30, .weight = 5},
    };
    char empty[160];   /* a bounded search: say how far it went, offer to go on */
    if (c->model->execs_searched > 0 && !c->model->execs.n)
        snprintf(empty, sizeof empty, "searched the newest %ld rows from here, none found "
                 "- search further back? (next page)", c->model->execs_searched);
    else
        snprintf(empty, sizeof empty, "%s", c->model->execs.n ? "no executions match the filter"
                 : "no executions (yet)");
    view_table(v, c, w, r, &(ui_table){
        .cols = cols, .n_cols = (int)(sizeof cols / sizeof *cols), .y = r.y + 1, .rows = r.h - 4,
        .n = (int)s->n_rows, .st = s, .fit = execs_widths, .empty = empty, .row = exec_row});
    const rd_execution *e = s->n_rows ? &c->model->execs.items[s->rows[v->list.cur]] : NULL;
    if (e && r.h >= 6)
        execs_detail(e, c, w, r.y + r.h - 2, r);
    if (s->pick.open)
        picker_draw(&s->pick, c, w, r, "status filter: enter picks, esc closes");
}

/* f: the statuses with their counts (the store's, then the page's others), "any" first,
 * the cursor on the status filtered now. */
static void execs_open_picker(execs_st *s, const ui_ctx *c)
{
    const rd_model *m = c->model;
    ui_picker *p = &s->pick;
    picker_reset(p);
    long total = 0;
    bool rough = false;
    for (size_t i = 0; i < m->counts.n; i++) {
        total += m->counts.items[i].count;
        rough |= m->counts.items[i].estimated || m->counts.items[i].capped;
    }
    char n[24] = "";
    if (m->counts.n)
        snprintf(n, sizeof n, "%s%ld", rough ? "~" : "", total);
    picker_add(p, "any status", n);
    for (size_t i = 0; i < m->counts.n; i++) {
        const rd_count *k = &m->counts.items[i];
        snprintf(n, sizeof n, "%s%ld%s", k->estimated ? "~" : "", k->count, k->capped ? "+" : "");
        picker_add(p, k->status, n);
    }
    for (size_t i = 0; i < m->execs.n; i++) {
        const char *st = m->execs.items[i].status;
        bool seen = !st;
        for (int j = 1; j < p->n && !seen; j++)
            seen = strcasecmp(p->label[j], st) == 0;
        if (!seen)
            picker_add(p, st, "");
    }
    for (int j = 1; j < p->n; j++)
        if (strcasecmp(p->label[j], c->filter[VIEW_EXECS].status) == 0)
            p->cur = j;
    p->open = true;
}

/* The marked ids, else the row under the cursor, to the clipboard. */
static void execs_copy(ui_view *v, ui_ctx *c, const rd_execution *e)
{
    execs_st *s = st_of(v);
    sel_clear(&c->sel);
    for (size_t i = 0; i < s->marks.n; i++)
        sel_add(&c->sel, s->marks.ids[i], NULL, NULL, NULL);
    if (!s->marks.n && e)
        sel_add(&c->sel, e->id, NULL, NULL, NULL);
    ctx_fx(c, FX_COPY, 0, NULL);
}

static void execs_retry(ui_view *v, ui_ctx *c, const rd_execution *e)
{
    execs_st *s = st_of(v);
    sel_clear(&c->sel);
    if (s->marks.n) {
        for (size_t i = 0; i < s->marks.n; i++) {   /* the frozen selection: ids as marked */
            const rd_execution *m = NULL;   /* on this page: its state now (the journal moves) */
            for (size_t k = 0; k < c->model->execs.n && !m; k++)
                if (c->model->execs.items[k].id && strcmp(c->model->execs.items[k].id, s->marks.ids[i]) == 0)
                    m = &c->model->execs.items[k];
            if (m) {
                sel_add_exec(&c->sel, c, m);
                continue;
            }
            sel_add_from(&c->sel, &s->marks, i);   /* off this page: its state when marked */
        }
    } else if (e)
        sel_add_exec(&c->sel, c, e);
    if (!c->sel.n) {
        ctx_msg(c, true, "nothing selected");
        return;
    }
    ctx_fx(c, FX_ACT, RD_ACT_RETRY, NULL);
}

static unsigned execs_marks(ui_view *v, ui_ctx *c, ui_action a, const rd_execution *e)
{
    execs_st *s = st_of(v);
    if (a == UA_MARK_CLEAR) {
        sel_clear(&s->marks);
        free(s->last_mark);
        s->last_mark = NULL;
        return UI_CH_REDRAW;
    }
    if (!e)
        return UI_CH_REDRAW;
    char *id = xstrdup(e->id ? e->id : "");
    if (a == UA_MARK) {
        mark_set(s, c, e, mark_find(s, e->id) < 0);
        if (v->list.cur + 1 < v->list.n)
            v->list.cur++;
        execs_pin(v, c, s);
    } else {
        int from = v->list.cur, to = v->list.cur;
        for (size_t i = 0; s->last_mark && i < s->n_rows; i++)
            if (strcmp(c->model->execs.items[s->rows[i]].id ? c->model->execs.items[s->rows[i]].id : "",
                       s->last_mark) == 0)
                from = (int)i;
        if (s->last_mark && from == to && strcmp(s->last_mark, id) != 0)
            ctx_msg(c, false, "the last mark is not on this page: marked this row only");
        if (from > to) { int t = from; from = to; to = t; }
        for (int i = from; i <= to && i < (int)s->n_rows; i++)
            mark_set(s, c, &c->model->execs.items[s->rows[i]], true);
    }
    free(s->last_mark);
    s->last_mark = id;
    return UI_CH_REDRAW;
}

/* The filter changed: the first page from the top. */
static unsigned execs_refilter(ui_view *v, ui_ctx *c)
{
    v->list.cur = v->list.top = 0;
    list_unpin(&v->list);
    st_of(v)->page = 1;
    ctx_fx(c, FX_FILTER, VIEW_EXECS, NULL);
    return UI_CH_REDRAW;
}

/* A key while the status picker is open. */
static unsigned execs_pick_key(ui_view *v, ui_ctx *c, ui_action a)
{
    execs_st *s = st_of(v);
    bool closed;
    int k = picker_key(&s->pick, a, &closed);
    if (k < 0)
        return UI_CH_REDRAW;
    ui_filter *f = &c->filter[VIEW_EXECS];
    snprintf(f->status, sizeof f->status, "%s", k == 0 ? "" : s->pick.label[k]);
    return execs_refilter(v, c);
}

static unsigned execs_filter_key(ui_view *v, ui_ctx *c, ui_action a, const rd_execution *e)
{
    if (a == UA_FILTER_STATUS) {
        execs_open_picker(st_of(v), c);
        return UI_CH_REDRAW;
    } else if (a == UA_FILTER_FP) {
        if (!e || !e->fingerprint || !e->fingerprint[0]) {
            ctx_msg(c, true, "this row has no error fingerprint");
            return UI_CH_REDRAW;
        }
        ui_filter *f = &c->filter[VIEW_EXECS];
        if (strcmp(f->fp, e->fingerprint) == 0)
            f->fp[0] = 0;
        else
            snprintf(f->fp, sizeof f->fp, "%s", e->fingerprint);
        f->window_s = 0;   /* every failure with it, newest first */
    } else
        memset(&c->filter[VIEW_EXECS], 0, sizeof c->filter[VIEW_EXECS]);
    return execs_refilter(v, c);
}

/* Keys that act on the execution under the cursor. */
static bool execs_acts_on_row(ui_action a)
{
    return a == UA_OPEN || a == UA_DETAIL || a == UA_RETRY || a == UA_MARK || a == UA_MARK_RANGE || a == UA_FILTER_FP;
}

static unsigned execs_key(ui_view *v, ui_ctx *c, ui_action a)
{
    execs_st *s = st_of(v);
    if (s->pick.open)
        return execs_pick_key(v, c, a);
    bool kept;
    const rd_execution *e = execs_current(v, c, &kept, false);
    unsigned ch = list_nav(&v->list, a, v->rows);
    if (!(ch & UI_CH_UNHANDLED)) {
        execs_pin(v, c, s);
        return ch;
    }
    if (!kept && execs_acts_on_row(a)) {
        /* the execution shown under the cursor when the key was pressed is gone: never act
         * on the one that slid into its place */
        char was[sizeof c->msg];
        memcpy(was, c->msg, sizeof was);
        ctx_msg(c, true, "%.200s: nothing done", was);
        return UI_CH_REDRAW;
    }
    switch (a) {
    case UA_OPEN:
    case UA_DETAIL:
        if (e)
            ctx_fx(c, FX_VIEW, a == UA_OPEN ? VIEW_CHAIN : VIEW_DETAIL, e->id);
        return UI_CH_REDRAW;
    case UA_SORT: s->sort = (s->sort + 1) % SORT__COUNT; return UI_CH_REDRAW;
    case UA_NEXT_PAGE:
    case UA_PREV_PAGE:
        if (a == UA_NEXT_PAGE && !c->model->execs_more) {
            ctx_msg(c, false, "this is the last page");
            return UI_CH_REDRAW;
        }
        if (a == UA_PREV_PAGE && s->page <= 1 && !c->model->execs_newer) {
            ctx_msg(c, false, "this is the first page");
            return UI_CH_REDRAW;
        }
        /* page 1 with newer executions: a jump's page; the way to them is the newest page */
        bool newest = a == UA_PREV_PAGE && s->page <= 1;
        if (newest)
            ctx_msg(c, false, "back to the newest executions (the jump's page was not the first)");
        s->page = newest ? 1 : s->page + (a == UA_NEXT_PAGE ? 1 : -1);
        v->list.cur = v->list.top = 0;
        list_unpin(&v->list);
        s->moving = c->model->execs.items;
        ctx_fx(c, FX_PAGE, newest ? 0 : a == UA_NEXT_PAGE ? 1 : -1, NULL);
        return UI_CH_REDRAW;
    case UA_JUMP: ctx_fx(c, FX_PROMPT, PROMPT_JUMP, NULL); return UI_CH_REDRAW;
    case UA_FILTER_STATUS: case UA_FILTER_FP: case UA_FILTER_CLEAR:
        return execs_filter_key(v, c, a, e);
    case UA_MARK: case UA_MARK_RANGE: case UA_MARK_CLEAR:
        return execs_marks(v, c, a, e);
    case UA_RETRY: execs_retry(v, c, e); return UI_CH_REDRAW;
    case UA_RETRY_ALL: ctx_fx(c, FX_RETRY_SET, 0, "filter"); return UI_CH_REDRAW;   /* every page */
    case UA_COPY: execs_copy(v, c, e); return UI_CH_REDRAW;
    case UA_REFRESH: ctx_fx(c, FX_REFRESH, 0, NULL); return UI_CH_REDRAW;
    default: return UI_CH_UNHANDLED;
    }
}

static void execs_open(ui_view *v, ui_ctx *c, const char *arg)
{
    execs_st *s = st_of(v);
    if (arg && *arg) {        /* ":jump ID" lands here */
        s->page = 1;
        v->list.cur = v->list.top = 0;
        list_unpin(&v->list);
    }
    (void)c;
}

static void execs_free(ui_view *v)
{
    execs_st *s = v->st;
    if (!s)
        return;
    sel_clear(&s->marks);
    free(s->last_mark);
    free(s->rows);
    free(s);
    v->st = NULL;
}

/* The status picker takes typed letters (type to match) before the keymap does; a
 * movement key (j, k) still moves until something has been typed. */
static bool execs_raw_key(ui_view *v, ui_ctx *c, int key, bool nav)
{
    (void)c;
    execs_st *s = v->st;
    if (!s || !s->pick.open || (nav && !s->pick.typed[0]))
        return false;
    return picker_type(&s->pick, key);
}

const ui_view_ops view_execs_ops = {
    .name = "executions", .title = "Executions", .bar = execs_bar,
    .panels = PANELS_EXECS, .snapshot = "executions",
    .open = execs_open, .draw = execs_draw, .key = execs_key, .search = true,
    .clickable = true, .row_id = execs_row_id, .raw_key = execs_raw_key, .free = execs_free,
};
