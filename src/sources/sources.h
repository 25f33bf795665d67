#pragma once
/*
 * The set of sources for one system: store (PostgreSQL or Redis), broker (RabbitMQ
 * management API), worker /health probes. They fill the model from the event loop
 * and call on_change after each update. Nothing here ever blocks.
 */
#include <stdbool.h>
#include <stddef.h>
#include "../core/config.h"
#include "../core/model.h"
#include "../core/profile.h"
#include "../io/loop.h"

typedef struct rd_http rd_http;
typedef struct rd_sources rd_sources;

typedef struct rd_exec_filter {
    char *status;            /* NULL = any */
    char *text;              /* substring of id/name/error; NULL = any */
    char *fingerprint;       /* exact fingerprint; NULL = any */
    char *worker;            /* the worker id executions record (exact); NULL = any */
    double window_s;         /* created in the last window_s seconds; 0 = any (a store's set) */
    bool by_status;          /* read by the status's own index (the profile's [query
                              * by_status]): a status or a group read as a set, newest first;
                              * a fingerprint filter always is */
} rd_exec_filter;

typedef void (*rd_change_cb)(void *ud);

rd_sources *sources_new(rd_loop *base, rd_http *http, const rd_system_cfg *cfg,
                        const rd_profile *prof, rd_model *model,
                        rd_change_cb on_change, void *ud);
void sources_free(rd_sources *s);
void sources_start(rd_sources *s);                 /* connect and begin polling */
void sources_refresh(rd_sources *s);               /* poll now */
/* Polls every factor times the configured interval (1 = as configured; the fleet slows
 * the systems not on screen). Takes effect on running sources at once. */
void sources_set_pace(rd_sources *s, double factor);
/* The poll interval in seconds at that factor (what sources_set_pace arms). */
double sources_interval(const rd_sources *s, double factor);
/* Executions list: filter (copied), first page. */
void sources_set_filter(rd_sources *s, const rd_exec_filter *f);
/* +1 next (older) page, -1 previous page, 0 first page (keyset paging). */
void sources_page(rd_sources *s, int dir);
void sources_jump(rd_sources *s, const char *id);  /* page that starts at id */
void sources_request_chain(rd_sources *s, const char *id);
/* One execution in full (model detail, core/detail.h), read once now: never on a poll.
 * Without a source that can, the model says the profile cannot. */
void sources_request_detail(rd_sources *s, const char *id);
/* The drain cockpit follows worker `id` (NULL: none): the store's source reads its running
 * executions on every poll; without a source that can, they are unknown. */
void sources_request_worker(rd_sources *s, const char *id);
/* Explicit DLQ peek (RabbitMQ requeues!): first page, or the next one with more=true. */
void sources_peek_dlq(rd_sources *s, bool more);
/* The error groups across the store in the last window_s seconds (docs/error-groups.md),
 * computed once where the data is and published to the model (model_set_sgroups); false
 * when no source can (the console then groups the loaded executions). */
bool sources_request_groups(rd_sources *s, double window_s, long cap);
/* A RabbitMQ peek reads at most this many messages a queue, of at most RD_RABBIT_PEEK_QUEUES
 * dead-letter queues: each get requeues them (redelivered). */
enum { RD_RABBIT_PEEK_MAX = 100, RD_RABBIT_PEEK_QUEUES = 10 };
/* A store's DLQ a page at a time (sources without pages are left alone): the page before
 * (-1) or after (+1); oldest first or newest first, searched for text (NULL: all), from the
 * first page. */
void sources_dlq_page(rd_sources *s, int dir);
void sources_dlq_order(rd_sources *s, bool oldest, const char *text);
/* Read-only (--read-only, read_only = true): sources_peek_dlq skips the broker's and
 * SQS's peeks, which change the messages, and says so in the model (dlq_peek_off). */
void sources_set_read_only(rd_sources *s, bool read_only);
/* The lists on screen (SPEC §9: only what is on screen, plus small aggregates, is
 * fetched): a source's polls leave out a list nobody looks at and fetch it at once when it
 * comes back on screen. RD_PANEL_ALL (the default) for snapshots, the fleet's background
 * systems and anything that reads the whole model. */
enum { RD_PANEL_EXECS = 1u << 0, RD_PANEL_WORKERS = 1u << 1, RD_PANEL_ALL = (1u << 2) - 1 };
void sources_set_interest(rd_sources *s, unsigned panels);
/* The profile the store reads with now: the schema-era variant its variant_query chose,
 * else the system's profile. Valid until the next callback from the loop. */
const rd_profile *sources_profile(const rd_sources *s);
/* Whether a store of this kind (a profile's `store`) can use url as the config file
 * writes it, before any source exists: a Redis store every URL of its list (redis_url.h,
 * no credentials in the file); true for a kind with nothing to check here. */
bool sources_check_url(const char *store, const char *url, char *why, size_t cap);
/* Every source has answered (ok or failed) at least once since start. */
bool sources_settled(const rd_sources *s);
/* Pending one-shot requests (chain, DLQ peek) have all answered. */
bool sources_idle(const rd_sources *s);

/* What became of retries (outread.c, issue 35): each item followed in the store to the
 * attempt its retry made, a page at a time (one query of the profile's [query outcome], or
 * one pipelined Redis round of Alakai's next attempt fields, a page; never one a item),
 * over a short synchronous connection of its own made at the first page (the CLI's; never
 * the console's loop). prof: the system's profile (its variant_query picks the era); c and
 * prof must outlive the reader. */
typedef struct rd_outread rd_outread;
typedef struct rd_outread_item {
    const char *id;
    const char *fp;          /* the fingerprint the batch froze for it, NULL unknown */
    int attempt;             /* the attempt retried, <= 0 unknown */
} rd_outread_item;
rd_outread *outread_new(const rd_system_cfg *c, const rd_profile *prof);
/* out[i] (core/outcome.h's rd_bout) set for every item the store answered for; n = 0 only
 * connects. false with why (the connection is made again next time). */
bool outread_page(rd_outread *r, const rd_outread_item *it, size_t n, unsigned char *out,
                  char *why, size_t cap);
/* The send-time guard (issue 35): each item's retry verdict now, by the rule the
 * executions list applies (PostgreSQL: the profile's [query recheck], the columns of
 * [query execution] for a page of ids, superseded included; Alakai: the task's newest
 * attempt, two pipelined rounds a page). An item the store does not hold is "no such
 * execution in the store" (not eligible). false with why when the store could not be
 * read (nothing judged: send nothing). */
bool outread_verdicts(rd_outread *r, const rd_outread_item *it, size_t n, rd_verdict *out,
                      char *why, size_t cap);
size_t outread_queries(const rd_outread *r);            /* queries (rounds) sent so far */
void outread_free(rd_outread *r);
