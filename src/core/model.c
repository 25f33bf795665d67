#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlqgroup.h"
#include "storegroups.h"
#include "xalloc.h"

rd_model *model_new(void)
{
    rd_model *m = xcalloc(1, sizeof *m);
    m->dlq_total = -1;
    m->orphan_suspects = -1;
    m->failing_rate = -1;
    m->store_eligible = -1;
    m->oldest_queued_at = -1;
    return m;
}

static void execs_free(rd_execution *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        execution_clear(&items[i]);
    free(items);
}

static void workers_free(rd_worker *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        worker_clear(&items[i]);
    free(items);
}

static void queues_free(rd_queue *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        queue_clear(&items[i]);
    free(items);
}

static void dlq_free(rd_dlq_entry *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dlq_entry_clear(&items[i]);
    free(items);
}

static void dlq_parts_clear(rd_model *m)
{
    for (size_t i = 0; i < m->dlq_parts.n; i++) {
        dlq_free(m->dlq_parts.items[i].items, m->dlq_parts.items[i].n);
        free(m->dlq_parts.items[i].owner);
    }
    m->dlq_parts.n = 0;
}

static void queue_parts_clear(rd_model *m)
{
    for (size_t i = 0; i < m->queue_parts.n; i++) {
        queues_free(m->queue_parts.items[i].items, m->queue_parts.items[i].n);
        free(m->queue_parts.items[i].owner);
    }
    m->queue_parts.n = 0;
    free(m->queues.items);          /* shallow copies of the parts' queues */
    m->queues.items = NULL;
    m->queues.n = m->queues.cap = 0;
}

void model_free(rd_model *m)
{
    if (!m)
        return;
    execs_free(m->execs.items, m->execs.n);
    execs_free(m->chain.items, m->chain.n);
    free(m->chain_id);
    free(m->detail_id);
    free(m->detail);
    free(m->detail_why);
    execs_free(m->running.items, m->running.n);
    free(m->running_worker);
    workers_free(m->workers.items, m->workers.n);
    queue_parts_clear(m);
    free(m->queue_parts.items);
    dlq_parts_clear(m);
    free(m->dlq_parts.items);
    free(m->dlq.items);             /* shallow copies of the parts' entries */
    free(m->counts.items);
    free(m->sources.items);
    sgroups_free(m->sgroups);
    dlq_sgroups_free(m->dlq_sgroups);
    free(m);
}

void model_changed(rd_model *m)
{
    m->generation++;
}

void model_set_execs(rd_model *m, rd_execution *items, size_t n, bool more)
{
    if (items != m->execs.items)
        execs_free(m->execs.items, m->execs.n);
    m->execs.items = items;
    m->execs.n = m->execs.cap = items ? n : 0;
    m->execs_more = more;
    model_changed(m);
}

void model_set_chain(rd_model *m, const char *id, rd_execution *items, size_t n)
{
    if (items != m->chain.items)
        execs_free(m->chain.items, m->chain.n);
    char *nid = xstrdup(id);
    free(m->chain_id);
    m->chain_id = nid;
    m->chain.items = items;
    m->chain.n = m->chain.cap = items ? n : 0;
    model_changed(m);
}

void model_set_detail(rd_model *m, const char *id, char *json, const char *why)
{
    char *nid = xstrdup(id);
    free(m->detail_id);
    free(m->detail);
    free(m->detail_why);
    m->detail_id = nid;
    m->detail = json;
    m->detail_why = json ? NULL : xstrdup(why ? why : "no such execution");
    model_changed(m);
}

void model_set_running(rd_model *m, const char *worker, rd_execution *items, size_t n, bool known)
{
    if (items != m->running.items)
        execs_free(m->running.items, m->running.n);
    char *w = worker ? xstrdup(worker) : NULL;
    free(m->running_worker);
    m->running_worker = w;
    m->running.items = items;
    m->running.n = m->running.cap = items ? n : 0;
    m->running_known = known;
    model_changed(m);
}

void model_set_workers(rd_model *m, rd_worker *items, size_t n)
{
    if (items != m->workers.items)
        workers_free(m->workers.items, m->workers.n);
    m->workers.items = items;
    m->workers.n = m->workers.cap = items ? n : 0;
    model_changed(m);
}

/* The part of `owner` in a vector of parts whose struct starts with `char *owner`, created
 * zeroed in owner order on first use (the DLQ's and the queues' parts). */
static void *part_of(void *items_p, size_t *n, size_t *cap, size_t size, const char *owner)
{
    char **items = items_p;
    size_t at = 0;
    for (; at < *n; at++) {
        char *p = *items + at * size;
        int c = strcmp(*(char **)(void *)p, owner);
        if (c == 0)
            return p;
        if (c > 0)
            break;
    }
    xgrow(items, cap, *n + 1, size);
    char *p = *items + at * size;
    memmove(p + size, p, (*n - at) * size);
    (*n)++;
    memset(p, 0, size);
    *(char **)(void *)p = xstrdup(owner);   /* a stable address: merged items point at it */
    return p;
}

static rd_dlq_part *dlq_part(rd_model *m, const char *owner)
{
    size_t had = m->dlq_parts.n;
    rd_dlq_part *p = part_of(&m->dlq_parts.items, &m->dlq_parts.n, &m->dlq_parts.cap,
                             sizeof *p, owner);
    if (m->dlq_parts.n != had)
        p->total = -1;              /* a new part: its total is unknown */
    return p;
}

void model_set_queues(rd_model *m, const char *owner, rd_queue *items, size_t n)
{
    rd_queue_part *p = part_of(&m->queue_parts.items, &m->queue_parts.n, &m->queue_parts.cap,
                               sizeof *p, owner);
    if (items != p->items)
        queues_free(p->items, p->n);
    p->items = items;
    p->n = items ? n : 0;
    size_t all = 0;
    for (size_t i = 0; i < m->queue_parts.n; i++)
        all += m->queue_parts.items[i].n;
    free(m->queues.items);
    m->queues.items = all ? xcalloc(all, sizeof *m->queues.items) : NULL;
    m->queues.n = 0;
    for (size_t i = 0; i < m->queue_parts.n; i++) {
        rd_queue_part *q = &m->queue_parts.items[i];
        for (size_t k = 0; k < q->n; k++) {
            m->queues.items[m->queues.n] = q->items[k];
            m->queues.items[m->queues.n++].source = q->owner;
        }
    }
    m->queues.cap = all;
    model_changed(m);
}

/* Rebuild the merged view: entries in owner order, total = sum of the known totals. */
static void dlq_merge(rd_model *m)
{
    size_t n = 0;
    long total = -1;
    bool loaded = false;
    double cached = 0;
    for (size_t i = 0; i < m->dlq_parts.n; i++) {
        const rd_dlq_part *p = &m->dlq_parts.items[i];
        n += p->n;
        if (p->total >= 0)
            total = (total < 0 ? 0 : total) + p->total;
        if (p->total >= 0 && p->cached_at > 0 && (cached == 0 || p->cached_at < cached))
            cached = p->cached_at;
        loaded |= p->loaded;
    }
    free(m->dlq.items);
    m->dlq.items = n ? xcalloc(n, sizeof *m->dlq.items) : NULL;
    m->dlq.n = m->dlq.cap = 0;
    for (size_t i = 0; i < m->dlq_parts.n; i++) {
        rd_dlq_part *p = &m->dlq_parts.items[i];
        for (size_t k = 0; k < p->n; k++) {
            m->dlq.items[m->dlq.n] = p->items[k];
            m->dlq.items[m->dlq.n++].source = p->owner;
        }
    }
    m->dlq.cap = n;
    m->dlq_total = total;
    m->dlq_cached_at = cached;
    m->dlq_loaded = loaded;
    model_changed(m);
}

void model_dlq_set(rd_model *m, const char *owner, rd_dlq_entry *items, size_t n)
{
    rd_dlq_part *p = dlq_part(m, owner);
    if (items != p->items)
        dlq_free(p->items, p->n);
    p->items = items;
    p->n = items ? n : 0;
    p->loaded = true;
    p->cached_at = 0;
    dlq_merge(m);
}

void model_dlq_peek_off(rd_model *m, bool off)
{
    if (m->dlq_peek_off == off)
        return;
    m->dlq_peek_off = off;
    model_changed(m);
}

void model_dlq_page(rd_model *m, long first, bool more, bool oldest)
{
    m->dlq_first = first;
    m->dlq_more = more;
    m->dlq_oldest = oldest;
    model_changed(m);
}

void model_dlq_total(rd_model *m, const char *owner, long total)
{
    rd_dlq_part *p = dlq_part(m, owner);
    if (total < 0)
        total = -1;
    if (p->total == total && p->cached_at == 0)
        return;                     /* idle polls do not move the generation */
    p->total = total;
    p->cached_at = 0;               /* the live answer replaces the cached one */
    dlq_merge(m);
}

bool model_dlq_remove(rd_model *m, const char *owner, const char *id)
{
    for (size_t i = 0; id && i < m->dlq_parts.n; i++) {
        rd_dlq_part *p = &m->dlq_parts.items[i];
        if (strcmp(p->owner, owner) != 0)
            continue;
        for (size_t k = 0; k < p->n; k++) {
            if (!p->items[k].id || strcmp(p->items[k].id, id) != 0)
                continue;
            rd_dlq_sgroups *sg = strcmp(owner, "postgresql") == 0 ? m->dlq_sgroups : NULL;
            for (size_t g = 0; sg && g < sg->n; g++) {   /* the store's groups lose it too */
                const char *want = sg->items[g].by == DLQ_BY_REASON ? p->items[k].reason : p->items[k].queue;
                if (want && sg->items[g].key && strcmp(want, sg->items[g].key) == 0 && sg->items[g].count > 0)
                    sg->items[g].count--;
            }
            dlq_entry_clear(&p->items[k]);
            memmove(&p->items[k], &p->items[k + 1], (p->n - k - 1) * sizeof *p->items);
            p->n--;
            if (p->total > 0)
                p->total--;
            dlq_merge(m);
            return true;
        }
    }
    return false;
}

/* Removes part i (its entries and owner). */
static void dlq_part_drop(rd_model *m, size_t i)
{
    rd_dlq_part *p = &m->dlq_parts.items[i];
    dlq_free(p->items, p->n);
    free(p->owner);
    memmove(p, p + 1, (m->dlq_parts.n - i - 1) * sizeof *p);
    m->dlq_parts.n--;
}

void model_dlq_breakdown(const rd_model *m, char *out, size_t cap)
{
    size_t known = 0, n = 0;
    out[0] = 0;
    for (size_t i = 0; i < m->dlq_parts.n; i++)
        known += m->dlq_parts.items[i].total >= 0;
    for (size_t i = 0; known > 1 && i < m->dlq_parts.n && n < cap; i++) {
        const rd_dlq_part *p = &m->dlq_parts.items[i];
        if (p->total >= 0)
            n += (size_t)snprintf(out + n, cap - n, "%s%s %ld", n ? " + " : " (", p->owner, p->total);
    }
    if (n && n + 1 < cap)
        snprintf(out + n, cap - n, ")");
}

void model_dlq_mark_cached(rd_model *m, double at)
{
    for (size_t i = m->dlq_parts.n; i-- > 0;) {
        if (strcmp(m->dlq_parts.items[i].owner, "snapshot") == 0)
            dlq_part_drop(m, i);
        else
            m->dlq_parts.items[i].cached_at = at;
    }
    dlq_merge(m);
}

void model_dlq_drop_cached(rd_model *m, const char *const *live, size_t n)
{
    bool dropped = false;
    for (size_t i = m->dlq_parts.n; i-- > 0;) {
        const rd_dlq_part *p = &m->dlq_parts.items[i];
        bool named = false;
        for (size_t k = 0; k < n && !named; k++)
            named = strcmp(live[k], p->owner) == 0;
        if (p->cached_at > 0 && !named) {
            dlq_part_drop(m, i);
            dropped = true;
        }
    }
    if (dropped)
        dlq_merge(m);
}

void model_queues_reset(rd_model *m)
{
    queue_parts_clear(m);
    model_changed(m);
}

void model_dlq_reset(rd_model *m)
{
    dlq_parts_clear(m);
    dlq_sgroups_free(m->dlq_sgroups);
    m->dlq_sgroups = NULL;
    dlq_merge(m);
}

void model_set_counts(rd_model *m, rd_count *items, size_t n)
{
    if (items != m->counts.items)
        free(m->counts.items);
    m->counts.items = items;
    m->counts.n = m->counts.cap = items ? n : 0;
    model_changed(m);
}

rd_source_status *model_source(rd_model *m, const char *name)
{
    for (size_t i = 0; i < m->sources.n; i++)
        if (strncmp(m->sources.items[i].name, name, sizeof m->sources.items[i].name - 1) == 0)
            return &m->sources.items[i];
    xgrow(&m->sources.items, &m->sources.cap, m->sources.n + 1, sizeof *m->sources.items);
    rd_source_status *s = &m->sources.items[m->sources.n++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->state = RD_SRC_CONNECTING;
    s->progress = (rd_progress){ .total = -1, .share = -1 };
    model_changed(m);
    return s;
}

void model_set_failing_rate(rd_model *m, double per_min)
{
    if (per_min < 0)
        per_min = -1;
    if (m->failing_rate == per_min)
        return;                     /* a steady poll moves nothing */
    m->failing_rate = per_min;
    model_changed(m);
}

void model_set_store_figures(rd_model *m, long eligible, bool capped, bool upper,
                             double oldest_queued_at)
{
    if (eligible < 0)
        eligible = -1, capped = upper = false;
    if (!(oldest_queued_at >= 0))   /* also NaN */
        oldest_queued_at = -1;
    if (m->store_eligible == eligible && m->store_eligible_capped == capped &&
        m->store_eligible_upper == upper && m->oldest_queued_at == oldest_queued_at)
        return;
    m->store_eligible = eligible;
    m->store_eligible_capped = capped;
    m->store_eligible_upper = upper;
    m->oldest_queued_at = oldest_queued_at;
    model_changed(m);
}

void model_set_sources(rd_model *m, rd_source_status *items, size_t n)
{
    free(m->sources.items);
    m->sources.items = items;
    m->sources.n = m->sources.cap = n;
    model_changed(m);
}

void model_set_orphan_suspects(rd_model *m, long n)
{
    if (n < 0)
        n = -1;
    if (m->orphan_suspects == n)
        return;
    m->orphan_suspects = n;
    model_changed(m);
}

void model_set_execs_window(rd_model *m, long searched, bool newer)
{
    if (searched < 0)
        searched = 0;
    if (m->execs_searched == searched && m->execs_newer == newer)
        return;
    m->execs_searched = searched;
    m->execs_newer = newer;
    model_changed(m);
}

void model_set_dlq_sgroups(rd_model *m, struct rd_dlq_sgroups *g)
{
    if (g != m->dlq_sgroups)
        dlq_sgroups_free(m->dlq_sgroups);
    m->dlq_sgroups = g;
    model_changed(m);
}

void model_set_sgroups(rd_model *m, struct rd_sgroups *g)
{
    if (g != m->sgroups)
        sgroups_free(m->sgroups);
    m->sgroups = g;
    model_changed(m);
}

void model_sgroups_pending(rd_model *m, bool pending)
{
    if (m->sgroups_pending == pending)
        return;
    m->sgroups_pending = pending;
    model_changed(m);
}

void model_source_ok(rd_model *m, const char *name, double now)
{
    rd_source_status *s = model_source(m, name);
    /* ok and fresh before and after (by the narrowest window a view uses, poll_s 0): what
     * is shown of it ("ok", "just now") stays the same, so a steady poll moves nothing */
    bool same = s->state == RD_SRC_OK && !s->error[0] && source_is_fresh(s, 0, now);
    if (s->state != RD_SRC_OK) {
        s->state = RD_SRC_OK;
        s->since = now;
    }
    s->error[0] = '\0';
    s->last_ok = now;
    if (!same)
        model_changed(m);
}

void model_source_fail(rd_model *m, const char *name, const char *error, double now)
{
    rd_source_status *s = model_source(m, name);
    rd_src_state st = s->last_ok > 0 ? RD_SRC_STALE : RD_SRC_DOWN;
    if (s->state != st) {
        s->state = st;
        s->since = now;
    }
    snprintf(s->error, sizeof s->error, "%s", error ? error : "");
    model_changed(m);
}

void model_source_every(rd_model *m, const char *name, double every_s)
{
    model_source(m, name)->every_s = every_s > 0 ? every_s : 0;
}

double source_fresh_s(const rd_source_status *s, double poll_s)
{
    double every = s->every_s > poll_s ? s->every_s : poll_s;
    return 2 * every + 1;
}

bool source_is_fresh(const rd_source_status *s, double poll_s, double now)
{
    double age = now - s->last_ok;
    return s->last_ok > 0 && age < source_fresh_s(s, poll_s) && age > -5;
}

void model_source_version(rd_model *m, const char *name, const char *version)
{
    rd_source_status *s = model_source(m, name);
    snprintf(s->version, sizeof s->version, "%s", version ? version : "");
    s->facts_known |= RD_FACT_VERSION;
    s->facts |= RD_FACT_VERSION;
}

void model_source_fact(rd_model *m, const char *name, unsigned fact, bool holds)
{
    rd_source_status *s = model_source(m, name);
    s->facts_known |= fact;
    s->facts = holds ? s->facts | fact : s->facts & ~fact;
}

void model_source_progress(rd_model *m, const char *name, const rd_progress *p)
{
    rd_source_status *s = model_source(m, name);
    rd_progress now = p && p->active ? *p : (rd_progress){ .total = -1, .share = -1 };
    const rd_progress *was = &s->progress;
    if (now.active == was->active && now.done == was->done && now.total == was->total &&
        now.share == was->share)
        return;
    s->progress = now;
    model_changed(m);
}

bool model_partial(const rd_model *m)
{
    for (size_t i = 0; i < m->sources.n; i++)
        if (m->sources.items[i].progress.active)
            return true;
    return false;
}

bool model_partial_text(const rd_model *m, char *out, size_t cap)
{
    for (size_t i = 0; i < m->sources.n; i++) {
        char t[200];
        source_progress_text(&m->sources.items[i], t, sizeof t);
        if (t[0]) {
            snprintf(out, cap, "partial: %s", t);
            return true;
        }
    }
    if (cap)
        out[0] = '\0';
    return false;
}

/* 1234567 → "1,234,567" */
static void thousands(long v, char *out, size_t cap)
{
    char d[32];
    int n = snprintf(d, sizeof d, "%ld", v < 0 ? 0 : v), o = 0;
    for (int i = 0; i < n && (size_t)o + 2 < cap; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = d[i];
    }
    out[o] = '\0';
}

void source_progress_text(const rd_source_status *s, char *out, size_t cap)
{
    const rd_progress *p = &s->progress;
    if (cap)
        out[0] = '\0';
    if (!p->active || !cap)
        return;
    char done[32], total[32], pct[16] = "", share[80] = "";
    thousands(p->done, done, sizeof done);
    thousands(p->total, total, sizeof total);
    if (p->total > 0) {             /* an estimate: never "100 %" before the end */
        double f = 100.0 * (double)p->done / (double)p->total;
        snprintf(pct, sizeof pct, " (%.0f %%)", f < 99 ? f : 99);
    }
    if (p->share >= 0)
        snprintf(share, sizeof share, ", %.0f %% of one %.31s core", fmin(p->share, 9.99) * 100,
                 strcmp(s->name, "redis") == 0 ? "Redis" : s->name);
    snprintf(out, cap, "reading tasks: %s%s%s%s%s", done, p->total > 0 ? " of ~" : "",
             p->total > 0 ? total : "", pct, share);
}

void model_source_tls(rd_model *m, const char *name, const char *info, bool unverified)
{
    rd_source_status *s = model_source(m, name);
    snprintf(s->tls, sizeof s->tls, "%s", info ? info : "");
    s->tls_unverified = unverified;
    s->facts_known |= RD_FACT_TLS | RD_FACT_TLS_VERIFIED;
    s->facts = info && *info ? s->facts | RD_FACT_TLS : s->facts & ~RD_FACT_TLS;
    s->facts = info && *info && !unverified ? s->facts | RD_FACT_TLS_VERIFIED
                                            : s->facts & ~RD_FACT_TLS_VERIFIED;
    model_changed(m);
}

void model_source_replica(rd_model *m, const char *name, const char *host, const char *role,
                          double lag_s)
{
    rd_source_status *s = model_source(m, name);
    bool known = lag_s >= 0;
    double lag = known ? floor(lag_s) : 0;
    if (strncmp(s->host, host ? host : "", sizeof s->host - 1) == 0 &&
        strncmp(s->role, role ? role : "", sizeof s->role - 1) == 0 &&
        s->lag_known == known && s->lag_s == lag)
        return;
    snprintf(s->host, sizeof s->host, "%s", host ? host : "");
    snprintf(s->role, sizeof s->role, "%s", role ? role : "");
    s->lag_known = known;
    s->lag_s = lag;
    model_changed(m);
}

void model_source_failover(rd_model *m, const char *name, const char *what, double now)
{
    rd_source_status *s = model_source(m, name);
    snprintf(s->failover, sizeof s->failover, "%s", what ? what : "");
    s->failover_at = now;
    model_changed(m);
}

void model_source_creds(rd_model *m, const char *name, const char *provider, double expires)
{
    rd_source_status *s = model_source(m, name);
    if (strncmp(s->creds, provider ? provider : "", sizeof s->creds - 1) == 0 &&
        s->creds_expires == expires)
        return;
    snprintf(s->creds, sizeof s->creds, "%s", provider ? provider : "");
    s->creds_expires = expires;
    model_changed(m);
}

void model_source_push(rd_model *m, const char *name, const char *state)
{
    rd_source_status *s = model_source(m, name);
    if (strncmp(s->push, state ? state : "", sizeof s->push - 1) == 0)
        return;
    snprintf(s->push, sizeof s->push, "%s", state ? state : "");
    model_changed(m);
}

void model_source_notes(rd_model *m, const char *name, const char *const *notes, size_t n)
{
    rd_source_status *s = model_source(m, name);
    char next[RD_SRC_NOTES][RD_SRC_NOTE_LEN];
    size_t k = 0;
    memset(next, 0, sizeof next);
    for (size_t i = 0; i < n && k < RD_SRC_NOTES; i++)
        if (notes[i] && *notes[i])
            snprintf(next[k++], RD_SRC_NOTE_LEN, "%s", notes[i]);
    if (k == s->n_notes && memcmp(next, s->notes, sizeof next) == 0)
        return;
    memcpy(s->notes, next, sizeof next);
    s->n_notes = k;
    model_changed(m);
}

void model_core_probe(rd_model *m, rd_core_state st, const char *identity, const char *why,
                      double now)
{
    rd_core_status *c = &m->core;
    char id[sizeof c->identity], err[sizeof c->error];
    snprintf(id, sizeof id, "%s", identity ? identity : "");
    snprintf(err, sizeof err, "%s", st == RD_CORE_OK || !why ? "" : why);
    bool same = c->state == st && strcmp(id, c->identity) == 0 && strcmp(err, c->error) == 0;
    if (c->state != st)
        c->since = now;
    c->state = st;
    memcpy(c->identity, id, sizeof id);
    memcpy(c->error, err, sizeof err);
    if (st != RD_CORE_CHECKING)
        c->checked_at = now;
    if (!same)
        model_changed(m);
}

void model_core_action(rd_model *m, const char *outcome, bool failed, double now)
{
    snprintf(m->core.last_action, sizeof m->core.last_action, "%s", outcome ? outcome : "");
    m->core.last_action_failed = failed;
    m->core.last_action_at = now;
    model_changed(m);
}

void model_backlog(const rd_model *m, rd_backlog *b)
{
    memset(b, 0, sizeof *b);
    for (size_t i = 0; i < m->queues.n; i++) {
        const rd_queue *q = &m->queues.items[i];
        if (q->retention_s <= 0)
            continue;                /* not an SQS queue */
        if (q->is_dlq) {
            b->dlqs++;
            b->dead += q->ready > 0 ? q->ready : 0;
            continue;
        }
        b->queues++;
        b->visible += q->ready > 0 ? q->ready : 0;
        b->in_flight += q->unacked > 0 ? q->unacked : 0;
        b->delayed += q->delayed > 0 ? q->delayed : 0;
        if (q->not_draining && b->not_draining++ == 0)
            b->stuck = q->name;
    }
}
