#pragma once
/*
 * When an error group started and what changed in the same minutes (issue 36, item 2;
 * docs/error-groups.md "Onset"): the group's onset is its first minute in the window
 * (its first failure, floored to the minute), set against the system's history ring
 * (history.h) for that minute and the one before it: workers that turned unhealthy or
 * draining, queues whose depth jumped, the DLQ growing, and the other groups whose onset
 * is within a minute of it. A group whose first failure is in the window's first minute
 * began before it, maybe: no onset is claimed. Minutes the ring holds no sample of are
 * said as such, never read as "nothing changed". Pure: the caller gives the groups, the
 * window and the ring.
 */
#include <stdbool.h>
#include <stddef.h>

#include "groups.h"
#include "history.h"

enum { ONSET_ITEMS = 12 };

typedef enum {
    ONSET_KNOWN,          /* the ring covers those minutes: `with` is what changed */
    ONSET_BEFORE_WINDOW,  /* its first failure is in the window's first minute */
    ONSET_NO_HISTORY,     /* the ring holds no sample of those minutes */
} onset_state;

typedef enum {
    ONS_WORKER_UNHEALTHY, ONS_WORKER_DRAINING, ONS_QUEUE_DEPTH, ONS_DLQ_GROWTH, ONS_GROUPS_STARTED
} onset_kind;

typedef struct rd_onset_item {
    onset_kind kind;
    double at;                 /* epoch: the sample that saw it (a group's: its onset) */
    char name[HIST_ENAME];     /* a worker's or queue's name, raw */
    double from, to;           /* a queue's depth or the DLQ, before and after */
    size_t count;              /* groups started */
} rd_onset_item;

typedef struct rd_onset {
    onset_state state;
    double at;                 /* the onset minute's start (epoch), 0 unknown */
    rd_onset_item with[ONSET_ITEMS];
    size_t n;
} rd_onset;

/* A queue's depth jumped when it is at least this many times what it was, and by at least
 * ONSET_QUEUE_MIN messages. */
#define ONSET_QUEUE_FACTOR 2.0
enum { ONSET_QUEUE_MIN = 10 };

/* The onset of g[i] among the n groups of a window that began at window_start; h may be
 * NULL (no history: ONSET_NO_HISTORY, the other groups still counted). */
void onset_of(const rd_history *h, const rd_group *g, size_t n, size_t i, double window_start,
              rd_onset *out);
const char *onset_kind_name(onset_kind k);   /* "worker_unhealthy", "queue_depth", ... */
const char *onset_state_name(onset_state s); /* "known", "before_window", "no_history" */
/* "started 14:02 — 14:01 worker w-7 unhealthy · queue billing depth ×5 · 2 other groups
 * started", the names sanitized; times in UTC unless local. */
void onset_text(const rd_onset *o, bool local, char *out, size_t cap);
