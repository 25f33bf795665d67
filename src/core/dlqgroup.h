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
