#pragma once
/*
 * The guard at send time for a batch the console runs (issue 35; actions/batchrun.h's
 * check hook): each part's items are judged again by the store in a child `redrive batch
 * check ID ITEM...` (cli/batch_check.c), as the console selects with `retry --select-only`,
 * so its loop never waits on the store; the child's JSON lines answer the run from the loop
 * (batchrun_checked, or batchrun_check_failed when the store could not be read: nothing of
 * the part is sent). One check at a time: a run asks for its next part after the last.
 * Whatever runs a batch in the console (the whole-set retry, a resume from a batch list)
 * keeps one of these beside its rd_batchrun and forwards its check hook here.
 */
#include <stddef.h>

#include "../actions/batchrun.h"
#include "app.h"

typedef struct ui_batchcheck ui_batchcheck;

/* For the batch record id (committed: the child reads it). */
ui_batchcheck *batchcheck_new(ui_app *app, const char *batch_id);
/* The hook's work: items[0..n) of r asked about; r answered later from the loop. items stays
 * valid until then (batchrun.h). */
void batchcheck_ask(ui_batchcheck *c, rd_batchrun *r, const size_t *items, size_t n);
/* A check under way is cancelled (no answer); NULL ok. Free the run first or after: the
 * run is never called once this is freed. */
void batchcheck_free(ui_batchcheck *c);
