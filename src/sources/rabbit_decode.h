#pragma once
/*
 * Decoding of RabbitMQ management API answers (3.10): the paged queue list and the
 * messages of a DLQ peek (x-death headers, Attune / Tasker envelopes). Pure (fuzzable).
 */
#include <stdbool.h>
#include <stddef.h>

#include "../core/model.h"

typedef struct rb_globs {            /* comma-separated glob list, split */
    char **v;
    size_t n;
} rb_globs;

void rb_globs_parse(rb_globs *g, const char *csv);      /* NULL/"" → empty */
void rb_globs_free(rb_globs *g);
bool rb_globs_match(const rb_globs *g, const char *name);
/* A queue is a DLQ when it matches the dlq globs or is named *.dlq, *_dlq, *.dlx.queue. */
bool rb_is_dlq(const rb_globs *dlq, const char *name);

typedef struct rb_queue_page {
    rd_queue *items;                 /* owned until moved out */
    size_t n, cap;
    long page_count;                 /* -1 unknown */
} rb_queue_page;

/* Appends the queues of one page that pass `show` (or are DLQs) to out. false with
 * why when the body is not a queue page. */
bool rb_decode_queues(const char *body, size_t len, const rb_globs *show,
                      const rb_globs *dlq, rb_queue_page *out, char *why, size_t cap);
void rb_queue_page_free(rb_queue_page *p);

enum { RB_PAYLOAD_CAP = 4096 };
/* Appends the messages of a POST /api/queues/{v}/{q}/get answer as DLQ entries. */
bool rb_decode_messages(const char *body, size_t len, const char *queue,
                        rd_dlq_entry **items, size_t *n, char *why, size_t cap);
