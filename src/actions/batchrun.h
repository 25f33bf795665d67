#pragma once
/*
 * Runs what is left of a batch record (batchrec.h): its items read from the record in
 * parts of BATCHRUN_PART, each part split into `concurrency` lanes, each lane an actor
 * batch (actions.h) journaled with the record's id and the items' numbers that sends one
 * request at a time: a window of at most `concurrency` requests in flight, all lanes on
 * one pace (rd_batch_opts.pace), never faster than the rate, paced across parts. Each item
 * still has its pending line on disk before its request leaves; an abort stops what has
 * not left; a kill leaves what was in flight unknown. Memory holds one part, never the
 * whole selection: a 20,000-item batch runs in the memory of a 256-item one.
 * An item with an outcome in the journal is never sent again. A run sends the items never
 * sent; with resend_unknown exactly the items that may have reached the core (unknown,
 * batchrec.h) instead, each with the key of its pending line (the core applies it once).
 */
/*
 * A run holds its record's lock (batchrec_lock) from start to free: a second run of the
 * same batch, here or in another process, is refused ("it is running"), and a listing says
 * "running". Between parts it reads the record's last control line: paused stops it
 * (batchrun_why says so), a rate or window set by another process is taken up.
 */
#include <stdbool.h>
#include <stddef.h>

#include "actions.h"
#include "batchrec.h"

enum { BATCHRUN_PART = 256, BATCHRUN_CONCURRENCY = 8, BATCHRUN_CONCURRENCY_MAX = 64 };

typedef struct rd_batchrun rd_batchrun;

typedef struct rd_batchrun_cbs {
    /* after each item's final result; item = its number in the record */
    void (*on_item)(rd_batchrun *r, size_t item, const rd_result *res, void *ud);
    /* once, when nothing is left to send (or after an abort); free r from here or later */
    void (*on_done)(rd_batchrun *r, void *ud);
    /* The guard again at send time (issue 35), optional: a part's targets t[0..n) (their
     * numbers in the record: items) before any of them leaves, from the loop. Answer
     * with batchrun_checked (now or later, from the loop; t and items stay valid until
     * then) or batchrun_check_failed. Not asked for a run with resend_unknown (those
     * items may have been applied: their keys decide); an answer for an item sent by
     * override is not heeded (the operator chose to send it). */
    void (*check)(rd_batchrun *r, const size_t *items, const rd_target *t, size_t n,
                  void *ud);
    /* optional: an item held back at send time, with its reason (--verbose) */
    void (*on_held)(rd_batchrun *r, size_t item, const rd_target *t, const char *why,
                    void *ud);
} rd_batchrun_cbs;

typedef struct rd_batchrun_opts {
    double rate;              /* requests per second; <= 0: the system's rate_limit */
    bool resend_unknown;      /* only the items that may have reached the core */
    int concurrency;          /* requests in flight at most; <= 0: BATCHRUN_CONCURRENCY,
                               * capped at BATCHRUN_CONCURRENCY_MAX */
    size_t limit;             /* send at most this many items of the run (the canary's);
                               * 0: all; the rest stays for the next run */
    bool locked;              /* the caller holds the record's lock (batchrec_lock) for the
                               * run and lets it go after (the CLI's, over a canary and the
                               * rest): not taken here */
} rd_batchrun_opts;

/* Starts (the first part is sent from the loop); NULL with why when refused or unreadable.
 * b is copied. */
rd_batchrun *batchrun_start(rd_actor *a, const rd_batch_info *b, const rd_batchrun_opts *o,
                            const rd_batchrun_cbs *cbs, void *ud, char *why, size_t whycap);
size_t batchrun_todo(const rd_batchrun *r);       /* items this run sends */
size_t batchrun_finished(const rd_batchrun *r);   /* of them, with a final result */
size_t batchrun_ok(const rd_batchrun *r);
size_t batchrun_held(const rd_batchrun *r);       /* unknown items left alone (not resend) */
int batchrun_concurrency(const rd_batchrun *r);
/* The rate it runs at now (requests per second: its own, else the system's). */
double batchrun_rate(const rd_batchrun *r);
int batchrun_lanes(const rd_batchrun *r);         /* requests that may be in flight now */
/* A new rate (> 0) at once and a new window (> 0) from the next part on (its lanes are
 * split per part); 0 leaves one as it is. The caller records it (batchrec_control). */
void batchrun_set_pace(rd_batchrun *r, double rate, int concurrency);
/* It stopped because its record says paused (between parts). */
bool batchrun_paused(const rd_batchrun *r);
/* Seconds left at the pace so far (the rate before the first answer); < 0 unknown. */
double batchrun_eta(const rd_batchrun *r);
/* Why the run stopped short ("" when it did not): a refusal of a part. */
const char *batchrun_why(const rd_batchrun *r);
/* The check's answer for the part it was given: why[i] NULL sends t[i], else holds it back
 * with that reason (the verdict's why), journaled as code "held" with the item's number, so
 * that no later run sends it either (batchrec.h: held). */
void batchrun_checked(rd_batchrun *r, const char *const *why);
/* The store could not be read: nothing of the part is sent, the run stops (why: "not
 * checked against the store: WHY"); the items stay for a resume. */
void batchrun_check_failed(rd_batchrun *r, const char *why);
size_t batchrun_guarded(const rd_batchrun *r);    /* items held back at send time */
/* Those items by reason (core/guard.h guard_held_reason), most first: "598 superseded, 12
 * budget exhausted"; "" when none. */
void batchrun_guard_line(const rd_batchrun *r, char *out, size_t cap);
/* Stops sending: what is in flight finishes; the rest stays for a resume. */
void batchrun_abort(rd_batchrun *r);
void batchrun_free(rd_batchrun *r);
