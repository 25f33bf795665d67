#pragma once
/*
 * What the HTTP sources (RabbitMQ, SQS, worker /health probes) share: the rd_source and
 * its ops, the poll timer and its interval, "settled", and an on-demand DLQ peek read
 * page by page. A source embeds one http_poller (its rd_source is `base`, base.impl the
 * source), describes itself once in a static http_poller_kind, and keeps only what it
 * polls and how it reads the answers.
 *
 * Sources read `base` and `settled`, and fill `peek` while a peek runs (req, at, got,
 * err); the rest is http_poller.c's. The poller allocates and frees the source.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source.h"

typedef struct http_poller http_poller;

typedef struct http_poller_kind {
    const char *name;                            /* the model's source name and ops kind */
    size_t size, at;                             /* the source's size, its http_poller's offset */
    double min_poll_s;                           /* never polls faster than this */
    int peek_max_pages;                          /* "more" stops here; 0: cannot peek */
    void (*poll)(http_poller *p);                /* a tick or a refresh: poll unless one runs */
    void (*start)(http_poller *p);               /* may be NULL: once, before the first poll */
    void (*peek_next)(http_poller *p);           /* read the next page or queue of the peek */
    /* may be NULL: asked when a peek starts before any whole poll; true ends it empty
     * (the source's state says why) instead of waiting for the first poll */
    bool (*peek_hopeless)(const http_poller *p);
    void (*clear)(http_poller *p);               /* frees what the source holds (not itself) */
} http_poller_kind;

/* One DLQ peek, asked for with peek_dlq(more): `pages` grows by one per "more". */
typedef struct http_peek {
    bool wanted, done;
    int pages;
    uint64_t req;                    /* in flight, 0 none */
    size_t at;                       /* the source's queue being read */
    rd_dlq_entry *got;               /* read so far: moved to the model by the end */
    size_t n_got;
    char err[256];                   /* "" none: the source's error when the peek ends */
} http_peek;

struct http_poller {
    rd_source base;
    rd_source_ops ops;               /* base.ops: the kind's name; no peek ops if it cannot */
    const http_poller_kind *kind;
    rd_event *tick;              /* every max(poll, kind->min_poll_s) */
    bool settled;                    /* answered or failed at least once */
    bool polled;                     /* one whole poll done (http_poller_round_done) */
    http_peek peek;
};

/* A new source (kind->size bytes, zeroed, its poller set up; the poll timer is armed by
 * the start op), or NULL when `setting` (what calls for it in the config) is empty or the
 * system has no HTTP client. */
void *http_poller_new(const rd_source_ctx *ctx, const char *setting,
                      const http_poller_kind *kind);

/* Tells the console the model changed. */
void http_poller_changed(http_poller *p);

/* The source's error: settled, and the console told. */
void http_poller_fail(http_poller *p, const char *msg);

/* The source answered at `now` (wall clock): settled. */
void http_poller_ok(http_poller *p, double now);

/* A whole poll ended (its results are in the model): settled, the console told, and a
 * peek that waited for the DLQs to be known goes on. */
void http_poller_round_done(http_poller *p);

/* A peek waiting for the first whole poll ends empty (the poll failed: the source's state
 * says why). */
void http_poller_peek_drop(http_poller *p);

/* The peek ends: what it read replaces this source's DLQ entries in the model, its error
 * (if any) is the source's, and the console is told. */
void http_poller_peek_end(http_poller *p);

/* For a source's clear hook: cancels the request in flight of each of the n records of
 * `size` bytes at `items` (its targets or queues), its id a uint64_t at offset req_at
 * (0: none). No callback comes afterwards. */
void http_poller_cancel_each(http_poller *p, const void *items, size_t n, size_t size,
                             size_t req_at);
