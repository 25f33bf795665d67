#pragma once
/*
 * The Redis source's sweep (redis_sweep.c): the task index and how it is kept fresh. A full
 * SCAN sweep on connect; the keys named by keyspace notifications refetched; a full resync
 * anyway every max(30 s, 300 × last sweep time) while notifications arrive (a safety net:
 * they are fire-and-forget), else every max(poll, 10 × last sweep time), so sweeping stays
 * below ~10 % duty. Each sweep is paced to `sweep_budget` of one server core (its cost
 * measured on the connection: redis_cost.h); the first one's progress goes to the model
 * (rd_progress) and its index so far is published now and then (partial). Also the
 * chain's key on request. Keys become fetch batches
 * (redis_fetch.h); the sweep counts them, reports through callbacks.
 */
#include <stdbool.h>
#include <stddef.h>

#include "redis_conn.h"
#include "redis_index.h"
#include "source.h"

typedef struct rs_sweep rs_sweep;

typedef struct rs_sweep_cbs {
    void (*swept)(void *ud);        /* a sweep is complete (the first one settles) */
    void (*changed)(void *ud);      /* notified keys fetched into the index */
    void (*chain_done)(void *ud);   /* the chain asked for is in the model */
    void (*partial)(void *ud);      /* the first sweep's index so far may be published */
    void (*progress)(void *ud);     /* the first sweep's progress moved (in the model) */
    void *ud;
} rs_sweep_cbs;

/* The SCAN MATCH / PSUBSCRIBE pattern of a prefix's keys: "{escaped prefix}:*" (freed by
 * the caller). */
char *rs_key_pattern(const char *prefix);
/* Seconds between two partial publishes of the first sweep's index of n tasks so far: each
 * is a walk of the whole index (~1 ms of CPU a 100,000 tasks, spread over the publish job's
 * steps, redis_view.c), so they grow rarer as it grows. */
double rs_partial_every(size_t n);

rs_sweep *rs_sweep_new(const rd_source_ctx *ctx, rs_conn *conn, const char *prefix,
                       const rs_sweep_cbs *cbs);
void rs_sweep_free(rs_sweep *sw);                /* after rs_conn_free (batches done) */
const rix *rs_sweep_index(const rs_sweep *sw);
bool rs_sweep_done_once(const rs_sweep *sw);     /* the index has been complete */
void rs_sweep_start(rs_sweep *sw);               /* a full sweep now (when not sweeping) */
/* Periodic: a full resync when due (notified: keyspace events arrive), else the notified
 * keys waiting. */
void rs_sweep_step(rs_sweep *sw, bool notified);
void rs_sweep_resync(rs_sweep *sw);              /* events may be lost: resync when next due */
void rs_sweep_notified(rs_sweep *sw, const char *key, size_t len);   /* a key changed */
void rs_sweep_stop(rs_sweep *sw);                /* the connection is being torn down */
void rs_sweep_chain(rs_sweep *sw, const char *id);  /* fetch one task's attempts */
/* The last sweep's pacing, for RD_REDIS_DEBUG and tests: flights held back by the budget,
 * and the share of a server core it used (as charged and measured). */
unsigned rs_sweep_held(const rs_sweep *sw);
