#pragma once
/*
 * Work off the console's loop (bgjob.c): one thread runs the jobs queued, in order (reading
 * batch records and the journal for :batches, appending a batch's control line: files that
 * may be large or on a slow disk), and each job's `done` runs back on the loop, woken
 * through a pipe. Without a loop (headless screens) a job runs at once, in the caller.
 */
#include <stdbool.h>

#include "../io/loop.h"

typedef struct ui_bgjobs ui_bgjobs;
typedef void (*ui_bgjob_run)(void *arg);                 /* on the thread */
typedef void (*ui_bgjob_done)(void *arg, bool cancelled); /* on the loop; frees arg */

ui_bgjobs *bgjobs_new(rd_loop *base);   /* base NULL: jobs run in the caller */
/* Runs every job queued first (a control line queued is written), then each is
 * done(arg, true) here: the loop no longer takes their results. */
void bgjobs_free(ui_bgjobs *j);
void bgjobs_queue(ui_bgjobs *j, ui_bgjob_run run, ui_bgjob_done done, void *arg);
bool bgjobs_busy(ui_bgjobs *j);
