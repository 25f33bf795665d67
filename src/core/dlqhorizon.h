#pragma once
/*
 * When will the dead letters be lost? For each DLQ of a model, when the broker or the store
 * deletes its oldest message, where that is knowable (docs/sources.md "DLQ horizons"):
 *
 * - RabbitMQ: the message TTL (x-message-ttl or the policy's message-ttl, the lower) counted
 *   from when the oldest message entered the DLQ (its newest x-death time: a peek reads it),
 *   max-length with drop-head against the DLQ's inflow, x-expires (the queue itself, once
 *   unused). A TTL set per message (expiration) makes the horizon per message: unknown.
 * - SQS: MessageRetentionPeriod counted from the oldest message's first enqueue (its
 *   SentTimestamp: a standard queue keeps it when the message moves to the DLQ; a FIFO
 *   queue's retention restarts at the move, which SQS does not tell).
 * - A store's DLQ (Tasker's tasks_dlq, Alakai's exhausted records, pgmq): no retention rule.
 *
 * Pure: computed from the model at `now`; never a made-up number. A figure is exact
 * (in_s), an estimate from the current inflow (estimated), or only an upper bound
 * (within_s: "expires within 1h") when the age of the oldest message is not known.
 */
#include <stdbool.h>
#include <stddef.h>

#include "model.h"

enum { HORIZON_BASIS_LEN = 160 };

typedef struct rd_horizon {
    const char *queue;      /* the DLQ's name (the model's, borrowed) */
    const char *source;     /* its owner: "rabbitmq", "sqs", "postgresql", "redis" */
    long depth;             /* its messages, -1 unknown */
    double in_s;            /* seconds until the oldest dead letter is deleted, -1 unknown */
    bool estimated;         /* in_s is the current inflow's estimate (max-length drop-head) */
    double within_s;        /* in_s unknown: it is deleted within this many seconds, -1 none */
    char basis[HORIZON_BASIS_LEN];   /* what it rests on: "message-ttl 1h from x-death" (raw) */
    bool kept;              /* nothing deletes its dead letters: empty, kept until consumed or
                               resolved (no figure, and nothing unknown to say on screen) */
} rd_horizon;

/* One horizon per DLQ of m (its DLQ queues, then the stores' DLQ parts), allocated in *out
 * (free it; its strings are the model's); returns how many. */
size_t dlq_horizons(const rd_model *m, double now, rd_horizon **out);

/* The soonest of h[0..n): the smallest known figure (in_s, else within_s); NULL when no
 * DLQ has one. */
const rd_horizon *dlq_horizon_soonest(const rd_horizon *h, size_t n);

/* The figure that judges it (in_s, else within_s; -1 none) and whether it is a bound. */
double horizon_figure(const rd_horizon *h, bool *bound);

/* "oldest dead letter expires in 12m (message-ttl 1h from x-death)",
 * "oldest dead letter expires within 1h (message-ttl 1h: unknown without a peek)",
 * "empty", "no retention rule: kept until resolved" (raw: sanitize on output). */
void horizon_text(const rd_horizon *h, char *out, size_t cap);

/* {"queue", "source", "depth", "expires_in_s", "expires_within_s", "expires_estimated",
 * "expires_basis"} (null for what is unknown): the snapshot's dlq and fleet views. */
struct cJSON;
struct cJSON *horizon_json(const rd_horizon *h);

/* A duration as the broker states it, exact: "500ms", "90s", "10m", "1h", "4d", "1h30m". */
void horizon_dur(double seconds, char *out, size_t cap);
