#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

rd_model *model_new(void)
{
    rd_model *m = xcalloc(1, sizeof *m);
    m->dlq_total = -1;
    m->orphan_suspects = -1;
    m->failing_rate = -1;
    return m;
}

void execution_clear(rd_execution *e)
{
    if (!e)
        return;
    free(e->id);
    free(e->parent_id);
    free(e->name);
    free(e->status);
    free(e->chain_root);
    free(e->retry_of);
    free(e->reason);
    free(e->error);
    free(e->fingerprint);
    free(e->worker);
    memset(e, 0, sizeof *e);
}

void worker_clear(rd_worker *w)
{
    if (!w)
        return;
    free(w->id);
    free(w->name);
    free(w->status);
    free(w->reported_health);
    free(w->tags);
    memset(w, 0, sizeof *w);
}

void queue_clear(rd_queue *q)
{
    if (!q)
        return;
    free(q->name);
    free(q->dead_letter_exchange);
    memset(q, 0, sizeof *q);
}

void dlq_entry_clear(rd_dlq_entry *d)
{
    if (!d)
        return;
    free(d->id);
    free(d->queue);
    free(d->execution_id);
    free(d->reason);
    free(d->origin_queue);
    free(d->payload);
    free(d->task_type);
    memset(d, 0, sizeof *d);
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

void model_free(rd_model *m)
{
    if (!m)
        return;
    execs_free(m->execs.items, m->execs.n);
    execs_free(m->chain.items, m->chain.n);
    free(m->chain_id);
    workers_free(m->workers.items, m->workers.n);
    queues_free(m->queues.items, m->queues.n);
    dlq_free(m->dlq.items, m->dlq.n);
    free(m->counts.items);
    free(m->sources.items);
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

void model_set_workers(rd_model *m, rd_worker *items, size_t n)
{
    if (items != m->workers.items)
        workers_free(m->workers.items, m->workers.n);
    m->workers.items = items;
    m->workers.n = m->workers.cap = items ? n : 0;
    model_changed(m);
}

void model_set_queues(rd_model *m, rd_queue *items, size_t n)
{
    if (items != m->queues.items)
        queues_free(m->queues.items, m->queues.n);
    m->queues.items = items;
    m->queues.n = m->queues.cap = items ? n : 0;
    model_changed(m);
}

void model_set_dlq(rd_model *m, rd_dlq_entry *items, size_t n, long total)
{
    if (items != m->dlq.items)
        dlq_free(m->dlq.items, m->dlq.n);
    m->dlq.items = items;
    m->dlq.n = m->dlq.cap = items ? n : 0;
    m->dlq_total = total;
    m->dlq_loaded = true;
    model_changed(m);
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
    model_changed(m);
    return s;
}

void model_source_ok(rd_model *m, const char *name, double now)
{
    rd_source_status *s = model_source(m, name);
    if (s->state != RD_SRC_OK) {
        s->state = RD_SRC_OK;
        s->since = now;
    }
    s->error[0] = '\0';
    s->last_ok = now;
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

const char *elig_name(rd_elig e)
{
    switch (e) {
    case RD_ELIG_YES: return "yes";
    case RD_ELIG_NO: return "no";
    case RD_ELIG_CONFIG_ERROR: return "config-error";
    case RD_ELIG_UNKNOWN: break;
    }
    return "unknown";
}

const char *health_name(rd_health h)
{
    switch (h) {
    case RD_HEALTH_HEALTHY: return "healthy";
    case RD_HEALTH_DEGRADED: return "degraded";
    case RD_HEALTH_UNHEALTHY: return "unhealthy";
    case RD_HEALTH_UNKNOWN: break;
    }
    return "unknown";
}

const char *src_state_name(rd_src_state s)
{
    switch (s) {
    case RD_SRC_OK: return "ok";
    case RD_SRC_STALE: return "stale";
    case RD_SRC_DOWN: return "down";
    case RD_SRC_CONNECTING: break;
    }
    return "connecting";
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
