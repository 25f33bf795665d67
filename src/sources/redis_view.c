/*
 * Publishing the Alakai index to the model: counts by status, the executions page
 * (newest first, filtered, keyset paging), orphan suspects and the DLQ (failed records
 * with the budget exhausted + orphan suspects, queue "alakai").
 */
#include "redis_view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/fingerprint.h"
#include "../core/health.h"
#include "../core/retry.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"
#include "redis_groups.h"

static const char SRC_NAME[] = "redis";   /* our share of the model's DLQ */

enum {
    RS_PAGE_MAX = 500, RS_DLQ_PAGE = 100,
    RS_PUBLISH_SLICE = 8192,        /* tasks a step of the publish job visits (~0.1-0.2 ms) */
};

static const double RS_AGAIN_S = 0.05;  /* as the source's kick after a notification */

typedef struct pred_ctx {           /* a publish's predicates: statuses by interned ids */
    const struct rs_view *v;
    double now;
    double orphan_before;           /* dispatched before this and running: orphan */
    int running, failed;            /* rix_status_id, -1 none */
} pred_ctx;

typedef struct rs_pubjob {          /* a publish under way: one walk over the index, in
                                     * slices, every figure and selection fed at once */
    bool on;
    size_t k;                       /* the next task */
    uint64_t version, layout;       /* the index's, when the walk began */
    pred_ctx p;
    long by[256];                   /* tasks by interned status */
    long orphans, dead, fails_recent;
    long eligible;                  /* newest attempt failed, budget left (retry_alakai) */
    double young;                   /* the oldest dispatch of a running task not yet an
                                     * orphan: the first to turn one (HUGE_VAL: none) */
    rix_sel *before;                /* PgUp: first the page just newer than prev_from */
    rix_sel *page, *dlq;            /* dlq NULL: not wanted */
    size_t page_n, dlq_n;
    rs_groups_job *groups;          /* NULL: not wanted */
    bool whole;                     /* the index was whole when the walk began */
    int steps, restarts;
    double wall0, cpu, cpu_max;     /* for RD_REDIS_DEBUG */
} rs_pubjob;

struct rs_view {
    rd_source_ctx ctx;              /* the model, cfg, on_change */
    const rix *ix;                  /* the sweep's index (redis_sweep.h) */
    rd_exec_filter filter;
    uint32_t filter_fp;             /* rix_hash_fp of filter.fingerprint */
    rix_cursor page_from;           /* the page's first task; unset: the newest */
    rix_cursor prev_from;           /* PgUp from this task (the page's first) ... */
    size_t prev_n;                  /* ... that many: the publish's walk finds them */
    bool prev_wanted;
    char *chain_id;                 /* requested chain, pending until answered */
    bool chain_wanted, chain_busy;
    bool dlq_wanted, dlq_sent;
    int dlq_pages;
    uint64_t published_version;     /* rix_version when the last publish began */
    double published_young;         /* its rs_pubjob.young */
    bool dirty;                     /* filter, page or a request changed since */
    rs_pubjob job;
    rd_event *ev_step;          /* the job's next step, from the loop */
    size_t slice;                   /* tasks a step, 0: RS_PUBLISH_SLICE */
    bool debug;                     /* RD_REDIS_DEBUG: each publish's figures on stderr */
    bool again;                     /* ev_step: a publish after RS_AGAIN_S (the index
                                     * changed while the last one walked it) */
    /* the error groups asked for (their window and bound), computed at the next publish;
     * asked again while the index is not whole (the first sweep runs: partial) */
    double groups_window_s;
    long groups_cap;
    bool groups_wanted, whole;
};

/* ---- publishing to the model ------------------------------------------------------------ */

static void job_drop(rs_pubjob *j)
{
    rix_sel_free(j->before);
    rix_sel_free(j->page);
    rix_sel_free(j->dlq);
    rs_groups_cancel(j->groups);
    j->before = j->page = j->dlq = NULL;
    j->groups = NULL;
    j->on = false;
}

static void job_account(rs_pubjob *j, double cpu)
{
    j->steps++;
    j->cpu += cpu;
    j->cpu_max = cpu > j->cpu_max ? cpu : j->cpu_max;
}

static pred_ctx pred_of(const rs_view *v, double now)
{
    return (pred_ctx){ .v = v, .now = now,
                       .orphan_before = now - v->ctx.cfg->alakai.orphan_after_s,
                       .running = rix_status_id(v->ix, "running"),
                       .failed = rix_status_id(v->ix, "failed") };
}

static bool is_orphan(const pred_ctx *p, const rix_task *t)
{
    return t->status == p->running && t->dispatched_at > 0 &&
           t->dispatched_at < p->orphan_before;
}

static bool match_filter(const rix *ix, const rix_task *t, void *ud)
{
    const pred_ctx *p = ud;
    const rd_exec_filter *f = &p->v->filter;
    const char *st = rix_status_name(ix, t);
    if (f->status && *f->status && strcasecmp(f->status, st) != 0) {
        bool special = (strcasecmp(f->status, "orphan") == 0 && is_orphan(p, t)) ||
                       (strcasecmp(f->status, "malformed") == 0 && (t->flags & RD_EXEC_MALFORMED)) ||
                       (strcasecmp(f->status, "oversized") == 0 && (t->flags & RD_EXEC_OVERSIZED)) ||
                       (strcasecmp(f->status, "overlap") == 0 && (t->flags & RD_EXEC_OVERLAP));
        if (!special)
            return false;
    }
    if (f->fingerprint && *f->fingerprint && rix_fp(ix, t) != p->v->filter_fp)
        return false;
    if (f->text && *f->text) {
        const char *code = rix_code_name(ix, t);
        rix_idbuf id;                /* written out last: the other texts are at hand */
        if (!strcasestr(rix_error(ix, t), f->text) && !strcasestr(st, f->text) &&
            !(code && strcasestr(code, f->text)) && !strcasestr(rix_id(ix, t, &id), f->text))
            return false;
    }
    return true;
}

/* Failed with the budget exhausted, or an orphan suspect. */
static bool is_dead(const rix *ix, const rix_task *t, void *ud)
{
    const pred_ctx *p = ud;
    (void)ix;
    if (is_orphan(p, t))
        return true;
    if (t->status != p->failed)
        return false;
    return retry_alakai_exhausted(t->attempt, p->v->ctx.cfg->alakai.max_retries);
}

static void exec_from_task(const rs_view *v, const rix_task *t, const pred_ctx *p,
                           rd_execution *e)
{
    double now = p->now;
    const rd_system_cfg *cfg = v->ctx.cfg;
    const rix *ix = v->ix;
    const char *st = rix_status_name(ix, t);
    rix_idbuf id;
    e->id = xstrdup(rix_id(ix, t, &id));
    e->status = xstrdup(st);
    e->attempt = t->attempt ? t->attempt : -1;
    e->max_attempts = cfg->alakai.max_retries >= 0 ? cfg->alakai.max_retries + 1 : -1;
    e->elig = retry_alakai(st, t->attempt, cfg->alakai.max_retries);
    e->reason = xstrdup(rix_code_name(v->ix, t));
    e->name = xstrdup(rix_task_name(v->ix, t));
    if (t->flags & (RD_EXEC_MALFORMED | RD_EXEC_OVERSIZED) && strcmp(st, "unknown") == 0) {
        e->elig.verdict = RD_ELIG_UNKNOWN;
        snprintf(e->elig.why, sizeof e->elig.why, "%s", t->flags & RD_EXEC_OVERSIZED
                 ? "record too large to read" : "record unreadable");
    }
    if (*rix_error(ix, t)) {
        e->error = xstrdup(rix_error(ix, t));
        e->fingerprint = fingerprint_dup(e->error);
    }
    e->created_at = t->dispatched_at;
    e->finished_at = (double)t->resolved_s;
    e->updated_at = (double)t->resolved_s > 0 ? (double)t->resolved_s : t->dispatched_at;
    e->flags = t->flags;
    if (is_orphan(p, t)) {
        e->flags |= RD_EXEC_ORPHAN;
        char age[32];
        format_age(now - t->dispatched_at, age, sizeof age);
        snprintf(e->elig.why, sizeof e->elig.why, "orphan suspect: running for %s", age);
    }
}

static void group_proto(const rix_task *t, rd_execution *e, void *ud)
{
    const pred_ctx *p = ud;
    exec_from_task(p->v, t, p, e);
}

/* ---- the publish job: one walk over the index, in slices --------------------------------- */

/* Starts the walk over (a publish's parameters taken now: the filter, the page, the DLQ
 * and groups wanted); the running job, if any, is dropped. */
static void job_begin(rs_view *v, double now)
{
    rs_pubjob *j = &v->job;
    job_drop(j);
    *j = (rs_pubjob){ .on = true, .version = rix_version(v->ix), .layout = rix_layout(v->ix),
                      .p = pred_of(v, now), .young = HUGE_VAL, .whole = v->whole,
                      .wall0 = clock_wall(), .restarts = j->restarts };
    size_t n = v->ctx.cfg->ui.page_size > 0 ? (size_t)v->ctx.cfg->ui.page_size : 100;
    j->page_n = n > RS_PAGE_MAX ? RS_PAGE_MAX : n;
    if (v->prev_wanted)
        j->before = rix_sel_new_before(v->ix, match_filter, &j->p, &v->prev_from, v->prev_n);
    else
        j->page = rix_sel_new(v->ix, match_filter, &j->p, &v->page_from, j->page_n);
    if (v->dlq_wanted) {
        j->dlq_n = (size_t)RS_DLQ_PAGE * (size_t)(v->dlq_pages > 0 ? v->dlq_pages : 1);
        j->dlq = rix_sel_new(v->ix, is_dead, &j->p, NULL, j->dlq_n);
    }
    if (v->groups_wanted)
        j->groups = rs_groups_begin(v->ix, now, v->groups_window_s, v->groups_cap);
    v->dirty = false;
    v->again = false;
}

/* One task, into every figure and selection of the publish. */
static void job_visit(rs_pubjob *j, const rix *ix, size_t k)
{
    const rix_task *t = rix_at(ix, k);
    const pred_ctx *p = &j->p;
    bool orphan = is_orphan(p, t);
    j->by[t->status]++;
    j->orphans += orphan;
    if (!orphan && t->status == p->running && t->dispatched_at > 0 && t->dispatched_at < j->young)
        j->young = t->dispatched_at;
    j->dead += orphan || (t->status == p->failed &&
                          retry_alakai_exhausted(t->attempt, p->v->ctx.cfg->alakai.max_retries));
    j->eligible += t->status == p->failed && t->attempt >= 1 &&
                   !retry_alakai_exhausted(t->attempt, p->v->ctx.cfg->alakai.max_retries);
    j->fails_recent += t->status == p->failed && (double)t->resolved_s > p->now - 300 &&
                       (double)t->resolved_s <= p->now;
    rix_sel_offer(j->page, k);
    if (j->dlq)
        rix_sel_offer(j->dlq, k);
    if (j->groups)
        rs_groups_offer(j->groups, k);
}

static void set_counts(rs_view *v, const rs_pubjob *j)
{
    size_t nc = 0;
    rd_count *c = xcalloc(256, sizeof *c);
    for (size_t k = 0; k < 256; k++) {
        if (!j->by[k])
            continue;
        rix_task probe = { .status = (uint8_t)k };
        snprintf(c[nc].status, sizeof c[nc].status, "%s", rix_status_name(v->ix, &probe));
        c[nc].count = j->by[k];
        c[nc].estimated = rix_overflow(v->ix);
        nc++;
    }
    rd_model *m = v->ctx.model;
    model_set_counts(m, c, nc);
    model_set_orphan_suspects(m, j->orphans);
    model_set_failing_rate(m, j->fails_recent / 5.0);
    /* the whole index's retry-eligible tasks (a lower bound while the first sweep runs or
     * the index overflowed); Alakai's store has no queued state: the oldest queued is
     * not the store's to say */
    model_set_store_figures(m, j->eligible, !j->whole || rix_overflow(v->ix), false, -1);
}

static void set_page(rs_view *v, rs_pubjob *j)
{
    uint32_t *idx = xmalloc(j->page_n * sizeof *idx);
    bool more;
    size_t got = rix_sel_finish(j->page, idx, &more);
    j->page = NULL;
    rd_execution *items = got ? xcalloc(got, sizeof *items) : NULL;
    for (size_t i = 0; i < got; i++)
        exec_from_task(v, rix_at(v->ix, idx[i]), &j->p, &items[i]);
    free(idx);
    model_set_execs(v->ctx.model, items, got, more);
}

static void dlq_entry(const rix *ix, const rix_task *t, const pred_ctx *p, rd_dlq_entry *d)
{
    bool orphan = is_orphan(p, t);
    rix_idbuf id;
    d->id = xstrdup(rix_id(ix, t, &id));
    d->queue = xstrdup("alakai");
    d->execution_id = xstrdup(id.s);
    d->reason = xstrdup(orphan ? "orphan suspect" : "budget exhausted");
    d->count = t->attempt;
    d->first_death_at = d->last_death_at = orphan ? t->dispatched_at : (double)t->resolved_s;
    d->payload = *rix_error(ix, t) ? xstrdup(rix_error(ix, t)) : NULL;
}

/* Our DLQ entries ("alakai") replace only our own share of the model's DLQ. */
static void set_dlq(rs_view *v, rs_pubjob *j)
{
    rd_model *m = v->ctx.model;
    model_dlq_total(m, SRC_NAME, j->dead);
    if (!j->dlq)
        return;
    uint32_t *idx = xmalloc(j->dlq_n * sizeof *idx);
    bool more;
    size_t got = rix_sel_finish(j->dlq, idx, &more);
    j->dlq = NULL;
    rd_dlq_entry *items = xcalloc(got + 1, sizeof *items);
    for (size_t i = 0; i < got; i++)
        dlq_entry(v->ix, rix_at(v->ix, idx[i]), &j->p, &items[i]);
    free(idx);
    model_dlq_set(m, SRC_NAME, got ? items : NULL, got);
    if (!got)
        free(items);
    if (!v->dirty)                   /* no newer request since the job began */
        v->dlq_sent = true;
}

/* The store's error groups, on demand only (rs_view_want_groups), from the index: while
 * the first sweep runs they are those of the tasks read so far (the model says partial),
 * computed again once the index is whole. */
static void set_groups(rs_view *v, rs_pubjob *j)
{
    if (!j->groups)
        return;
    model_set_sgroups(v->ctx.model, rs_groups_end(j->groups, group_proto, &j->p));
    j->groups = NULL;
    model_sgroups_pending(v->ctx.model, false);
    if (!v->dirty)
        v->groups_wanted = !j->whole;
}

/* The walk is over: the model set at once (never a half-counted state), then told. */
static void job_finish(rs_view *v)
{
    rs_pubjob *j = &v->job;
    double cpu0 = clock_cpu();
    set_counts(v, j);
    set_page(v, j);
    set_dlq(v, j);
    set_groups(v, j);
    job_account(j, clock_cpu() - cpu0);
    if (v->debug)
        fprintf(stderr, "redis: publish %zu tasks in %.1f ms (CPU %.2f ms) a step at most, "
                "%d steps, %d restarts, CPU %.1f ms in all, index %zu bytes\n",
                rix_size(v->ix), (clock_wall() - j->wall0) * 1000, j->cpu_max * 1000,
                j->steps, j->restarts, j->cpu * 1000, rix_memory(v->ix));
    v->published_version = j->version;
    v->published_young = j->young;
    j->on = false;
    j->restarts = 0;
    if (v->whole && v->ev_step && rix_version(v->ix) != j->version) {
        /* changed during the walk: again soon */
        v->again = true;
        loop_timer_in(v->ev_step, RS_AGAIN_S);
    }
    if (v->ctx.on_change)
        v->ctx.on_change(v->ctx.ud);
}

/* PgUp's first walk is over: the n matching tasks just newer than the page's first become
 * the page (from the newest of them); then the publish's walk, from the first task. */
static void prev_found(rs_view *v, rs_pubjob *j)
{
    uint32_t *idx = xmalloc((v->prev_n ? v->prev_n : 1) * sizeof *idx);
    bool more;
    size_t got = rix_sel_finish(j->before, idx, &more);
    j->before = NULL;
    if (got > 0)
        rix_cursor_of(v->ix, rix_at(v->ix, idx[0]), true, &v->page_from);
    else
        v->page_from.set = false;
    free(idx);
    v->prev_wanted = false;
    j->page = rix_sel_new(v->ix, match_filter, &j->p, &v->page_from, j->page_n);
    j->k = 0;
}

static size_t slice_of(const rs_view *v)
{
    return v->slice ? v->slice : RS_PUBLISH_SLICE;
}

size_t rs_view_step(rs_view *v)
{
    rs_pubjob *j = &v->job;
    if (!j->on)
        return 0;
    double cpu0 = clock_cpu();
    if (rix_layout(v->ix) != j->layout) {        /* positions moved: walk again */
        j->restarts++;
        job_begin(v, clock_wall());
    }
    j->p.running = rix_status_id(v->ix, "running");   /* interned since, maybe */
    j->p.failed = rix_status_id(v->ix, "failed");
    size_t n = rix_size(v->ix), from = j->k, to = n - from > slice_of(v) ? from + slice_of(v) : n;
    for (; j->k < to; j->k++) {
        if (j->before)
            rix_sel_offer(j->before, j->k);
        else
            job_visit(j, v->ix, j->k);
    }
    if (j->before && j->k >= rix_size(v->ix))
        prev_found(v, j);
    job_account(j, clock_cpu() - cpu0);
    if (j->k >= rix_size(v->ix)) {
        if (v->ev_step)
            loop_timer_stop(v->ev_step);
        job_finish(v);
    } else if (v->ev_step) {
        loop_timer_in(v->ev_step, 0);   /* after the loop's next wait for I/O: keys first */
    }
    return to - from;
}

static void on_step(int fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    rs_view *v = arg;
    if (!v->job.on && v->again) {
        v->again = false;
        rs_view_publish(v, false);
    } else if (v->ev_step) {
        rs_view_step(v);
    } else {
        while (v->job.on)             /* no loop to run the steps on */
            rs_view_step(v);
    }
}

void rs_view_publish(rs_view *v, bool force)
{
    double now = clock_wall();
    bool fresh = v->dirty || rix_version(v->ix) != v->published_version ||
                 (v->dlq_wanted && !v->dlq_sent);
    /* only the clock moved: republish when a running task turned orphan (O(1)) */
    if (!force && !fresh && (v->job.on ||
                             !(v->published_young < now - v->ctx.cfg->alakai.orphan_after_s)))
        return;
    /* the job under way publishes; what changed since, the next publish after it */
    if (!force && !v->dirty && v->job.on)
        return;
    job_begin(v, now);
    on_step(-1, 0, v);
}

/* ---- the operator's requests ---------------------------------------------------------- */

static void filter_copy(rd_exec_filter *dst, const rd_exec_filter *f)
{
    free(dst->status);
    free(dst->text);
    free(dst->fingerprint);
    dst->status = f ? xstrdup(f->status) : NULL;
    dst->text = f ? xstrdup(f->text) : NULL;
    dst->fingerprint = f ? xstrdup(f->fingerprint) : NULL;
}

void rs_view_set_filter(rs_view *v, const rd_exec_filter *f)
{
    filter_copy(&v->filter, f);
    v->filter_fp = rix_hash_fp(v->filter.fingerprint);
    v->page_from.set = false;
    v->prev_wanted = false;
    v->dirty = true;
}

bool rs_view_page(rs_view *v, int dir)
{
    const rd_model *m = v->ctx.model;
    const rix_task *t;
    if (dir == 0 || m->execs.n == 0) {
        v->page_from.set = false;
    } else if (dir > 0) {
        const rd_execution *last = &m->execs.items[m->execs.n - 1];
        if (!m->execs_more || !(t = rix_get(v->ix, last->id, strlen(last->id))))
            return false;
        rix_cursor_of(v->ix, t, false, &v->page_from);
    } else {
        const rd_execution *first = &m->execs.items[0];
        if (!(t = rix_get(v->ix, first->id, strlen(first->id))))
            return false;
        rix_cursor_of(v->ix, t, false, &v->prev_from);   /* the walk finds the page */
        v->prev_n = m->execs.n;
        v->prev_wanted = true;
        v->dirty = true;
        return true;
    }
    v->prev_wanted = false;
    v->dirty = true;
    return true;
}

void rs_view_jump(rs_view *v, const char *id)
{
    const rix_task *t = id ? rix_get(v->ix, id, strlen(id)) : NULL;
    if (t) {
        rix_cursor_of(v->ix, t, true, &v->page_from);
        v->prev_wanted = false;
    }
    v->dirty = true;
}

void rs_view_want_chain(rs_view *v, const char *id)
{
    free(v->chain_id);
    v->chain_id = xstrdup(id);
    v->chain_wanted = true;
}

const char *rs_view_chain_take(rs_view *v)
{
    if (!v->chain_id || !v->chain_wanted || v->chain_busy)
        return NULL;
    v->chain_wanted = false;
    v->chain_busy = true;
    return v->chain_id;
}

void rs_view_chain_done(rs_view *v)
{
    v->chain_busy = false;
}

void rs_view_want_dlq(rs_view *v, bool more)
{
    v->dlq_pages = more && v->dlq_wanted ? v->dlq_pages + 1 : 1;
    v->dlq_wanted = true;
    v->dlq_sent = false;
    v->dirty = true;
}

void rs_view_want_groups(rs_view *v, double window_s, long cap)
{
    v->groups_window_s = window_s;
    v->groups_cap = cap;
    v->groups_wanted = true;
    v->dirty = true;
    model_sgroups_pending(v->ctx.model, true);
}

void rs_view_whole(rs_view *v)
{
    v->whole = true;
}

void rs_view_answer(rs_view *v, const char *msg, bool swept)
{
    if (v->chain_wanted && !v->chain_busy) {
        rd_execution *e = xcalloc(1, sizeof *e);
        e->id = xstrdup(v->chain_id);
        e->status = xstrdup("unknown");
        e->error = xstrdup(msg);
        e->attempt = e->max_attempts = -1;
        model_set_chain(v->ctx.model, v->chain_id, e, 1);
        model_set_detail(v->ctx.model, v->chain_id, NULL, msg);
        v->chain_wanted = false;
    }
    if (v->dlq_wanted && !swept)
        v->dlq_sent = true;          /* nothing to show: the source state says why */
}

bool rs_view_idle(const rs_view *v)
{
    return !v->chain_wanted && !v->chain_busy && !(v->dlq_wanted && !v->dlq_sent) &&
           !v->job.on;
}

bool rs_view_busy(const rs_view *v)
{
    return v->job.on;
}

void rs_view_set_slice(rs_view *v, size_t tasks)
{
    v->slice = tasks;
}

/* ---- life ------------------------------------------------------------------------------ */

rs_view *rs_view_new(const rd_source_ctx *ctx, const rix *ix)
{
    rs_view *v = xcalloc(1, sizeof *v);
    v->ctx = *ctx;
    v->ix = ix;
    v->published_young = HUGE_VAL;
    v->debug = getenv("RD_REDIS_DEBUG") != NULL;
    if (ctx->base)
        v->ev_step = loop_timer_new(ctx->base, on_step, v);
    return v;
}

void rs_view_free(rs_view *v)
{
    job_drop(&v->job);
    if (v->ev_step)
        loop_event_free(v->ev_step);
    filter_copy(&v->filter, NULL);
    free(v->chain_id);
    free(v);
}
