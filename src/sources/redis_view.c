/*
 * Publishing the Alakai index to the model: counts by status, the executions page
 * (newest first, filtered, keyset paging), orphan suspects and the DLQ (failed records
 * with the budget exhausted + orphan suspects, queue "alakai").
 */
#include "redis_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/fingerprint.h"
#include "../core/health.h"
#include "../core/retry.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "redis_groups.h"

static const char SRC_NAME[] = "redis";   /* our share of the model's DLQ */

enum { RS_PAGE_MAX = 500, RS_DLQ_PAGE = 100 };

struct rs_view {
    rd_source_ctx ctx;              /* the model, cfg, on_change */
    const rix *ix;                  /* the sweep's index (redis_sweep.h) */
    rd_exec_filter filter;
    uint32_t filter_fp;             /* rix_hash_fp of filter.fingerprint */
    rix_cursor page_from;           /* the page's first task; unset: the newest */
    char *chain_id;                 /* requested chain, pending until answered */
    bool chain_wanted, chain_busy;
    bool dlq_wanted, dlq_sent;
    int dlq_pages;
    uint64_t published_version;     /* rix_version when published */
    long published_orphans;
    bool dirty;                     /* filter or page changed since */
    /* the error groups asked for (their window and bound), computed at the next publish;
     * asked again while the index is not whole (the first sweep runs: partial) */
    double groups_window_s;
    long groups_cap;
    bool groups_wanted, whole;
};

/* ---- publishing to the model ------------------------------------------------------------ */

/* The publish's context: statuses compared by their interned ids (a publish walks every
 * task, several times). */
typedef struct pred_ctx {
    const rs_view *v;
    double now;
    double orphan_before;           /* dispatched before this and running: orphan */
    int running, failed;            /* rix_status_id, -1 none */
} pred_ctx;

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

static void publish_page(rs_view *v, pred_ctx *p)
{
    size_t n = v->ctx.cfg->ui.page_size > 0 ? (size_t)v->ctx.cfg->ui.page_size : 100;
    if (n > RS_PAGE_MAX)
        n = RS_PAGE_MAX;
    uint32_t *idx = xmalloc(n * sizeof *idx);
    bool more;
    size_t got = rix_select(v->ix, match_filter, p, &v->page_from, n, idx, &more);
    rd_execution *items = got ? xcalloc(got, sizeof *items) : NULL;
    for (size_t i = 0; i < got; i++)
        exec_from_task(v, rix_at(v->ix, idx[i]), p, &items[i]);
    free(idx);
    model_set_execs(v->ctx.model, items, got, more);
}

static void publish_counts(rs_view *v, pred_ctx *p, long *orphans, long *dead)
{
    long by[256] = { 0 };
    double now = p->now;
    long fails_recent = 0;
    *orphans = *dead = 0;
    for (size_t i = 0; i < rix_size(v->ix); i++) {
        const rix_task *t = rix_at(v->ix, i);
        by[t->status]++;
        *orphans += is_orphan(p, t);
        *dead += is_dead(v->ix, t, p);
        fails_recent += t->status == p->failed && (double)t->resolved_s > now - 300 &&
                        (double)t->resolved_s <= now;
    }
    size_t nc = 0;
    rd_count *c = xcalloc(256, sizeof *c);
    for (size_t k = 0; k < 256; k++) {
        if (!by[k])
            continue;
        rix_task probe = { .status = (uint8_t)k };
        snprintf(c[nc].status, sizeof c[nc].status, "%s", rix_status_name(v->ix, &probe));
        c[nc].count = by[k];
        c[nc].estimated = rix_overflow(v->ix);
        nc++;
    }
    rd_model *m = v->ctx.model;
    model_set_counts(m, c, nc);
    m->orphan_suspects = *orphans;
    m->failing_rate = fails_recent / 5.0;
}

static void group_proto(const rix_task *t, rd_execution *e, void *ud)
{
    const pred_ctx *p = ud;
    exec_from_task(p->v, t, p, e);
}

/* The store's error groups, on demand only (rs_view_want_groups), from the index: while
 * the first sweep runs they are those of the tasks read so far (the model says partial),
 * computed again once the index is whole. */
static void publish_groups(rs_view *v, pred_ctx *p)
{
    if (!v->groups_wanted)
        return;
    model_set_sgroups(v->ctx.model, rs_groups_build(v->ix, p->now, v->groups_window_s,
                                                    v->groups_cap, group_proto, p));
    model_sgroups_pending(v->ctx.model, false);
    v->groups_wanted = !v->whole;
}

/* Our DLQ entries ("alakai") replace only our own share of the model's DLQ. */
static void publish_dlq(rs_view *v, pred_ctx *p, long dead)
{
    rd_model *m = v->ctx.model;
    model_dlq_total(m, SRC_NAME, dead);
    if (!v->dlq_wanted)
        return;
    size_t want = (size_t)RS_DLQ_PAGE * (size_t)(v->dlq_pages > 0 ? v->dlq_pages : 1);
    uint32_t *idx = xmalloc(want * sizeof *idx);
    bool more;
    size_t got = rix_select(v->ix, is_dead, p, NULL, want, idx, &more);
    rd_dlq_entry *items = xcalloc(got + 1, sizeof *items);
    for (size_t i = 0; i < got; i++) {
        const rix *ix = v->ix;
        const rix_task *t = rix_at(ix, idx[i]);
        rd_dlq_entry *d = &items[i];
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
    free(idx);
    model_dlq_set(m, SRC_NAME, got ? items : NULL, got);
    if (!got)
        free(items);
    v->dlq_sent = true;
}

void rs_view_publish(rs_view *v, bool force)
{
    double now = clock_wall();
    long orphans, dead;
    if (!force && !v->dirty && rix_version(v->ix) == v->published_version &&
        !(v->dlq_wanted && !v->dlq_sent)) {
        /* only the clock moved: republish when the orphan count changes */
        long o = 0;
        pred_ctx p = pred_of(v, now);
        for (size_t i = 0; i < rix_size(v->ix); i++)
            o += is_orphan(&p, rix_at(v->ix, i));
        if (o == v->published_orphans)
            return;
    }
    pred_ctx p = pred_of(v, now);
    double cpu0 = clock_cpu();
    publish_counts(v, &p, &orphans, &dead);
    publish_page(v, &p);
    publish_dlq(v, &p, dead);
    publish_groups(v, &p);
    if (getenv("RD_REDIS_DEBUG"))
        fprintf(stderr, "redis: publish %zu tasks in %.1f ms (CPU %.1f ms), index %zu bytes\n",
                rix_size(v->ix), (clock_wall() - now) * 1000, (clock_cpu() - cpu0) * 1000,
                rix_memory(v->ix));
    v->published_version = rix_version(v->ix);
    v->published_orphans = orphans;
    v->dirty = false;
    if (v->ctx.on_change)
        v->ctx.on_change(v->ctx.ud);
}

/* Previous page: the n matching tasks just newer than c become the page. */
static void page_prev(rs_view *v, const rix_cursor *c, size_t n, uint32_t *idx)
{
    pred_ctx p = pred_of(v, clock_wall());
    size_t got = rix_select_before(v->ix, match_filter, &p, c, n, idx);
    if (got > 0)
        rix_cursor_of(v->ix, rix_at(v->ix, idx[0]), true, &v->page_from);
    else
        v->page_from.set = false;
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
        rix_cursor c;
        rix_cursor_of(v->ix, t, false, &c);
        size_t n = m->execs.n;
        uint32_t *idx = xmalloc((n ? n : 1) * sizeof *idx);
        page_prev(v, &c, n, idx);
        free(idx);
    }
    v->dirty = true;
    return true;
}

void rs_view_jump(rs_view *v, const char *id)
{
    const rix_task *t = id ? rix_get(v->ix, id, strlen(id)) : NULL;
    if (t)
        rix_cursor_of(v->ix, t, true, &v->page_from);
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
}

void rs_view_want_groups(rs_view *v, double window_s, long cap)
{
    v->groups_window_s = window_s;
    v->groups_cap = cap;
    v->groups_wanted = true;
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
    return !v->chain_wanted && !v->chain_busy && !(v->dlq_wanted && !v->dlq_sent);
}

/* ---- life ------------------------------------------------------------------------------ */

rs_view *rs_view_new(const rd_source_ctx *ctx, const rix *ix)
{
    rs_view *v = xcalloc(1, sizeof *v);
    v->ctx = *ctx;
    v->ix = ix;
    return v;
}

void rs_view_free(rs_view *v)
{
    filter_copy(&v->filter, NULL);
    free(v->chain_id);
    free(v);
}
