#pragma once
/*
 * A batch's figures (issue 35), one place for `redrive batch show`, the canary, the breaker
 * and the console's batch list: the record's and the journal's counts, its state, the last
 * run's pace, and what became of each retry the core accepted (core/outcome.h: read from
 * the store by session.h's outtrack).
 */
#include <stdbool.h>
#include <stddef.h>

#include "../core/outcome.h"
#include "batchrec.h"

/* The batch as `redrive batch show` prints it (and the console lists it). */
typedef struct rd_batch_summary {
    const char *id, *system, *action, *selection;   /* borrowed from the rd_batch_info */
    const char *state;       /* running | paused | open | done | abandoned */
    const char *pause_reason;   /* when paused, else NULL (borrowed) */
    size_t total, sent, ok, failed, unknown, held;
    double rate;             /* the last run's, 0 when none was recorded */
    int concurrency;         /* the same */
    rd_bout_counts outcome;
    bool outcome_read;       /* the store was read; false: outcome_why says why not */
    size_t outcome_queries;  /* the queries (Redis rounds) that read took: the caller's */
    const char *outcome_why;
} rd_batch_summary;

/* Fills s from b (its journal counts and record lines), running (a process sends it now:
 * rd_batch_info.running, the record's lock) and the items' outcomes (outs: b->total of them, or NULL when the
 * store could not be read, why then in s->outcome_why). */
void batch_summary_make(const rd_batch_info *b, bool running, const unsigned char *outs,
                        const char *why, rd_batch_summary *s);

/* The canary's and the breaker's words for c against max (0..1): "3 of 5 finished retries
 * failed again in the same error group (60% > 50%): <bout_line>" (the CLI and the
 * console say it alike, and a paused line records it). */
void batch_share_line(const rd_bout_counts *c, double max, char *out, size_t cap);
