#pragma once
/*
 * Error groups and the retry-loop breaker: pure functions over the model's executions.
 *
 * groups_build groups the failed executions by error fingerprint (fingerprint.h), with
 * count, first/last seen, the actions (task types) affected, how many are retry-eligible
 * and the trend: failures in the last `interval` seconds against those before it.
 *
 * loop_count tells whether retrying an execution by hand would repeat a manual retry
 * that already failed again with the same error: the journal's manual retries (action
 * "retry", code "ok", of this system) come in as rd_retry_record.
 */
#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* The trend compares the failures of the last 15 minutes with the earlier ones. */
#define GROUPS_INTERVAL_S 900.0

/* failed, error, timeout, abandoned, lost, dead (any case): a failure to group. */
bool status_failed(const char *status);
bool exec_failed(const rd_execution *e);   /* status_failed(e->status) */
/* When it failed: finished_at, else updated_at, else created_at (0 unknown). */
double exec_failed_at(const rd_execution *e);

typedef enum { TREND_NEW, TREND_RISING, TREND_STEADY, TREND_FALLING, TREND_QUIET } rd_trend;
const char *trend_name(rd_trend t);   /* "new" "rising" "steady" "falling" "quiet" */

typedef struct rd_action_count {
    const char *name;          /* borrowed from the executions ("-" when none) */
    size_t count;
} rd_action_count;

typedef struct rd_group {
    const char *fp;            /* borrowed: the fingerprint ("" = no error text) */
    const char *sample;        /* borrowed: the newest member's raw error */
    size_t count, eligible, loops;
    size_t recent, before;     /* failed within the last interval / earlier (or unknown) */
    double first_seen, last_seen;   /* 0 unknown */
    rd_trend trend;
    rd_action_count *actions;  /* most frequent first (owned array) */
    size_t n_actions;
    size_t *members;           /* indexes into the executions, newest failure first (owned) */
    size_t n_members;
} rd_group;

/* Groups execs[0..n) that failed; loops (may be NULL) = loop_count of each execution, so
 * a group says how many of its members would be loop retries. Sorted by count (desc),
 * then last seen (newest first), then fingerprint. Returns the number of groups; *out is
 * owned by the caller (groups_free), NULL when none. */
size_t groups_build(const rd_execution *execs, size_t n, const int *loops, double now,
                    double interval, rd_group **out);
void groups_free(rd_group *g, size_t n);

/* A store-wide grouping (storegroups.h): one distinct raw error of a window, tallied where
 * the data is. */
typedef struct rd_group_tally {
    size_t count, recent;      /* failures with it / those within the trend's interval */
    double first_seen, last_seen;   /* from the store's timestamps (0 unknown) */
} rd_group_tally;

/* Merges n prototypes (each with its fingerprint, error, action, status and eligibility)
 * and their tallies into groups by fingerprint: counts, eligible counts (a prototype's
 * verdict times its count), first/last seen, actions and trend add up; no members. Sorted
 * as groups_build sorts. Returns the number of groups; *out owned (groups_free). */
size_t groups_merge(const rd_execution *protos, const rd_group_tally *t, size_t n,
                    rd_group **out);
void groups_free_one(rd_group *g);   /* what one group owns (not g itself) */
/* The trend rule: before == 0 → new (quiet when recent == 0 too); recent == 0 → quiet;
 * recent > before → rising; recent * 2 < before → falling; else steady. */
rd_trend trend_of(size_t recent, size_t before);

/* One manual retry from the journal, accepted by the core. */
typedef struct rd_retry_record {
    const char *target;        /* as journaled: "id" or "parent/id" */
    const char *fp;            /* the execution's fingerprint then (NULL unknown) */
    int attempt;               /* its attempt then (<= 0 unknown) */
} rd_retry_record;

/* How many manual retries of e's failure already failed again with the same error: the
 * records that targeted e itself or an earlier member of its chain (retry_of, chain_root)
 * with e's fingerprint, while e is failed now in a later attempt than the retried one.
 * 0 = not a loop; k > 0: retrying again would be "manual retry #k+1 of the same failure". */
int loop_count(const rd_execution *e, const rd_retry_record *recs, size_t n);
