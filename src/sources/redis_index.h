#pragma once
/*
 * The Alakai task index: one compact summary per task hash (~35 bytes: a 24-byte entry, the
 * id in compact form, a hash slot), never the records themselves, so 1,000,000 tasks fit in
 * ~35 MB. Texts that repeat are held once: the error (with the code, the task name and the
 * field count) is interned per distinct text, an id's digit-free prefix per distinct prefix
 * (redis_taskid.h). Built by SCAN sweeps and keyspace notifications; queried for pages
 * (newest first by dispatchedAt), counts and the DLQ view. Pure data structure (no I/O).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { RIX_ERROR_CAP = 120 };

typedef struct rix rix;

typedef struct rix_task {   /* 24 bytes */
    double dispatched_at;   /* newest attempt, 0 unknown */
    uint32_t resolved_s;    /* resolvedAt, whole epoch seconds, 0 unknown */
    uint32_t id;            /* the compact id's offset in the index's arena: rix_id */
    uint32_t detail;        /* interned code, task name, field count and error: rix_error,
                             * rix_code_name, rix_task_name, rix_fp */
    uint16_t attempt;       /* newest attempt number, 0 unknown */
    uint8_t status;         /* interned, see rix_status_name */
    uint8_t flags;          /* RD_EXEC_OVERLAP/MALFORMED/OVERSIZED */
} rix_task;

typedef struct rix_idbuf { char s[256]; } rix_idbuf;   /* an id written out */

typedef struct rix_sum {    /* a fetch result for one task */
    const char *status;     /* lower-case; NULL → "unknown" */
    int attempt;            /* newest attempt, <= 0 unknown */
    int nfields;
    const char *code;       /* NULL none */
    const char *name;       /* NULL none */
    const char *error;      /* NULL none */
    double dispatched_at, resolved_at;
    unsigned flags;
} rix_sum;

rix *rix_new(size_t max_tasks);
void rix_free(rix *ix);
size_t rix_size(const rix *ix);
const rix_task *rix_at(const rix *ix, size_t i);
bool rix_overflow(const rix *ix);        /* some tasks were not indexed (cap) */
uint64_t rix_version(const rix *ix);     /* bumped by every change */
/* Bumped whenever a task's position (its i for rix_at) changes or a position goes: by a
 * removal, which moves the last task into the hole (a sweep's end removes in slices). */
uint64_t rix_layout(const rix *ix);

/* Insert or replace; returns true when the summary changed. */
bool rix_upsert(rix *ix, const char *id, size_t idlen, const rix_sum *sum);
bool rix_remove(rix *ix, const char *id, size_t idlen);
/* Room for n tasks (capped at the maximum) without growing: one rehash now, while the index
 * is small, instead of one per doubling later (each O(size), in a reply's callback). */
void rix_reserve(rix *ix, size_t n);
const rix_task *rix_get(const rix *ix, const char *id, size_t idlen);

/* Full resync: tasks neither upserted nor touched between begin and end are removed. */
void rix_sweep_begin(rix *ix);
void rix_touch(rix *ix, const char *id, size_t idlen);
size_t rix_sweep_end(rix *ix);
/* The same end in slices, so that the event loop runs between them: each call removes,
 * moves or rehashes at most `budget` tasks and returns true once the end is over (*removed:
 * the tasks removed so far). Queries between slices see a consistent index (ids being
 * removed may still show); any other change (an insert, a removal, rix_reserve, a new
 * rix_sweep_begin) first finishes the end, so the result is rix_sweep_end's exactly. */
bool rix_sweep_end_step(rix *ix, size_t budget, size_t *removed);
bool rix_sweep_ending(const rix *ix);            /* an end is under way */
size_t rix_sweep_end_work(const rix *ix);        /* tasks the last slice touched */
/* Bytes of tasks and hash slots copied by growth since rix_new: a machine-independent count
 * of the O(index) work an insert can hide, 0 while a reserve covers the tasks (the ids'
 * arena grows a chunk at a time and is never copied). */
size_t rix_moved(const rix *ix);

/* The task's exact id, written into buf (returns buf->s). */
const char *rix_id(const rix *ix, const rix_task *t, rix_idbuf *buf);
const char *rix_error(const rix *ix, const rix_task *t);       /* "" none */
uint32_t rix_fp(const rix *ix, const rix_task *t);             /* rix_hash_fp of the error's
                                                                  fingerprint, 0 none */
const char *rix_status_name(const rix *ix, const rix_task *t);
/* The interned id of status (compare with rix_task.status), -1 when no task has it. */
int rix_status_id(const rix *ix, const char *status);
const char *rix_code_name(const rix *ix, const rix_task *t);   /* NULL none */
const char *rix_task_name(const rix *ix, const rix_task *t);   /* NULL none */
uint32_t rix_hash_fp(const char *fingerprint);                 /* 0 for ""/NULL */

/* The task's id in its compact form (redis_taskid.h), for rtid_quick_cmp. */
const uint8_t *rix_entry(const rix *ix, const rix_task *t);

/* Ordered selection, newest first (dispatched_at desc, id desc): redis_select.c. */
typedef bool (*rix_pred)(const rix *ix, const rix_task *t, void *ud);
typedef struct rix_cursor {
    bool set;               /* false = from the start */
    bool inclusive;         /* include the task at the cursor */
    double at;
    char id[256];
} rix_cursor;
void rix_cursor_of(const rix *ix, const rix_task *t, bool inclusive, rix_cursor *c);
/* Bytes the index holds (entries, arena, hash slots, interned texts), computed from sizes:
 * the same on every machine (tests gate it; RD_REDIS_DEBUG prints it with each publish). */
size_t rix_memory(const rix *ix);
/* Up to n indices (valid until the next change) into out; *more when further match. */
size_t rix_select(const rix *ix, rix_pred pred, void *ud, const rix_cursor *from,
                  size_t n, uint32_t *out, bool *more);
/* The same selection fed in slices: tasks offered one by one (any order, each once), then
 * finished into out (rix_sel_finish frees it). Between offers the index may take appends
 * and in-place updates (they are picked up or missed), never a removal (rix_layout). */
typedef struct rix_sel rix_sel;
rix_sel *rix_sel_new(const rix *ix, rix_pred pred, void *ud, const rix_cursor *from, size_t n);
/* ... the n just before the cursor, as rix_select_before (never *more) */
rix_sel *rix_sel_new_before(const rix *ix, rix_pred pred, void *ud, const rix_cursor *c,
                            size_t n);
void rix_sel_offer(rix_sel *s, size_t k);
size_t rix_sel_finish(rix_sel *s, uint32_t *out, bool *more);
void rix_sel_free(rix_sel *s);
/* As rix_select but backwards: the n tasks just before the cursor, returned in
 * newest-first order (for "previous page"). */
size_t rix_select_before(const rix *ix, rix_pred pred, void *ud, const rix_cursor *c,
                         size_t n, uint32_t *out);
