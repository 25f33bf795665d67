#pragma once
/* The DLQ view's grouping: entries by reason or by queue, largest first. Pure. */
#include <stddef.h>

#include "model.h"

typedef enum { DLQ_BY_NONE, DLQ_BY_REASON, DLQ_BY_QUEUE, DLQ_BY__COUNT } rd_dlq_by;

typedef struct rd_dlq_group {
    const char *key;        /* borrowed from the entries; "-" when they name none */
    size_t count;
    double first, last;     /* oldest first death, newest last death (0 unknown) */
} rd_dlq_group;

/* Groups rows[0..n) by `by`: *out (malloc'd, caller frees) largest first, then by key;
 * returns how many groups. */
size_t dlq_group(const rd_dlq_entry *const *rows, size_t n, rd_dlq_by by, rd_dlq_group **out);
const char *dlq_by_name(rd_dlq_by by);   /* "reason", "queue", "none" */

/* The store's whole DLQ grouped by the store ([query dlq_groups]: a GROUP BY over every
 * pending entry, not the page loaded), owned by the model (model_set_dlq_sgroups). */
typedef struct rd_dlq_sgroup {
    rd_dlq_by by;
    char *key;              /* "-" when the entries name none */
    long count;
    double first, last;     /* epoch, 0 unknown */
} rd_dlq_sgroup;

typedef struct rd_dlq_sgroups {
    rd_dlq_sgroup *items;
    size_t n;
    bool capped;            /* the store stopped counting at its cap: counts are lower bounds */
} rd_dlq_sgroups;

void dlq_sgroups_free(rd_dlq_sgroups *g);
/* The groups by `by` of the store's counts (sg, may be NULL) and of rows[0..n) (the
 * entries the store did not count: a broker's); keys borrowed from both; largest first,
 * then by key; returns how many. */
size_t dlq_group_with(const rd_dlq_sgroups *sg, const rd_dlq_entry *const *rows, size_t n, rd_dlq_by by,
                      rd_dlq_group **out);
