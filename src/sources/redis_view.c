/*
 * Publishing the Alakai index to the model: counts by status, the executions page
 * (newest first, filtered, keyset paging), orphan suspects and the DLQ (failed records
 * with the budget exhausted + orphan suspects, queue "alakai").
 */
#include "redis_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/fingerprint.h"
#include "../core/health.h"
#include "../core/retry.h"
#include "../core/xalloc.h"
#include "../io/clock.h"

static const char SRC_NAME[] = "redis";   /* our share of the model's DLQ */

/* ---- publishing to the model ------------------------------------------------------------ */

/* The publish's context: statuses compared by their interned ids (a publish walks every
 * task, several times). */
typedef struct pred_ctx {
    const rs_src *s;
    double now;
    double orphan_before;           /* dispatched before this and running: orphan */
    int running, failed;            /* rix_status_id, -1 none */
} pred_ctx;

static pred_ctx pred_of(const rs_src *s, double now)
{
    return (pred_ctx){ .s = s, .now = now,
                       .orphan_before = now - s->base.ctx.cfg->alakai.orphan_after_s,
                       .running = rix_status_id(s->ix, "running"),
                       .failed = rix_status_id(s->ix, "failed") };
}

static bool is_orphan(const pred_ctx *p, const rix_task *t)
{
    return t->status == p->running && t->dispatched_at > 0 &&
           t->dispatched_at < p->orphan_before;
}

static bool match_filter(const rix *ix, const rix_task *t, void *ud)
{
    const pred_ctx *p = ud;
    const rd_exec_filter *f = &p->s->filter;
    const char *st = rix_status_name(ix, t);
    if (f->status && *f->status && strcasecmp(f->status, st) != 0) {
        bool special = (strcasecmp(f->status, "orphan") == 0 && is_orphan(p, t)) ||
                       (strcasecmp(f->status, "malformed") == 0 && (t->flags & RD_EXEC_MALFORMED)) ||
                       (strcasecmp(f->status, "oversized") == 0 && (t->flags & RD_EXEC_OVERSIZED)) ||
                       (strcasecmp(f->status, "overlap") == 0 && (t->flags & RD_EXEC_OVERLAP));
        if (!special)
            return false;
    }
    if (f->fingerprint && *f->fingerprint && t->fp != p->s->filter_fp)
        return false;
    if (f->text && *f->text) {
        const char *code = rix_code_name(ix, t);
        if (!strcasestr(rix_id(ix, t), f->text) && !strcasestr(rix_error(ix, t), f->text) &&
            !strcasestr(st, f->text) && !(code && strcasestr(code, f->text)))
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
    return retry_alakai_exhausted(t->attempt, p->s->base.ctx.cfg->alakai.max_retries);
}

static void exec_from_task(const rs_src *s, const rix_task *t, const pred_ctx *p,
                           rd_execution *e)
{
    double now = p->now;
    const rd_system_cfg *cfg = s->base.ctx.cfg;
    const rix *ix = s->ix;
    const char *st = rix_status_name(ix, t);
    e->id = xstrdup(rix_id(ix, t));
    e->status = xstrdup(st);
    e->attempt = t->attempt ? t->attempt : -1;
    e->max_attempts = cfg->alakai.max_retries >= 0 ? cfg->alakai.max_retries + 1 : -1;
    e->elig = retry_alakai(st, t->attempt, cfg->alakai.max_retries);
    e->reason = xstrdup(rix_code_name(s->ix, t));
    e->name = xstrdup(rix_task_name(s->ix, t));
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

static void publish_page(rs_src *s, pred_ctx *p)
{
    size_t n = s->base.ctx.cfg->ui.page_size > 0 ? (size_t)s->base.ctx.cfg->ui.page_size : 100;
    if (n > RS_PAGE_MAX)
        n = RS_PAGE_MAX;
    uint32_t *idx = xmalloc(n * sizeof *idx);
    bool more;
    size_t got = rix_select(s->ix, match_filter, p, &s->page_from, n, idx, &more);
    rd_execution *items = got ? xcalloc(got, sizeof *items) : NULL;
    for (size_t i = 0; i < got; i++)
        exec_from_task(s, rix_at(s->ix, idx[i]), p, &items[i]);
    free(idx);
    model_set_execs(s->base.ctx.model, items, got, more);
}

static void publish_counts(rs_src *s, pred_ctx *p, long *orphans, long *dead)
{
    long by[256] = { 0 };
    double now = p->now;
    long fails_recent = 0;
    *orphans = *dead = 0;
    for (size_t i = 0; i < rix_size(s->ix); i++) {
        const rix_task *t = rix_at(s->ix, i);
        by[t->status]++;
        *orphans += is_orphan(p, t);
        *dead += is_dead(s->ix, t, p);
        fails_recent += t->status == p->failed && (double)t->resolved_s > now - 300 &&
                        (double)t->resolved_s <= now;
    }
    size_t nc = 0;
    rd_count *c = xcalloc(256, sizeof *c);
    for (size_t k = 0; k < 256; k++) {
        if (!by[k])
            continue;
        rix_task probe = { .status = (uint8_t)k };
        snprintf(c[nc].status, sizeof c[nc].status, "%s", rix_status_name(s->ix, &probe));
        c[nc].count = by[k];
        c[nc].estimated = rix_overflow(s->ix);
        nc++;
    }
    rd_model *m = s->base.ctx.model;
    model_set_counts(m, c, nc);
    m->orphan_suspects = *orphans;
    m->failing_rate = fails_recent / 5.0;
}

/* Our DLQ entries ("alakai") replace only our own share of the model's DLQ. */
static void publish_dlq(rs_src *s, pred_ctx *p, long dead)
{
    rd_model *m = s->base.ctx.model;
    model_dlq_total(m, SRC_NAME, dead);
    if (!s->dlq_wanted)
        return;
    size_t want = (size_t)RS_DLQ_PAGE * (size_t)(s->dlq_pages > 0 ? s->dlq_pages : 1);
    uint32_t *idx = xmalloc(want * sizeof *idx);
    bool more;
    size_t got = rix_select(s->ix, is_dead, p, NULL, want, idx, &more);
    rd_dlq_entry *items = xcalloc(got + 1, sizeof *items);
    for (size_t i = 0; i < got; i++) {
        const rix *ix = s->ix;
        const rix_task *t = rix_at(ix, idx[i]);
        rd_dlq_entry *d = &items[i];
        bool orphan = is_orphan(p, t);
        d->id = xstrdup(rix_id(ix, t));
        d->queue = xstrdup("alakai");
        d->execution_id = xstrdup(rix_id(ix, t));
        d->reason = xstrdup(orphan ? "orphan suspect" : "budget exhausted");
        d->count = t->attempt;
        d->first_death_at = d->last_death_at = orphan ? t->dispatched_at : (double)t->resolved_s;
        d->payload = *rix_error(ix, t) ? xstrdup(rix_error(ix, t)) : NULL;
    }
    free(idx);
    model_dlq_set(m, SRC_NAME, got ? items : NULL, got);
    if (!got)
        free(items);
    s->dlq_sent = true;
}

void rs_publish(rs_src *s, bool force)
{
    if (s->freeing || !s->swept_once)
        return;
    double now = rs_now();
    long orphans, dead;
    if (!force && !s->view_dirty && rix_version(s->ix) == s->published_version &&
        !(s->dlq_wanted && !s->dlq_sent)) {
        /* only the clock moved: republish when the orphan count changes */
        long o = 0;
        pred_ctx p = pred_of(s, now);
        for (size_t i = 0; i < rix_size(s->ix); i++)
            o += is_orphan(&p, rix_at(s->ix, i));
        if (o == s->published_orphans)
            return;
    }
    pred_ctx p = pred_of(s, now);
    double cpu0 = clock_cpu();
    publish_counts(s, &p, &orphans, &dead);
    publish_page(s, &p);
    publish_dlq(s, &p, dead);
    if (getenv("RD_REDIS_DEBUG"))
        fprintf(stderr, "redis: publish %zu tasks in %.1f ms (CPU %.1f ms)\n", rix_size(s->ix),
                (rs_now() - now) * 1000, (clock_cpu() - cpu0) * 1000);
    s->published_version = rix_version(s->ix);
    s->published_orphans = orphans;
    s->view_dirty = false;
    if (s->base.ctx.on_change)
        s->base.ctx.on_change(s->base.ctx.ud);
}

void rs_publish_prev(rs_src *s, const rix_cursor *c, size_t n, uint32_t *idx)
{
    pred_ctx p = pred_of(s, rs_now());
    size_t got = rix_select_before(s->ix, match_filter, &p, c, n, idx);
    if (got > 0)
        rix_cursor_of(s->ix, rix_at(s->ix, idx[0]), true, &s->page_from);
    else
        s->page_from.set = false;
}
