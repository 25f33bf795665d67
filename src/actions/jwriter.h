#pragma once
/*
 * The journal's writer (jwriter.c): journal lines appended off the event loop. One
 * thread writes the lines in the order they were queued, by group commit: every line
 * queued while the last sync ran is appended (each whole or not at all) and one
 * fdatasync covers them all (journal_write_lines); each completion runs on the loop, in
 * that order, only after the sync that covers its line. A window of 8 requests thus pays
 * a few syncs a round, not two per request (tests/actions/test_act_batch_groupsync.py). A
 * request that must be journaled ahead waits for its line's completion before it leaves,
 * so the loop never waits for the disk (an fdatasync can take milliseconds, far more on a
 * network home directory) and the write-ahead rule still holds.
 */
#include <stdbool.h>
#include <stdint.h>

#include "journal.h"
#include "../io/loop.h"

typedef struct rd_jwriter rd_jwriter;

/* Runs on the loop once the line is on disk (ok) or could not be written (why). */
typedef void (*rd_jwriter_done)(bool ok, const char *why, void *ud);

rd_jwriter *jwriter_new(rd_loop *base);
/* Every queued line written first (blocks), then the thread joined; no callback runs. */
void jwriter_free(rd_jwriter *w);
/* Queues rec's line (its time taken now) for path (NULL: the default journal). done may
 * be NULL. The ticket names it for jwriter_forget. */
uint64_t jwriter_append(rd_jwriter *w, const char *path, const rd_journal_rec *rec,
                        rd_jwriter_done done, void *ud);
/* The owner of a callback is gone: its line is still written, the callback never runs. */
void jwriter_forget(rd_jwriter *w, uint64_t ticket);
/* Blocks until every queued line is written (before a line written directly, in order). */
void jwriter_drain(rd_jwriter *w);
/* fdatasync calls and lines written so far (tests, the batch's figures). */
void jwriter_stats(rd_jwriter *w, uint64_t *syncs, uint64_t *lines);
/* Lines queued and not yet completed on the loop (tests, and a busy console's repaint). */
size_t jwriter_queued(const rd_jwriter *w);
