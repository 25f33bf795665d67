#pragma once
/*
 * Resumable batches: the record of a store-wide action's frozen selection, one 0600 file
 * STATE/batches/ID.batch beside the journal (its state directory, journal.h). JSON lines:
 *
 *   {"batch":ID,"system":S,"store":ST,"core":URL,"action":"retry","reason":R,
 *    "selection":TEXT,"created":T,"operator":O}  the header (store and core: what the
 *                                               system pointed at, session_store_identity;
 *                                               absent in records made before them)
 *   ["ID","PARENT"|null,"FP"|null,ATTEMPT,"OVERRIDE"|null]   one line per item, in order
 *   {"total":N}                                 the end: the record is complete
 *   {"abandoned":T,"operator":O}                `redrive batch abandon` (appended)
 *   {"control":"paused"|"open","at":T,"operator":O,"rate":N,"concurrency":N,"reason":R}
 *                                               a run started, a pause (the canary's, the
 *                                               breaker's or an operator's: reason
 *                                               optional), a resume, a new rate or window
 *                                               (appended; batchctl.c; the last one says
 *                                               the state: rate and concurrency absent =
 *                                               the system's own)
 *
 * Written as ID.batch.tmp, synced and renamed into place by batchrec_commit: a record that
 * exists is complete. The abandon line is appended so that a failed write leaves nothing
 * (lineappend.h). How far a batch got is never written here: the journal's lines of
 * its items (batch id + "item", the item's number) say it, written ahead of each request
 * (journal.h). An item is
 *   - none: no line (never sent, or aborted before sending): a resume sends it;
 *   - unknown: a "pending" line without an outcome, or an outcome "unknown" /
 *     "maybe_applied": it may have reached the core; a resume sends it only when asked
 *     (--resend-unknown), with the key of its pending line (the core applies it once);
 *     also an item whose state cannot be read: a damaged journal line that names the
 *     batch (a line cut by a crash; the line glued to a fragment is read whole,
 *     journal_piece_end) and gives the item's number or, failing that, its target; one
 *     that gives neither makes every item not yet sent unknown (any of them may be it);
 *   - ok / failed: an outcome: never sent again;
 *   - held: the guard at send time found it no longer eligible in the store (a line with
 *     code "held" and the reason, no request made, batchrun.h): never sent again.
 * Reading is streamed: memory grows with one byte per item, not with the batch's lines.
 *
 * A record is a file anyone with our uid could have edited: nothing in it is trusted as
 * written. The header's id must be its file's, its action a known one; its strings are
 * sanitized when read; the end line's total must be the number of item lines; an item's
 * fields are checked before anything is sent. A record that breaks a rule is damaged:
 * named with the line and the rule (batch list warns and goes on, resume refuses it),
 * never half used.
 */
#include <stdbool.h>
#include <stddef.h>

#include "actions.h"

typedef enum { BITEM_NONE, BITEM_OK, BITEM_FAILED, BITEM_UNKNOWN, BITEM_HELD } rd_bitem;

typedef struct rd_batch_info {
    char id[17];
    char *system, *action, *reason, *selection, *created, *operator_;
    char *store, *core;        /* what it is bound to; NULL in an older record */
    char *path;                /* the record file */
    size_t total;
    size_t ok, failed, unknown;   /* from the journal; done = ok + failed + unknown + held */
    size_t held;               /* held back at send time: no longer eligible (never sent) */
    bool abandoned;
    /* its last control line: paused (a resume asked for) and why (sanitized; NULL when
     * not paused or none was given), the rate and window it runs at (0: the system's
     * own); running: a run holds its lock (batchrec_lock) now */
    bool paused, running;
    char *pause_reason;
    double rate;
    int concurrency;
    /* the record cannot be used: "batch record PATH is damaged: line N: ..." (raw: the
     * path is the state directory's); only id (when its file name is one) and path are
     * set besides. NULL when sound. */
    char *damaged;
} rd_batch_info;

/* An unknown item's Idempotency-Key (its latest pending line's). */
typedef struct rd_bitem_key {
    size_t item;
    char key[33];
} rd_bitem_key;

/* ---- writing a record ---- */
typedef struct rd_batchrec rd_batchrec;
/* A new record (new id) for journal `journal` (NULL: the default journal). NULL with why. */
rd_batchrec *batchrec_create(const char *journal, const char *system, const char *operator_,
                             rd_action kind, const char *reason, const char *selection,
                             char *why, size_t whycap);
/* The same, bound to a store and a core (a resume elsewhere is refused, cli/batch.c). */
typedef struct rd_batch_bound {
    const char *store, *core;  /* NULL: not known */
} rd_batch_bound;
rd_batchrec *batchrec_create_bound(const char *journal, const char *system,
                                   const rd_batch_bound *bound, const char *operator_,
                                   rd_action kind, const char *reason, const char *selection,
                                   char *why, size_t whycap);
bool batchrec_add(rd_batchrec *r, const rd_target *t, char *why, size_t whycap);
size_t batchrec_count(const rd_batchrec *r);
const char *batchrec_id(const rd_batchrec *r);
/* Ends, syncs and renames the record into place; false with why. */
bool batchrec_commit(rd_batchrec *r, char *why, size_t whycap);
/* A record staged, not committed (the console's whole-set retry: a child process selects,
 * the operator confirms): ended and synced, left as ID.batch.tmp, which no list shows.
 * batchrec_adopt renames it into place (confirmed: it is a batch from then on);
 * batchrec_discard removes it (cancelled). */
bool batchrec_stage(rd_batchrec *r, char *why, size_t whycap);
bool batchrec_adopt(const char *journal, const char *id, char *why, size_t whycap);
void batchrec_discard(const char *journal, const char *id);
/* Frees r; a record neither committed nor staged is removed. */
void batchrec_free(rd_batchrec *r);

/* ---- reading ---- */
/* Every record of this journal's state directory, oldest first, with its counts from the
 * journal; a damaged one with its damage (b->damaged) and nothing else. */
bool batchrec_list(const char *journal, rd_batch_info **out, size_t *n, char *why,
                   size_t whycap);
/* The id of a batch of `system` that a run holds now (batchrec_lock; this or another
 * process), other than `except` (NULL none): true with id set. At most one batch runs per
 * system. Cheap: a record is read only when it is locked. */
bool batchrec_running_on(const char *journal, const char *system, const char *except, char id[17]);
/* One record by id (its counts too); false with why ("no batch ID", or the damage), out
 * then empty. */
bool batchrec_find(const char *journal, const char *id, rd_batch_info *out, char *why,
                   size_t whycap);
void batch_info_clear(rd_batch_info *b);
void batch_infos_free(rd_batch_info *v, size_t n);
/* "running" (a run holds it), "paused", "open" (items left or unknown), "done",
 * "abandoned", "damaged". */
const char *batch_info_state(const rd_batch_info *b);
/* Items left or unknown and not abandoned: running, paused or open. */
bool batch_info_open(const rd_batch_info *b);
/* Each item's state (rd_bitem, one byte each, b->total of them) and the keys of the
 * unknown ones, from one pass over the journal. Allocated. */
bool batchrec_states(const char *journal, const rd_batch_info *b, unsigned char **states,
                     rd_bitem_key **keys, size_t *nkeys, char *why, size_t whycap);
/* Appends the abandon line: the batch is no longer offered nor resumable. */
bool batchrec_abandon(const rd_batch_info *b, const char *operator_, char *why, size_t whycap);

/* ---- controls (batchctl.c) ---- */
typedef struct rd_batch_ctl {
    bool paused;
    double rate;               /* requests per second, 0: the system's rate_limit */
    int concurrency;           /* 0: the system's batch_concurrency */
    const char *reason;        /* a pause's why (the canary's, the breaker's), or NULL */
} rd_batch_ctl;
/* Appends a control line (synced); false with why. */
bool batchrec_control(const rd_batch_info *b, const rd_batch_ctl *c, const char *operator_,
                      char *why, size_t whycap);
/* The last line of the record at path when it is a control line (true, out set; out's
 * reason is not read); abandoned when it is the abandon line. Reads the file's tail only. */
bool batchrec_control_now(const char *path, rd_batch_ctl *out, bool *abandoned);
/* A run's lock on the record: an OFD lock held by the process that sends the batch (the
 * CLI's batch_exec, or batchrun.c for the console's runs) for as long as it runs, let go
 * with its fd or its death. The fd, -1 with why when another run holds it ("it is
 * running ...") or the file cannot be opened. The one running lock: batch list/show and
 * :batches say "running" from it (batchrec_find sets rd_batch_info.running). */
int batchrec_lock(const char *path, char *why, size_t whycap);
bool batchrec_locked(const char *path);   /* a run holds it now (any process) */

/* Every item line of b's record readable (batchrd_next) and as many as its total; false
 * with the damage. A resume checks this before it sends anything. */
bool batchrec_check_items(const rd_batch_info *b, char *why, size_t whycap);

/* The items of a record in order, streamed. */
typedef struct rd_batchrd rd_batchrd;
rd_batchrd *batchrd_open(const char *path, char *why, size_t whycap);
/* The next item: its number and target (strings valid until the next call); false at the
 * end, or at an item line that cannot be read (an id that is not a string without
 * control characters, an attempt that is not a count): batchrd_damage says which. */
bool batchrd_next(rd_batchrd *r, size_t *item, rd_target *t);
/* "" when the record read so far is sound, else "line N: item K: ...". */
const char *batchrd_damage(const rd_batchrd *r);
void batchrd_close(rd_batchrd *r);
