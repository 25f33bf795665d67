#pragma once
/*
 * The drain cockpit's rules, pure (no curses, no I/O): the history of what is left on a
 * worker, the ETA to empty from the observed drain rate, and the risks of draining it (the last consumer of a queue, no healthy worker left).
 */
#include <stdbool.h>
#include <stddef.h>

#include "model.h"

enum { DRAIN_HIST_MAX = 240, DRAIN_RISK_QUEUES = 4 };

/* What was left on the worker at time t: its queue depth and executions in flight
 * (-1 unknown). */
typedef struct rd_drain_sample {
    double t;
    long depth;
    long in_flight;
} rd_drain_sample;

/* Samples oldest first; the oldest are dropped when full. */
typedef struct rd_drain_hist {
    rd_drain_sample s[DRAIN_HIST_MAX];
    size_t n;
} rd_drain_hist;

/* Adds a sample. One at the same time as the newest replaces it; an older one is ignored
 * (a clock going back must not make a rate). */
void drain_hist_add(rd_drain_hist *h, double t, long depth, long in_flight);
/* depth + in flight, unknown parts as 0; -1 when both are unknown. */
long drain_left(const rd_drain_sample *s);

typedef enum {
    DRAIN_ETA_UNKNOWN,   /* too few samples, or nothing known */
    DRAIN_ETA_EMPTY,     /* nothing left */
    DRAIN_ETA_STALLED,   /* nothing went down over the window: it may never empty */
    DRAIN_ETA_OK,
} rd_drain_eta_kind;

typedef struct rd_drain_eta {
    rd_drain_eta_kind kind;
    long left;           /* -1 unknown */
    double rate;         /* items per second going down over the window (may be <= 0) */
    double eta_s;        /* DRAIN_ETA_OK: seconds to empty */
} rd_drain_eta;

/* Minimum span of samples before a rate is believed, and before a flat or growing
 * backlog is called stalled (a poll or two without progress is normal). */
#define DRAIN_MIN_SPAN_S 5.0
#define DRAIN_STALL_SPAN_S 30.0

/* The ETA from the samples of the last window_s seconds (the oldest in the window against
 * the newest). */
rd_drain_eta drain_eta(const rd_drain_hist *h, double window_s);

/* A sparkline of the last `width` samples' drain_left, scaled to their maximum: UTF-8
 * block characters, or ASCII " .:-=+*#" when ascii. Unknown samples are ' '. */
void drain_spark(const rd_drain_hist *h, int width, bool ascii, char *out, size_t cap);

/* When e should end at the latest: its start (created_at) + timeout_s; 0 unknown. */
double drain_expected_finish(const rd_execution *e, double timeout_s);

/* true when the queue is w's own: its name holds w's id or name as a whole token
 * ("worker.7.executions" is worker 7's, not worker 17's). */
bool drain_queue_of(const char *queue, const rd_worker *w);
/* The depth of w's own queues as the broker counts them (the sum over the non-DLQ queues
 * drain_queue_of matches); -1 when no known queue is w's. */
long drain_broker_depth(const rd_model *m, const rd_worker *w, const char **qname);
/* true when the system has a broker whose queues could be a worker's (a RabbitMQ or SQS
 * source is configured, or queues are known that the store does not report itself). */
bool drain_has_broker(const rd_model *m);
/* true when a and b can run the same work: they share a tag token, or either has none. */
bool drain_compatible(const rd_worker *a, const rd_worker *b);
/* true when w takes work: not unhealthy, status active/busy/running/idle or unknown. */
bool drain_available(const rd_worker *w);

typedef struct rd_drain_risk {
    const rd_queue *last_queue[DRAIN_RISK_QUEUES];  /* w's queues with one consumer (w) */
    size_t n_last_queue;
    size_t compatible;        /* other workers compatible with w */
    size_t compatible_ok;     /* ... of which available */
    bool no_other;            /* compatible == 0: w is the last worker for its work */
    bool others_unhealthy;    /* compatible > 0 but none available */
} rd_drain_risk;

/* What draining w would leave behind. */
void drain_risk(const rd_model *m, const rd_worker *w, rd_drain_risk *out);

/* The warnings before draining or deactivating w (drain_risk as text, raw: sanitize to
 * show), one call of emit per line, each starting "WARNING: "; the same lines in the
 * console's confirmation and in `redrive drain`. Returns how many. */
typedef void (*drain_line_fn)(const char *line, void *ud);
size_t drain_warnings(const rd_model *m, const rd_worker *w, drain_line_fn emit, void *ud);
