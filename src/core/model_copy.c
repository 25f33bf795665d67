/* A copy of the parts of a model the last-known snapshot writes (model.h: model_copy_cache). */
#include <string.h>

#include "model.h"
#include "model_tables.h"
#include "xalloc.h"

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

/* Each owned string of a row is copied, as its field table names them (model_tables.c). */
static void execution_copy(rd_execution *to, const rd_execution *e)
{
    record_copy(&exec_record, to, e);
}

static void worker_copy(rd_worker *to, const rd_worker *w)
{
    record_copy(&worker_record, to, w);
}

static void queue_copy(rd_queue *to, const rd_queue *q)
{
    record_copy(&queue_record, to, q);   /* its source: set by the merge to the copy's owner */
}

/* The DLQ parts' totals and sizes; their entries (payloads) are not in the file: blank. */
static void dlq_parts_copy(rd_model *c, const rd_model *m)
{
    size_t n = m->dlq_parts.n;
    c->dlq_parts.items = n ? xcalloc(n, sizeof *c->dlq_parts.items) : NULL;
    c->dlq_parts.n = c->dlq_parts.cap = n;
    for (size_t i = 0; i < n; i++) {
        const rd_dlq_part *p = &m->dlq_parts.items[i];
        rd_dlq_part *q = &c->dlq_parts.items[i];
        *q = *p;
        q->owner = dup_or_null(p->owner);
        q->items = p->n ? xcalloc(p->n, sizeof *q->items) : NULL;
    }
}

rd_model *model_copy_cache(const rd_model *m)
{
    rd_model *c = model_new();
    rd_execution *ex = m->execs.n ? xcalloc(m->execs.n, sizeof *ex) : NULL;
    for (size_t i = 0; i < m->execs.n; i++)
        execution_copy(&ex[i], &m->execs.items[i]);
    model_set_execs(c, ex, m->execs.n, m->execs_more);
    rd_worker *wk = m->workers.n ? xcalloc(m->workers.n, sizeof *wk) : NULL;
    for (size_t i = 0; i < m->workers.n; i++)
        worker_copy(&wk[i], &m->workers.items[i]);
    model_set_workers(c, wk, m->workers.n);
    for (size_t i = 0; i < m->queue_parts.n; i++) {
        const rd_queue_part *p = &m->queue_parts.items[i];
        rd_queue *q = p->n ? xcalloc(p->n, sizeof *q) : NULL;
        for (size_t k = 0; k < p->n; k++)
            queue_copy(&q[k], &p->items[k]);
        model_set_queues(c, p->owner, q, p->n);
    }
    dlq_parts_copy(c, m);
    if (m->counts.n) {
        rd_count *cn = xmalloc(m->counts.n * sizeof *cn);
        memcpy(cn, m->counts.items, m->counts.n * sizeof *cn);
        model_set_counts(c, cn, m->counts.n);
    }
    if (m->sources.n) {   /* plain structs: whether a first sweep is under way (partial) */
        c->sources.items = xmalloc(m->sources.n * sizeof *c->sources.items);
        memcpy(c->sources.items, m->sources.items, m->sources.n * sizeof *c->sources.items);
        c->sources.n = c->sources.cap = m->sources.n;
    }
    c->execs_newer = m->execs_newer;
    c->execs_searched = m->execs_searched;
    c->dlq_total = m->dlq_total;
    c->dlq_loaded = m->dlq_loaded;
    c->dlq_cached_at = m->dlq_cached_at;
    c->orphan_suspects = m->orphan_suspects;
    c->failing_rate = m->failing_rate;
    c->store_eligible = m->store_eligible;
    c->store_eligible_capped = m->store_eligible_capped;
    c->store_eligible_upper = m->store_eligible_upper;
    c->oldest_queued_at = m->oldest_queued_at;
    c->generation = m->generation;
    return c;
}
