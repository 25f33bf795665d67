#include "dlqgroup.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static const char *key_of(const rd_dlq_entry *d, rd_dlq_by by)
{
    const char *k = by == DLQ_BY_REASON ? d->reason : d->queue;
    return k && *k ? k : "-";
}

static int by_count(const void *a, const void *b)
{
    const rd_dlq_group *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* count entries more of key k, first and last seen, into its group (added when new). */
static void tally(rd_dlq_group **g, size_t *ng, size_t *cap, const char *k, size_t count, double first,
                  double last)
{
    size_t j = 0;
    while (j < *ng && strcmp((*g)[j].key, k) != 0)
        j++;
    if (j == *ng) {
        xgrow(g, cap, *ng + 1, sizeof **g);
        (*g)[(*ng)++] = (rd_dlq_group){k, 0, 0, 0};
    }
    rd_dlq_group *x = &(*g)[j];
    x->count += count;
    if (first > 0 && (x->first <= 0 || first < x->first))
        x->first = first;
    if (last > x->last)
        x->last = last;
}

size_t dlq_group(const rd_dlq_entry *const *rows, size_t n, rd_dlq_by by, rd_dlq_group **out)
{
    rd_dlq_group *g = NULL;
    size_t ng = 0, cap = 0;
    for (size_t i = 0; i < n && by != DLQ_BY_NONE; i++)
        tally(&g, &ng, &cap, key_of(rows[i], by), 1, rows[i]->first_death_at, rows[i]->last_death_at);
    if (ng)
        qsort(g, ng, sizeof *g, by_count);
    *out = g;
    return ng;
}

void dlq_sgroups_free(rd_dlq_sgroups *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++)
        free(g->items[i].key);
    free(g->items);
    free(g);
}

size_t dlq_group_with(const rd_dlq_sgroups *sg, const rd_dlq_entry *const *rows, size_t n, rd_dlq_by by,
                      rd_dlq_group **out)
{
    rd_dlq_group *g = NULL;
    size_t ng = dlq_group(rows, n, by, &g), cap = ng;
    for (size_t i = 0; sg && by != DLQ_BY_NONE && i < sg->n; i++) {
        const rd_dlq_sgroup *s = &sg->items[i];
        if (s->by != by || s->count <= 0)
            continue;
        tally(&g, &ng, &cap, s->key && *s->key ? s->key : "-", (size_t)s->count, s->first, s->last);
    }
    if (ng)
        qsort(g, ng, sizeof *g, by_count);
    *out = g;
    return ng;
}

const char *dlq_by_name(rd_dlq_by by)
{
    return by == DLQ_BY_REASON ? "reason" : by == DLQ_BY_QUEUE ? "queue" : "none";
}
