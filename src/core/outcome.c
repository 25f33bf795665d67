/* What became of a retry, counted (outcome.h). */
#include "outcome.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint.h"

static const char *const NAMES[] = {
    [BOUT_NONE] = "none", [BOUT_UNREAD] = "unread", [BOUT_RUNNING] = "running",
    [BOUT_SUCCEEDED] = "succeeded", [BOUT_FAILED_AGAIN] = "failed_again",
    [BOUT_NEW_ERROR] = "new_error",
};

const char *bout_name(rd_bout o)
{
    return (size_t)o < sizeof NAMES / sizeof *NAMES ? NAMES[o] : "none";
}

bool bout_final(rd_bout o)
{
    return o == BOUT_SUCCEEDED || o == BOUT_FAILED_AGAIN || o == BOUT_NEW_ERROR;
}

rd_bout bout_classify(const rd_bout_row *row, const char *fp)
{
    if (!row || !row->outcome)
        return BOUT_UNREAD;
    if (!strcmp(row->outcome, "succeeded"))
        return BOUT_SUCCEEDED;
    if (strcmp(row->outcome, "failed") != 0)
        return BOUT_RUNNING;
    char now[1024], was[1024];
    fingerprint_make(row->error, now, sizeof now);
    if (fp && *fp)
        snprintf(was, sizeof was, "%s", fp);
    else if (row->orig_error && *row->orig_error)
        fingerprint_make(row->orig_error, was, sizeof was);
    else
        return BOUT_NEW_ERROR;      /* the first group is not known: not "the same" */
    return strcmp(now, was) == 0 ? BOUT_FAILED_AGAIN : BOUT_NEW_ERROR;
}

void bout_count(rd_bout_counts *c, rd_bout o)
{
    switch (o) {
    case BOUT_SUCCEEDED: c->succeeded++; break;
    case BOUT_FAILED_AGAIN: c->failed_again++; break;
    case BOUT_NEW_ERROR: c->new_error++; break;
    case BOUT_RUNNING: c->running++; break;
    case BOUT_UNREAD: c->unread++; break;
    case BOUT_NONE: break;
    }
}

size_t bout_finished(const rd_bout_counts *c)
{
    return c->succeeded + c->failed_again + c->new_error;
}

double bout_refail_share(const rd_bout_counts *c)
{
    size_t in = bout_finished(c);
    return in ? (double)c->failed_again / (double)in : 0;
}

rd_bout_verdict bout_verdict(const rd_bout_counts *c, double max_refail, size_t min_in)
{
    size_t in = bout_finished(c);
    if (in == 0 || in < min_in)
        return BOUT_GO;
    return bout_refail_share(c) > max_refail + 1e-9 ? BOUT_TRIP : BOUT_GO;
}

void bout_line(const rd_bout_counts *c, char *out, size_t cap)
{
    snprintf(out, cap, "%zu succeeded, %zu failed again, %zu new error%s, %zu running, "
             "%zu not yet in the store", c->succeeded, c->failed_again, c->new_error,
             c->new_error == 1 ? "" : "s", c->running, c->unread);
}
