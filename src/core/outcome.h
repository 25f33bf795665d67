#pragma once
/*
 * What became of one retry (issue 35), read from the store by the sources (sources.h:
 * outread) and counted by the batches (actions/batchout.h):
 *
 *   succeeded     the retry's attempt finished well
 *   failed_again  it failed in the same error group as the attempt retried (the group's
 *                 fingerprint, fingerprint.h, equal to the one the batch record froze)
 *   new_error     it failed with another error (or one whose first group is not known)
 *   running       not finished yet (queued, running, waiting to retry)
 *   unread        accepted by the core, but the store has not (yet) shown its attempt
 *
 * Only items the core accepted have an outcome; the others have none.
 */
#include <stdbool.h>
#include <stddef.h>

typedef enum {
    BOUT_NONE,           /* not accepted by the core (not sent, failed, unknown) */
    BOUT_UNREAD,
    BOUT_RUNNING,
    BOUT_SUCCEEDED,
    BOUT_FAILED_AGAIN,
    BOUT_NEW_ERROR,
} rd_bout;

/* "none" "unread" "running" "succeeded" "failed_again" "new_error" */
const char *bout_name(rd_bout o);
/* Finished: succeeded, failed again or new error. */
bool bout_final(rd_bout o);

/* What the store says of one retry's attempt, in the profile's words made standard
 * (profiles' [query outcome] column `outcome`, Alakai's outcome_* settings): "succeeded",
 * "failed", "running", or NULL when the store has no next attempt for it. */
typedef struct rd_bout_row {
    const char *outcome;
    const char *error;       /* the attempt's error text when it failed */
    const char *orig_error;  /* the retried attempt's error (a store that keeps it), or NULL */
} rd_bout_row;

/* The item's outcome from its row; fp: the fingerprint the record froze for it (NULL: the
 * store's orig_error is fingerprinted instead). */
rd_bout bout_classify(const rd_bout_row *row, const char *fp);

typedef struct rd_bout_counts {
    size_t succeeded, failed_again, new_error, running, unread;
} rd_bout_counts;

void bout_count(rd_bout_counts *c, rd_bout o);
size_t bout_finished(const rd_bout_counts *c);   /* succeeded + failed_again + new_error */
/* failed_again / finished; 0 when none finished. */
double bout_refail_share(const rd_bout_counts *c);

/* The breaker's and the canary's rule: BOUT_TRIP when at least `min_in` outcomes are in and
 * the share failing again is above max_refail (0..1). */
typedef enum { BOUT_GO, BOUT_TRIP } rd_bout_verdict;
rd_bout_verdict bout_verdict(const rd_bout_counts *c, double max_refail, size_t min_in);
enum { BOUT_BREAKER_MIN = 20 };
/* "12 succeeded, 30 failed again, 1 new error, 4 running, 0 unread" */
void bout_line(const rd_bout_counts *c, char *out, size_t cap);
