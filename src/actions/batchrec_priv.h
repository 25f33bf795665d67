#pragma once
/* Between batchrec.c (the records) and batchscan.c (their items' states, from the journal). */
#include "batchrec.h"

/* The counts of v[0..n) from one pass over the journal (a damaged record is left as it
 * is). false with why when the journal cannot be read. */
bool batchscan_count(const char *journal, rd_batch_info *v, size_t n, char *why,
                     size_t whycap);

/* path opened read-only (never through a link) as a regular file of ours (batchrd.c). */
#include <stdio.h>
FILE *batchrec_open_private(const char *path, const char *what, char *why, size_t whycap);

/* A control line (batchctl.c) read into b: true when o is one; false also when its
 * "control" is there but the line cannot be read (the record is then damaged). */
#include <cjson/cJSON.h>
bool batchctl_line(rd_batch_info *b, const cJSON *o);

/* o (taken) appended to b's record as one line and synced; false with why (batchctl.c). */
bool batchrec_append(const rd_batch_info *b, cJSON *o, char *why, size_t whycap);
