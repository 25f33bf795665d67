#pragma once
/*
 * The console's running batches (batchruns.c): each resumable batch this console sends
 * (actions/batchrun.h), owned here and not by the dialog that started it, so a batch goes
 * on while the operator uses other views and systems (issue 35). At most one runs per
 * system: a second is refused naming the one running. A run is told apart by its batch id;
 * once done it stays listed (its counts) until the console ends. Freeing the set frees
 * every run: what is in flight is journaled unknown, the rest stays for a resume.
 */
#include <stdbool.h>
#include <stddef.h>

#include "../actions/batchrun.h"

typedef struct ui_runs ui_runs;
typedef struct ui_run ui_run;
typedef struct ui_canary ui_canary;

typedef struct ui_runs_cbs {
    /* after each item's result, from the loop */
    void (*on_item)(void *ud, ui_run *r, const rd_result *res);
    /* once, when nothing more will be sent (done, aborted, paused or stopped short) */
    void (*on_done)(void *ud, ui_run *r);
    /* the guard at send time of a retry batch's parts (batchcheck.h), NULL: none */
    struct ui_batchcheck *(*check_new)(void *ud, const char *batch_id);
} ui_runs_cbs;

enum { RUN_FAILS = 4 };

/* What the console shows of a run (runs_info). */
typedef struct ui_run_info {
    char id[17];
    const char *system;        /* the config's name (borrowed) */
    rd_action kind;
    size_t todo, finished, ok, held;
    /* the record's total and its counts when this run began (the journal then) */
    size_t total, base_ok, base_failed, base_unknown;
    bool rate_own;             /* its own rate (the record's or +/-), else the system's */
    double rate;               /* requests per second now */
    int concurrency;           /* the window asked (from the next part when just changed) */
    int lanes;                 /* requests that may be in flight now */
    bool running, paused, aborted;
    double eta;                /* seconds, < 0 unknown */
    double started;            /* clock_wall() */
    const char *why;           /* why it stopped short, "" */
    const char *pause_reason;  /* the canary's or the breaker's pause, "" */
    bool waiting;              /* the canary's outcome awaited: nothing in flight */
    const char *fails[RUN_FAILS];   /* the newest failures, newest first (NULL past them) */
    size_t guarded;            /* held back at send time, no longer eligible in the store */
    const char *guard_line;    /* those by reason ("4 superseded, 2 now completed"), "" */
} ui_run_info;

ui_runs *runs_new(const ui_runs_cbs *cbs, void *ud);
void runs_free(ui_runs *rs);
/* Starts b on actor a (system's); NULL with why: another batch runs on that system, or
 * batchrun_start refused. */
ui_run *runs_start(ui_runs *rs, rd_actor *a, const char *system, const rd_batch_info *b,
                   const rd_batchrun_opts *o, char *why, size_t whycap);
/* As runs_start, with the confirmation's canary and breaker (dlg_canary.h; may be NULL):
 * the canary's part sent first (its size, opts.limit), its outcome awaited with the
 * record's lock kept, then the rest or a pause; the breaker through the rest. A pause
 * writes the paused control line with its reason (batchrec_control), as the CLI's does.
 * On success b's fields and can are taken (b left zeroed). */
ui_run *runs_start_guarded(ui_runs *rs, rd_actor *a, const char *system, rd_batch_info *b,
                           const rd_batchrun_opts *o, ui_canary *can, char *why, size_t whycap);
ui_run *runs_find(ui_runs *rs, const char *id);
ui_run *runs_running_on(ui_runs *rs, const char *system);   /* NULL: none */
size_t runs_count(const ui_runs *rs);
ui_run *runs_at(ui_runs *rs, size_t i);
size_t runs_running(const ui_runs *rs);                     /* still sending */
void runs_info(const ui_run *r, ui_run_info *out);
const char *run_id(const ui_run *r);
bool run_running(const ui_run *r);
bool run_waiting(const ui_run *r);            /* the canary's outcome awaited */
ui_canary *run_canary(const ui_run *r);       /* its canary and breaker, NULL: none */
/* Stops sending (what is in flight finishes); paused: the console recorded a pause. */
void run_stop(ui_run *r, bool paused);
void run_set_pace(ui_run *r, double rate, int concurrency);
/* The system's session closes (its actor goes): its runs are freed (in flight: unknown). */
void runs_drop_system(ui_runs *rs, const char *system);
