#pragma once
/*
 * Never double-booked (issue 35): the targets of a system's open batches (batchrec.h)
 * that are not done yet (never sent, or unknown: a resume may still send them), so that
 * a new selection leaves them out and names the batch that holds them
 * ("412 of these are in open batch f188…: left out"). Read once, before a selection,
 * from the records and one pass over the journal per open batch.
 */
#include <stdbool.h>
#include <stddef.h>

typedef struct rd_batchopen rd_batchopen;

/* The open batches of `system` in journal's state directory (NULL: the default), except
 * `except` (the record being made; NULL none). Never NULL: a record or the journal that
 * cannot be read leaves that batch out (why says it, "" otherwise). */
rd_batchopen *batchopen_load(const char *journal, const char *system, const char *except,
                             char *why, size_t whycap);
/* The id of the open batch holding target (id, parent), NULL when none; each hit is
 * counted for batchopen_say. */
const char *batchopen_take(rd_batchopen *o, const char *id, const char *parent);
size_t batchopen_left_out(const rd_batchopen *o);       /* hits so far, every batch */
/* The k-th batch that had hits: its id and count; false past the last. */
bool batchopen_hit(const rd_batchopen *o, size_t k, const char **id, size_t *n);
/* "412 of these are in open batch f188…: left out" for the k-th (cap bytes). */
void batchopen_line(const char *id, size_t n, char *out, size_t cap);
size_t batchopen_items(const rd_batchopen *o);          /* targets held open in all */
void batchopen_free(rd_batchopen *o);
