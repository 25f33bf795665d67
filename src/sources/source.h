#pragma once
/* Internal interface between the source set (sources.c) and each kind of source. */
#include <stdbool.h>
#include "sources.h"
#include "../io/loop.h"


typedef struct rd_source_ctx {
    rd_loop *base;
    rd_http *http;
    const rd_system_cfg *cfg;
    const rd_profile *prof;
    rd_model *model;
    rd_change_cb on_change;
    void *ud;
} rd_source_ctx;

typedef struct rd_source rd_source;
typedef struct rd_source_ops {
    const char *kind;                                  /* "postgresql", "redis", ... */
    void (*start)(rd_source *s);
    void (*refresh)(rd_source *s);
    void (*set_filter)(rd_source *s, const rd_exec_filter *f);  /* may be NULL */
    void (*page)(rd_source *s, int dir);                         /* may be NULL */
    void (*jump)(rd_source *s, const char *id);                  /* may be NULL */
    void (*chain)(rd_source *s, const char *id);                 /* may be NULL */
    void (*detail)(rd_source *s, const char *id);                /* may be NULL */
    /* the drain cockpit's worker (NULL: none): read its running executions on every poll
     * (model_set_running); may be NULL */
    void (*worker)(rd_source *s, const char *id);
    void (*peek_dlq)(rd_source *s, bool more);                   /* may be NULL */
    /* the error groups of the store's last window_s seconds, at most cap failures read
     * (model_set_sgroups); may be NULL: the console groups the loaded page */
    void (*groups)(rd_source *s, double window_s, long cap);
    /* a store's DLQ, read a page at a time (may be NULL: a peek only grows): the page
     * before (-1) or after (+1); the order (oldest first) and a text searched, from the
     * first page */
    void (*dlq_page)(rd_source *s, int dir);
    void (*dlq_order)(rd_source *s, bool oldest, const char *text);
    bool (*settled)(const rd_source *s);
    bool (*idle)(const rd_source *s);
    void (*free)(rd_source *s);
    /* the profile in use now (a schema-era variant of ctx.prof); may be NULL = ctx.prof */
    const rd_profile *(*profile)(const rd_source *s);
    void (*set_poll)(rd_source *s, double every);                /* may be NULL */
    void (*set_interest)(rd_source *s, unsigned panels);         /* may be NULL: all */
} rd_source_ops;

struct rd_source {
    const rd_source_ops *ops;
    rd_source_ctx ctx;
    void *impl;
};

/* Constructors: NULL when the config does not call for this source. */
rd_source *pg_source_new(const rd_source_ctx *ctx);
rd_source *redis_source_new(const rd_source_ctx *ctx);
rd_source *rabbit_source_new(const rd_source_ctx *ctx);
rd_source *probe_source_new(const rd_source_ctx *ctx);   /* tasker worker /health */
rd_source *sqs_source_new(const rd_source_ctx *ctx);     /* alakai SQS queue + DLQ */

/* For set_poll: a running poll timer fires again `every` seconds from now (a timer not
 * pending is left alone: the source is between a poll and its answer). */
void source_rearm(rd_event *ev, double every);
