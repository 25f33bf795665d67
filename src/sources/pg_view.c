/*
 * What the PostgreSQL source is asked to show, and publishing the answers (pg_view.h).
 */
#include "pg_view.h"

#include <stdlib.h>
#include <string.h>

#include "../core/detail.h"
#include "../core/storegroups.h"
#include "../core/xalloc.h"
#include "pg_groups.h"

/* Rows an executions page with a filter searches per request (its $6): SCAN_BUDGET for a
 * new search, SCAN_GROWTH times more each time the operator goes on further back from
 * where a search stopped without a page of matches, at most SCAN_BUDGET_MAX. */
enum { SCAN_BUDGET = 2000, SCAN_GROWTH = 10, SCAN_BUDGET_MAX = 200000 };
/* A store's set ([query by_status]) filtered by a fingerprint or a text reads a page's rows
 * first (a group's members are most of its failures: its page is in the first rows read);
 * a page not filled goes on at once from where the read stopped, SET_READ rows a read (the
 * memory a read holds stays flat), until SCAN_BUDGET_MAX rows were searched: then it is
 * shown as far as it got. */
enum { SET_READ = 2000 };

/* A page start; budget: the rows a filtered page from there searches (0: SCAN_BUDGET). */
typedef struct cursor { char *key, *id; long budget; } cursor;

struct pg_view {
    rd_model *model;
    int page_size;
    /* what is wanted next */
    bool want_main, want_page, want_dlq;
    unsigned interest;            /* RD_PANEL_*: the lists on screen (sources.h) */
    char *want_chain, *want_jump;
    char *want_detail;            /* one execution in full (the detail pane) */
    char *want_worker;            /* the drain cockpit's worker: its running executions are
                                   * read on every poll while it is set */
    /* what is in flight */
    char *worker_inflight, *chain_inflight, *jump_inflight, *detail_inflight;
    unsigned page_gen, page_gen_inflight, page_gen_applied;
    /* executions page */
    rd_exec_filter filter;
    char window_p[32];            /* filter.window_s as $5 of [query by_status] */
    cursor cont;                  /* a set page being filled: the next read's start, size */
    bool cont_inflight;           /* the page in flight is such a read */
    rd_execution *acc;            /* that page's rows so far (page_size + 1) */
    size_t nacc;
    long searched;                /* rows that page has read */
    bool has_set;                 /* the profile has [query by_status] (pg_view_set_query) */
    cursor start, next;
    cursor *stack;
    size_t depth, stack_cap;
    pg_dlq *dlq;                  /* the DLQ's pages (pg_dlq.c) */
    /* the error groups: the window and bound asked for ($1, $2), wanted / in flight */
    double groups_window_s;
    long groups_cap;
    char groups_p1[32], groups_p2[24];
    bool want_groups, groups_inflight;
    so_base *groups_base;          /* the baseline read with the groups in flight */
};

static void cursor_free(cursor *c)
{
    free(c->key);
    free(c->id);
    c->key = c->id = NULL;
    c->budget = 0;
}

static void cursor_take(cursor *dst, cursor *src)
{
    cursor_free(dst);
    *dst = *src;
    src->key = src->id = NULL;
    src->budget = 0;
}

static void stack_push(pg_view *v)
{
    if (v->depth == v->stack_cap)
        xgrow(&v->stack, &v->stack_cap, v->depth + 1, sizeof *v->stack);
    v->stack[v->depth++] = v->start;
    v->start.key = v->start.id = NULL;
    v->start.budget = 0;
}

static void acc_clear(pg_view *v)
{
    for (size_t i = 0; i < v->nacc; i++)
        execution_clear(&v->acc[i]);
    v->nacc = 0;
    v->searched = 0;
}

static void stack_clear(pg_view *v)
{
    cursor_free(&v->cont);
    acc_clear(v);
    for (size_t i = 0; i < v->depth; i++)
        cursor_free(&v->stack[i]);
    v->depth = 0;
    cursor_free(&v->start);
    cursor_free(&v->next);
}

static void filter_free(rd_exec_filter *f)
{
    free(f->status);
    free(f->text);
    free(f->fingerprint);
    free(f->worker);
}

/* A set page keeps some of the rows it reads (a fingerprint, a text: matched here). */
static bool set_sparse(const pg_view *v) { return v->filter.fingerprint || v->filter.text; }

/* The rows a set page filtered by a fingerprint reads (its $4 less the boundary row). */
static long set_budget(const pg_view *v)
{
    return v->cont.key && v->cont.budget > 0 ? v->cont.budget : v->page_size;
}

/* The rows the current filtered page searches (its $6). */
static long scan_budget(const pg_view *v)
{
    return v->start.budget > 0 ? v->start.budget : SCAN_BUDGET;
}

static bool filtered(const pg_view *v)
{
    return v->filter.text || v->filter.status || v->filter.worker;
}

/* The page is a store's set read by the status's index: a fingerprint (a group's members:
 * failures) or a selection by status, when the profile can; never with a worker filter
 * (the worker's own index serves that, as before). */
static bool set_path(const pg_view *v)
{
    return v->has_set && !v->filter.worker && (v->filter.fingerprint || (v->filter.by_status && v->filter.status));
}

void pg_view_set_query(pg_view *v, bool has) { v->has_set = has; }

pg_view *pg_view_new(rd_model *m, int page_size)
{
    pg_view *v = xcalloc(1, sizeof *v);
    v->model = m;
    v->page_size = page_size > 0 ? page_size : 100;
    v->interest = RD_PANEL_ALL;
    v->dlq = pg_dlq_new();
    return v;
}

void pg_view_free(pg_view *v)
{
    if (!v)
        return;
    free(v->want_chain);
    free(v->want_jump);
    free(v->chain_inflight);
    free(v->jump_inflight);
    free(v->want_detail);
    free(v->detail_inflight);
    free(v->want_worker);
    free(v->worker_inflight);
    filter_free(&v->filter);
    stack_clear(v);
    free(v->stack);
    free(v->acc);
    pg_dlq_free(v->dlq);
    so_base_free(v->groups_base);
    free(v);
}

/* ---- the ops ---- */

void pg_view_want_refresh(pg_view *v) { v->want_main = v->want_page = true; }

unsigned pg_view_set_interest(pg_view *v, unsigned panels)
{
    unsigned gained = panels & ~v->interest;
    v->interest = panels;
    if (gained & RD_PANEL_WORKERS)
        v->want_main = true;
    if (gained & RD_PANEL_EXECS)
        v->want_page = true;
    return gained;
}

static char *dup_nonempty(const char *s) { return s && *s ? xstrdup(s) : NULL; }

void pg_view_set_filter(pg_view *v, const rd_exec_filter *f)
{
    filter_free(&v->filter);
    v->filter.worker = dup_nonempty(f ? f->worker : NULL);
    v->filter.status = dup_nonempty(f ? f->status : NULL);
    v->filter.text = dup_nonempty(f ? f->text : NULL);
    v->filter.fingerprint = dup_nonempty(f ? f->fingerprint : NULL);
    v->filter.window_s = f && f->window_s > 0 ? f->window_s : 0;
    v->filter.by_status = f && f->by_status;
    if (v->filter.window_s > 0)
        snprintf(v->window_p, sizeof v->window_p, "%.0f", v->filter.window_s);
    stack_clear(v);
    v->page_gen++;
    v->want_page = true;
}

bool pg_view_turn(pg_view *v, int dir)
{
    cursor_free(&v->cont);            /* a set page being filled is given up */
    acc_clear(v);
    if (dir == 0) {
        stack_clear(v);
    } else if (dir > 0) {
        if (!v->next.key)
            return false;
        stack_push(v);
        cursor_take(&v->start, &v->next);
    } else {
        if (v->depth == 0)
            return false;
        cursor_free(&v->start);
        v->start = v->stack[--v->depth];
    }
    v->page_gen++;
    v->want_page = true;
    return true;
}

static void set_str(char **dst, const char *id)
{
    free(*dst);
    *dst = id && *id ? xstrdup(id) : NULL;
}

void pg_view_want_jump(pg_view *v, const char *id) { set_str(&v->want_jump, id); }

void pg_view_want_chain(pg_view *v, const char *id) { set_str(&v->want_chain, id); }

bool pg_view_want_worker(pg_view *v, const char *id)
{
    set_str(&v->want_worker, id);
    model_set_running(v->model, v->want_worker, NULL, 0, false);   /* not this worker's yet */
    return v->want_worker != NULL;
}

void pg_view_want_dlq(pg_view *v, bool more)
{
    if (more)
        pg_dlq_page(v->dlq, +1);
    else
        pg_dlq_first(v->dlq);
    v->want_dlq = true;
}

void pg_view_dlq_page(pg_view *v, int dir)
{
    pg_dlq_page(v->dlq, dir);
    v->want_dlq = true;
}

void pg_view_dlq_order(pg_view *v, bool oldest, const char *text)
{
    pg_dlq_order(v->dlq, oldest, text);
    v->want_dlq = true;
}

void pg_view_want_detail(pg_view *v, const char *id) { set_str(&v->want_detail, id); }

void pg_view_want_groups(pg_view *v, double window_s, long cap)
{
    v->groups_window_s = window_s;
    v->groups_cap = cap;
    snprintf(v->groups_p1, sizeof v->groups_p1, "%.0f", window_s);
    snprintf(v->groups_p2, sizeof v->groups_p2, "%ld", cap);
    v->want_groups = true;
    model_sgroups_pending(v->model, true);
}

bool pg_view_idle(const pg_view *v)
{
    return !v->cont.key && !v->want_chain && !v->want_jump && !v->want_detail && !v->want_dlq && !v->want_groups &&
           !v->groups_inflight && v->page_gen_applied == v->page_gen;
}

/* An in-flight request wanted again, unless a newer one took its place. */
static void again_str(char **want, char **inflight)
{
    if (*inflight && !*want) {
        *want = *inflight;
        *inflight = NULL;
    }
}

void pg_view_again(pg_view *v, qkind k)
{
    if (k == Q_EXECS) v->want_page = true;
    else if (k == Q_CHAIN) again_str(&v->want_chain, &v->chain_inflight);
    else if (k == Q_LOOKUP) again_str(&v->want_jump, &v->jump_inflight);
    else if (k == Q_DETAIL) again_str(&v->want_detail, &v->detail_inflight);
    else if (k == Q_DLQ || k == Q_DLQ_GROUPS) v->want_dlq = true;   /* the groups come with a page */
    else if (k == Q_GROUPS) v->want_groups = !(v->groups_inflight = false);
    else if (k != Q_SEARCH_PATH && k != Q_VARIANT && k != Q_EXTENSIONS)
        v->want_main = true;
}

/* ---- a batch ---- */

void pg_view_wants(const pg_view *v, pg_wants *w)
{
    *w = (pg_wants){
        .main = v->want_main, .page = v->want_page,
        .workers_shown = v->interest & RD_PANEL_WORKERS,
        .execs_shown = v->interest & RD_PANEL_EXECS,
        .page_asked = v->page_gen != v->page_gen_applied,
        .page_size = v->page_size, .filtered = filtered(v), .budget = scan_budget(v),
        .set = set_path(v), .set_budget = set_sparse(v) ? set_budget(v) : 0,
        .window = v->filter.window_s > 0 ? v->window_p : NULL,
        .key = v->cont.key ? v->cont.key : v->start.key, .id = v->cont.key ? v->cont.id : v->start.id,
        .status = v->filter.status, .text = v->filter.text, .worker = v->filter.worker,
        .chain = v->want_chain, .jump = v->want_jump, .running = v->want_worker,
        .dlq = v->want_dlq, .dlq_at = v->dlq,
        .detail = v->want_detail,
        .groups_window = v->want_groups ? v->groups_p1 : NULL,
        .groups_cap = v->want_groups ? v->groups_p2 : NULL,
    };
}

void pg_view_drop(pg_view *v, bool chain, bool jump, bool dlq, bool running, bool groups, bool detail)
{
    if (v->want_detail && !detail) {
        model_set_detail(v->model, v->want_detail, NULL, "the profile has no [query execution_detail]");
        set_str(&v->want_detail, NULL);
    }
    if (v->want_groups && !groups) {   /* the profile cannot: the console groups the page */
        v->want_groups = false;
        model_set_sgroups(v->model, NULL);
        model_sgroups_pending(v->model, false);
    }
    if (v->want_chain && !chain) {
        model_set_chain(v->model, v->want_chain, NULL, 0);
        set_str(&v->want_chain, NULL);
    }
    if (v->want_jump && !jump)
        set_str(&v->want_jump, NULL);
    if (v->want_dlq && !dlq)
        v->want_dlq = false;
    rd_model *m = v->model;
    if (v->want_worker && !running &&
        (m->running_known || !m->running_worker || strcmp(m->running_worker, v->want_worker) != 0))
        model_set_running(m, v->want_worker, NULL, 0, false);   /* the profile cannot say */
}

void pg_view_sent(pg_view *v, bool page, bool running, bool groups)
{
    if (groups) {
        v->groups_inflight = true;
        v->want_groups = false;
    }
    if (page)
        v->page_gen_inflight = v->page_gen;
    if (page)
        v->cont_inflight = v->cont.key != NULL;
    if (running)
        set_str(&v->worker_inflight, v->want_worker);
    v->want_main = v->want_page = v->want_dlq = false;
    free(v->chain_inflight);
    free(v->jump_inflight);
    free(v->detail_inflight);
    v->chain_inflight = v->want_chain;
    v->jump_inflight = v->want_jump;
    v->detail_inflight = v->want_detail;
    v->want_chain = v->want_jump = v->want_detail = NULL;
}

void pg_view_answered(pg_view *v)
{
    if (v->groups_inflight) {      /* not answered (the query failed): not pending */
        v->groups_inflight = false;
        model_sgroups_pending(v->model, v->want_groups);
    }
    free(v->chain_inflight);
    free(v->jump_inflight);
    free(v->detail_inflight);
    v->chain_inflight = v->jump_inflight = v->detail_inflight = NULL;
}

/* ---- the answers ---- */
static bool same(const char *want, const char *have)
{
    return !want || !*want || (have && strcmp(have, want) == 0);
}

/* The filters applied to the page's rows: the fingerprint (computed here), and the
 * worker for a profile whose query has no $7. */
static void filter_fingerprint(const pg_view *v, rd_execution *e, size_t *n)
{
    if ((!v->filter.fingerprint || !*v->filter.fingerprint) && (!v->filter.worker || !*v->filter.worker))
        return;
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        if (same(v->filter.fingerprint, e[i].fingerprint) && same(v->filter.worker, e[i].worker))
            e[k++] = e[i];
        else
            execution_clear(&e[i]);
    }
    *n = k;
}

/* The executions query's text filter, for a set page: a substring of the id, the name or
 * the error, any case. */
static bool text_in(const char *text, const rd_execution *e)
{
    return !text || !*text || (e->id && strcasestr(e->id, text)) || (e->name && strcasestr(e->name, text)) ||
           (e->error && strcasestr(e->error, text));
}

static void set_next(pg_view *v, const PGresult *r, int row, long budget)
{
    v->next.key = xstrdup(pg_text(r, row, "sort_key"));
    v->next.id = xstrdup(pg_text(r, row, "id"));
    v->next.budget = budget;
}

/* A page of a store's set ([query by_status]): its rows are the status's (or every
 * failure status's) executions of the window, newest first, at most $4; the last of $4
 * rows is where the next request goes on from, not a row of this page. The fingerprint
 * and worker are kept here (one definition of a fingerprint: core/fingerprint.c); a page
 * ends at the page size's next member. */
static void got_set(pg_view *v, const PGresult *r, const pg_row_ctx *x)
{
    int page = v->page_size, rows = PQntuples(r);
    long budget = set_sparse(v) ? set_budget(v) : page, limit = budget + 1;
    bool boundary = rows >= limit;
    int read = boundary ? rows - 1 : rows;
    if (!v->cont_inflight)
        acc_clear(v);                 /* a new read of the page (a poll, a turn) */
    cursor_free(&v->cont);
    if (!v->acc)
        v->acc = xcalloc((size_t)page + 1, sizeof *v->acc);
    v->searched += read;
    cursor_free(&v->next);
    bool more = false;
    for (int i = 0; i < read && !more; i++) {
        rd_execution one;
        if (!pg_row_exec(r, i, x, &one))
            continue;
        bool keep = same(v->filter.fingerprint, one.fingerprint) && same(v->filter.worker, one.worker) &&
                    text_in(v->filter.text, &one);
        if (keep && v->nacc == (size_t)page) {   /* the next page starts at the next match */
            set_next(v, r, i, 0);
            more = true;
        } else if (keep) {
            v->acc[v->nacc++] = one;
            continue;
        }
        execution_clear(&one);
    }
    if (!more && boundary) {
        if (v->nacc < (size_t)page && v->searched < SCAN_BUDGET_MAX) {
            set_next(v, r, rows - 1, 0);   /* not filled: read on at once, more rows */
            cursor_take(&v->cont, &v->next);
            v->cont.budget = page > SET_READ ? page : SET_READ;
            v->want_page = true;
            return;
        }
        set_next(v, r, rows - 1, 0);
        more = true;
    }
    more = more && v->next.key && v->next.id;
    model_set_execs_window(v->model, more && v->nacc < (size_t)page ? v->searched : 0, v->start.key != NULL);
    size_t n = v->nacc;
    rd_execution *e = n ? xmalloc(n * sizeof *e) : NULL;
    if (n)
        memcpy(e, v->acc, n * sizeof *e);
    v->nacc = 0;
    v->searched = 0;
    model_set_execs(v->model, e, n, more);
}

void pg_view_got_execs(pg_view *v, const PGresult *r, const pg_row_ctx *x)
{
    if (v->page_gen_inflight != v->page_gen)
        return;                       /* the page changed meanwhile; a new one is wanted */
    v->page_gen_applied = v->page_gen;
    if (!r) {
        cursor_free(&v->cont);        /* a set page being filled: given up with the query */
        acc_clear(v);
        model_set_execs(v->model, NULL, 0, false);
        return;
    }
    if (set_path(v)) {
        got_set(v, r, x);
        return;
    }
    int page = v->page_size;
    rd_execution *e;
    size_t n = pg_rows_execs(r, x, &e);
    int rows = PQntuples(r);
    /* the row that ended the searched window (scan_end, $6): not a match, but where the
     * next request goes on from */
    const char *end = rows > 0 ? pg_text(r, rows - 1, "scan_end") : NULL;
    bool at_end = end && (strcmp(end, "t") == 0 || strcmp(end, "true") == 0);
    int matches = at_end ? rows - 1 : rows;
    if (at_end && n == (size_t)rows)
        execution_clear(&e[--n]);
    int next_row = matches > page ? page : at_end ? rows - 1 : -1;
    bool more = next_row >= 0;
    cursor_free(&v->next);
    bool narrowed = filtered(v);
    if (more) {
        v->next.key = xstrdup(pg_text(r, next_row, "sort_key"));
        v->next.id = xstrdup(pg_text(r, next_row, "id"));
        more = v->next.key && v->next.id;
        /* the search stopped short of a page: going on searches SCAN_GROWTH times more */
        long b = scan_budget(v);
        v->next.budget = narrowed && matches <= page
                             ? (b > SCAN_BUDGET_MAX / SCAN_GROWTH ? SCAN_BUDGET_MAX : b * SCAN_GROWTH)
                             : 0;
    }
    while (n > (size_t)page)
        execution_clear(&e[--n]);
    filter_fingerprint(v, e, &n);
    /* fewer matches than a page in the window: say how far the search went */
    model_set_execs_window(v->model, more && matches <= page && narrowed ? scan_budget(v) : 0,
                           v->start.key != NULL);   /* a later page, or a jump's */
    model_set_execs(v->model, n ? e : NULL, n, more);
    if (!n)
        free(e);
}

void pg_view_got_lookup(pg_view *v, const PGresult *r)
{
    const char *key = pg_text(r, 0, "sort_key"), *id = pg_text(r, 0, "id");
    if (!key || !id)
        return;
    cursor_free(&v->cont);
    acc_clear(v);
    stack_push(v);
    v->start.key = xstrdup(key);
    v->start.id = xstrdup(id);
    v->start.budget = 0;
    v->page_gen++;
    v->want_page = true;
}

void pg_view_got_dlq(pg_view *v, const PGresult *r) { pg_dlq_got(v->dlq, v->model, r); }

/* One execution in full: the row's columns by name (core/detail.h); none: no record. */
void pg_view_got_detail(pg_view *v, const PGresult *r)
{
    if (!v->detail_inflight)
        return;
    if (!r) {
        model_set_detail(v->model, v->detail_inflight, NULL, "the store could not read it");
        return;
    }
    if (PQntuples(r) < 1) {
        model_set_detail(v->model, v->detail_inflight, NULL, "no such execution in the store");
        return;
    }
    int nf = PQnfields(r);
    const char **names = xcalloc((size_t)nf + 1, sizeof *names), **vals = xcalloc((size_t)nf + 1, sizeof *vals);
    for (int i = 0; i < nf; i++) {
        names[i] = PQfname(r, i);
        vals[i] = PQgetisnull(r, 0, i) ? NULL : PQgetvalue(r, 0, i);
    }
    model_set_detail(v->model, v->detail_inflight, detail_from_row(names, vals, (size_t)nf), NULL);
    free(names);
    free(vals);
}

void pg_view_got_unchanged(pg_view *v)
{
    if (v->page_gen_inflight == v->page_gen)
        v->page_gen_applied = v->page_gen;
}

void pg_view_got_chain(pg_view *v, const PGresult *r, const pg_row_ctx *x)
{
    rd_execution *e = NULL;
    size_t n = r ? pg_rows_execs(r, x, &e) : 0;
    model_set_chain(v->model, v->chain_inflight, e, n);
}

void pg_view_got_running(pg_view *v, const PGresult *r, const pg_row_ctx *x)
{
    if (!r) {
        model_set_running(v->model, v->want_worker, NULL, 0, false);
        return;
    }
    rd_execution *e;
    size_t n = pg_rows_execs(r, x, &e);
    if (v->want_worker && v->worker_inflight && strcmp(v->want_worker, v->worker_inflight) == 0)
        model_set_running(v->model, v->worker_inflight, e, n, true);
    else {                            /* the cockpit moved to another worker meanwhile */
        for (size_t i = 0; i < n; i++)
            execution_clear(&e[i]);
        free(e);
    }
}

void pg_view_got_groups_window(pg_view *v, const PGresult *r)
{
    so_base_free(v->groups_base);
    v->groups_base = r ? pg_groups_window_read(r) : NULL;
}

void pg_view_got_groups(pg_view *v, const PGresult *r, const pg_row_ctx *x)
{
    v->groups_inflight = false;
    if (v->want_groups)
        return;                       /* asked again meanwhile (another window) */
    so_base *b = v->groups_base;
    v->groups_base = NULL;
    model_set_sgroups(v->model, r ? pg_groups_read(r, x, v->groups_window_s, v->groups_cap, b) : (so_base_free(b), NULL));
    model_sgroups_pending(v->model, false);
}
