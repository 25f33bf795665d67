#pragma once
/* Between the CLI's action commands: `redrive retry|drain|...` (act.c), the store-wide
 * retry (act_select.c) and the batches (batch.c). */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../actions/actions.h"
#include "../actions/batchrun.h"
#include "../actions/journal.h"
#include "../core/guard.h"
#include "cli.h"

typedef struct act_opts {
    rd_opts opts;              /* the global options, with those given after the verb */
    rd_action kind;
    const char *reason;
    const char *idem_key;
    char **ids;
    size_t n;
    bool override_loop;        /* --override-loop: retry loop retries too (journaled) */
    bool force;                /* --force: send what the guards hold back (journaled) */
    size_t held;               /* targets the guards left out */
    /* the store-wide selection (act_select.c): retry --status / --group */
    const char *status, *filter, *group, *since, *rate, *limit;
    const char *concurrency;   /* --concurrency N: requests in flight (batchrun.h) */
    bool verbose;              /* --verbose: every target held back named, not counted */
    /* the DLQ's set (act_dlq.c): retry|resolve --dlq [--dlq-reason R] [--dlq-queue Q] */
    bool dlq;
    const char *dlq_reason, *dlq_queue;
    bool select_only;          /* --select-only: select, stage the record, report, send nothing */
    const char *canary, *canary_wait, *max_refail;   /* the batch's guards (batch_run.c) */
} act_opts;

/* batch_run.c: a batch's guards by its outcome (issue 35): the canary's size (0: none) and
 * wait, the share failing again above which the canary and the breaker pause it (0..1). */
typedef struct batch_guard {
    size_t canary;
    double canary_wait_s;
    double max_refail;
    bool verbose;              /* --verbose: each item held back at send time named */
} batch_guard;

/* Finding a Tasker step's task in the store: the sources run only for that. */
typedef struct lookup_run {
    rd_loop *base;
    rd_session *ss;
    bool started;
    bool looking;              /* in lookup_exec: a settled store ends its loop */
} lookup_run;

const rd_model *lookup_settle(lookup_run *l, const char *jump_id);
/* The first source that failed: true with "name: error" in why. */
bool lookup_failed(const rd_model *m, char *why, size_t cap);
/* A page of a store-wide selection came: false with why when a source failed or the store
 * did not answer in time (its sources not idle). */
bool lookup_page_ok(const rd_model *m, rd_session *ss, char *why, size_t cap);
/* The parent of execution id (a tasker step's task), read from the store; NULL with why. */
char *lookup_parent(lookup_run *l, const char *id, char *why, size_t cap);
void act_on_change(void *ud);
void act_on_password(rd_actor *a, const char *prompt, void *ud);
void err_clean(unsigned san, const char *prefix, const char *msg);
/* Before a confirmation (act.c): -1 to ask on the terminal, RD_EXIT_OK with --yes, or
 * RD_EXIT_USAGE having said that stdin is not a terminal. */
int act_must_ask(const act_opts *o);
bool read_line_tty(FILE *in, char *buf, size_t cap, bool echo);
/* One result line on stdout: "ID: CODE: MESSAGE (HTTP N, key K)", sanitized. */
void act_print_result(const rd_result *r, unsigned san);
/* What the guard knows of retry target x (act.c): its verdict read from the store as the
 * console reads it (why: the reason; x->fp = *fp allocated, x->attempt), its loop count
 * against recs. down (400 bytes, "" at first): the store failed once: no more waiting. */
void act_guard_read(lookup_run *l, rd_target *x, const rd_retry_record *recs, size_t nrec,
                    rd_guard_item *it, char *why, size_t cap, char **fp, char *down);
/* The same, judged from a row already read (the page a lookup brought). */
void act_guard_judge(const rd_execution *e, rd_target *x, const rd_retry_record *recs, size_t nrec,
                     rd_guard_item *it, char *why, size_t cap, char **fp);
/* The line for a target the guard holds back, with the option that sends it (stderr). */
void act_guard_say(const rd_guard_item *it, unsigned san);
rd_retry_record *act_loop_records(rd_session *ss, rd_journal_entry **je, size_t *nje,
                                  size_t *nrec, unsigned san);

/* act_select.c: retry --status S / --group FP across the store's pages, guarded, as a
 * resumable batch. The exit code. */
int act_select(act_opts *o, lookup_run *l, unsigned san);
/* act_dlq.c: retry --dlq (the entries' executions) or resolve --dlq (the entries) across
 * every page of the store's DLQ, guarded, as a resumable batch. The exit code. */
int act_dlq(act_opts *o, lookup_run *l, unsigned san);
/* act_select.c, shared with act_dlq.c: the parsed --rate and --limit (false: said why). */
bool act_select_limits(const act_opts *o, double *rate, long *limit);
/* What a store-wide selection (act_select.c, act_dlq.c) has read and frozen so far. */
enum { ACT_HELD_SHOWN = 10 };   /* the first held-back targets named; the rest counted */
enum { ACT_REASONS = 12 };  /* the held-back targets counted by reason, the rest "other" */
typedef struct act_reason {
    char why[80];              /* the reason without its figures: "budget exhausted" */
    size_t n;
} act_reason;
typedef struct act_tally {
    rd_batchrec *rec;          /* the targets to send, frozen as they are judged */
    struct rd_batchopen *open; /* the open batches' targets: left out (batchopen.h) */
    int concurrency;           /* --concurrency, else the system's batch_concurrency */
    double rate;               /* --rate, else the system's rate_limit */
    batch_guard guard;         /* --canary, --canary-wait, --max-refail over batch_* */
    act_reason reasons[ACT_REASONS + 1];
    size_t nreasons;
    rd_guard_counts c;
    size_t held_shown, pages, read;
    long limit;                /* --limit */
    bool capped, past;         /* the limit hit; the window's start reached */
} act_tally;
/* --select-only's report on stdout, one JSON object a line (the console reads it, see
 * act_select.c): {"KEY":VAL}; a held-back target (the first ACT_HELD_SHOWN: stderr's line,
 * or {"held":LINE} with --select-only); a page read; the end: the record staged and the
 * breakdown, the exit code. */
void act_report_str(const char *key, const char *val);
void act_report_held(const act_opts *o, act_tally *t, const rd_guard_item *it, unsigned san);
void act_report_page(const act_tally *t);
/* A selected target in an open batch (batchopen.h): true when it is left out (counted). */
bool act_tally_open(act_tally *t, const char *id, const char *parent);
/* After the selection: the held-back targets by reason ("598 superseded, 12 budget
 * exhausted") and the targets left out for an open batch, on stderr. */
void act_report_summary(const act_opts *o, const act_tally *t);
int act_report_end(const act_tally *t, const char *sel);
/* The selection's end (act_select.c, shared with act_dlq.c): the confirmation (--yes,
 * y/N, or the typed count above confirm_over), then the batch record committed and run;
 * the exit code (1 when nothing was to send or a selected target was held back). */
int act_tally_send(const act_opts *o, lookup_run *l, const act_tally *t, const rd_system_cfg *sys,
                   double rate, unsigned san);
/* A store-wide selection stopped before sending: {"error":WHY} to the console with
 * --select-only, else PREFIX WHY on stderr (sanitized). */
void act_report_error(const act_opts *o, const char *prefix, const char *why, unsigned san);
/* The actor may act and its profile routes kind; false having said why (as above). */
bool act_select_may(const act_opts *o, rd_actor *actor, rd_action kind, unsigned san);
/* The part every store-wide selection shares (act_select.c, act_dlq.c): the batch record
 * staged (its id to the console with --select-only), the pages read (read: false with
 * why), then the report with --select-only, else the selection said (say) and
 * act_tally_send. The exit code; t->rec, sel, recs and je freed. */
typedef struct act_stage {
    act_tally *t;
    rd_action kind;
    char *sel;                              /* the selection in words, the record's (taken) */
    rd_retry_record *recs;                  /* the loop breaker's records (taken) */
    rd_journal_entry *je;                   /* the journal they point into (taken) */
    size_t nje;
    bool (*read)(void *ud);                 /* every page; false with why */
    void (*say)(void *ud, const char *sel); /* what was selected, before the confirmation */
    void *ud;
    char *why;
    size_t whycap;
} act_stage;
int act_stage_run(const act_opts *o, lookup_run *l, const act_stage *st, double rate, unsigned san);
/* The password prompt of --select-only: none (it sends nothing, the console owns the
 * terminal). */
void act_no_password(rd_actor *a, const char *prompt, void *ud);
/* --canary, --canary-wait, --max-refail (NULL: not given) over the system's batch_canary,
 * batch_canary_wait, batch_max_refail; false having said why. */
bool batch_guard_parse(const char *canary, const char *wait, const char *refail,
                       const rd_system_cfg *sys, batch_guard *g);
/* Before a confirmation: "redrive: canary: 10 first, ..." and the breaker's rule (stderr). */
void act_guard_line(const batch_guard *g, size_t n);
/* batch_run.c: runs what is left of a batch record (progress on stderr, Ctrl-C stops
 * sending): the canary first when g asks, the breaker throughout; a guard that trips pauses
 * the batch (its reason in the record). The exit code (0 when every item sent is ok and
 * nothing paused it). */
int batch_exec(rd_session *ss, rd_loop *base, const rd_batch_info *b,
               const rd_batchrun_opts *o, const batch_guard *g, unsigned san);
/* batch_show.c: `redrive batch show ID [--json]`; the exit code (3 when the outcome could
 * not be read: the rest is still printed). */
int batch_show(const rd_opts *opts, const rd_batch_info *b, bool json, unsigned san);
/* batch_check.c: `redrive batch check ID ITEM...`, the console's guard at send time (JSON
 * lines on stdout); the exit code. */
int batch_check(const rd_opts *opts, const rd_batch_info *b, char **argv, size_t n);
/* "5" "2.5" "0.5" requests per second: false unless 0 < rate <= 1000. */
bool act_parse_rate(const char *s, double *out);
/* "8": requests in flight, false unless 1 <= N <= BATCHRUN_CONCURRENCY_MAX. */
bool act_parse_concurrency(const char *s, int *out);
#define ACT_CONCURRENCY_ERR "redrive: --concurrency: requests in flight at once, 1 to 64: "
/* "rate 50/s, 8 in flight, ETA 6m40s" for n items (before the confirmation). */
void act_pace_line(size_t n, double rate, int concurrency, char *out, size_t cap);
