/* One row of the model freed (model.h: execution_clear, worker_clear, queue_clear,
 * dlq_entry_clear): below model.c and storegroups.c, which both hold executions. */
#include "model.h"

#include <stdlib.h>
#include <string.h>

/* A string field added to these structs is copied in model_copy.c too. */
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
    free(d->step_id);
    free(d->reason);
    free(d->origin_queue);
    free(d->payload);
    free(d->task_type);
    memset(d, 0, sizeof *d);
}
