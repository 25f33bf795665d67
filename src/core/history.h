#pragma once
/*
 * One system's last hour: a fixed ring of one sample per HIST_STEP_S seconds for
 * HIST_N steps. Slots are keyed by their absolute step (floor(t / HIST_STEP_S)), so a slot
 * last written an hour ago, or before a restart that lasted longer than the gap, reads as a
 * gap, never as zero. Series: failures per minute, retry-eligible executions, DLQ size,
 * unhealthy workers, and the backlog of the deepest HIST_QUEUES queues (named).
 * Pure: the caller gives the time; history_save/history_load keep the hour across a
 * restart in a small text file (written whole to a temporary name, then renamed; a torn or
 * damaged file loads every whole line before the damage).
 */
#include <stdbool.h>
#include <stddef.h>

enum { HIST_N = 360, HIST_QUEUES = 6, HIST_QNAME = 64, HIST_EVENTS = 64, HIST_ENAME = 64 };
#define HIST_STEP_S 10.0
/* Times at or past this (epoch seconds, the year 5138) have no step: a sample then is not
 * recorded, a series ending then is all gaps, and a file's step beyond it is damage. */
#define HIST_TIME_MAX 1e11

typedef enum {
    HIST_FAIL_RATE = 0,   /* failures per minute */
    HIST_ELIGIBLE,        /* retry-eligible executions */
    HIST_DLQ,             /* dead letters */
    HIST_UNHEALTHY,       /* unhealthy workers */
    HIST_FIXED,           /* the first queue series: HIST_FIXED + queue index */
    HIST_SERIES = HIST_FIXED + HIST_QUEUES,
} rd_hist_series;

/* What a sample is: the figure itself, or a bound of it (the store's count stopped at its
 * cap, the loaded page's count: at least; a count that may include failures a later
 * attempt supersedes: at most). Kept with each sample, so a chart and the JSON say so. */
typedef enum { HIST_EXACT = 0, HIST_LOWER, HIST_UPPER } rd_hist_mark;

/* A worker's change seen between two samples (an onset is set against them, onset.h). */
typedef enum { HEV_UNHEALTHY = 'u', HEV_DRAINING = 'd' } rd_hist_event_kind;

typedef struct rd_hist_event {
    long step;                         /* the sample's step that saw it; 0 = free */
    char kind;                         /* rd_hist_event_kind */
    char name[HIST_ENAME];             /* the worker's name (else id), raw */
} rd_hist_event;

typedef struct rd_history {
    long step[HIST_N];                 /* absolute step of each slot; 0 = never written */
    float v[HIST_SERIES][HIST_N];      /* NAN = no sample (a gap) */
    unsigned char mark[HIST_SERIES][HIST_N];   /* rd_hist_mark; HIST_EXACT for a gap */
    char qname[HIST_QUEUES][HIST_QNAME];   /* raw queue names; "" = free */
    rd_hist_event ev[HIST_EVENTS];     /* the newest HIST_EVENTS changes, a ring */
    int ev_next;                       /* the ring's next slot */
} rd_history;

/* One moment's values; a negative value is unknown (recorded as a gap); one beyond a
 * float's range is recorded as FLT_MAX. mark: what each fixed series' value is (indexed by
 * rd_hist_series; zero: exact). */
typedef struct rd_hist_sample {
    double fail_rate, eligible, dlq, unhealthy;
    size_t nq;
    const char *const *qnames;         /* nq queue names with their depths */
    const double *qdepth;
    unsigned char mark[HIST_FIXED];
} rd_hist_sample;

void history_init(rd_history *h);
/* Records s at time now (its step's slot; a later sample in the same step replaces the
 * earlier one; none at a time ≤ 0 or ≥ HIST_TIME_MAX). Queues: the deepest HIST_QUEUES of s are kept; a queue new to the history
 * takes a free name or the one whose last hour peaked lowest, when it is deeper than that
 * peak (its series starts empty). */
void history_add(rd_history *h, double now, const rd_hist_sample *s);
/* A worker turned unhealthy or draining at now (kept: the newest HIST_EVENTS). */
void history_event(rd_history *h, double now, rd_hist_event_kind kind, const char *name);
/* The events whose step is in [from, to) (epoch seconds), oldest first, at most cap into
 * out (copies); returns how many. */
size_t history_events(const rd_history *h, double from, double to, rd_hist_event *out, size_t cap);
/* Whether any sample was taken in [from, to): the hour covers those times. */
bool history_covers(const rd_history *h, double from, double to);
/* The series' value at the newest sample in [from, to); false when none (all gaps). */
bool history_at(const rd_history *h, int series, double from, double to, float *v);

/* The series' last n ≤ HIST_N steps ending at now's step, oldest first, gaps as NAN. */
void history_series(const rd_history *h, int series, double now, float *out, int n);
/* The queues to chart, deepest first: their series (HIST_FIXED + i) into series[0..
 * HIST_QUEUES), ordered by the newest depth of the last minute (none: last), then the
 * hour's peak, then slot; chosen again at every call, so the charts follow the depths as
 * they change (a slot keeps the queue it first took). Returns how many. */
int history_queues_deepest(const rd_history *h, double now, int *series);
/* The queue series index of name (HIST_FIXED + i), or -1. */
int history_queue(const rd_history *h, const char *name);
/* The marks of the same steps as history_series (HIST_EXACT for gaps). */
void history_marks(const rd_history *h, int series, double now, unsigned char *out, int n);
/* The newest sample of a series within the last n steps; false when all are gaps. */
bool history_last(const rd_history *h, int series, double now, int n, float *v);
/* The same with the sample's mark (mark may be NULL). */
bool history_newest(const rd_history *h, int series, double now, int n, float *v, rd_hist_mark *mark);
/* How many of the hour's samples (ending at now) of a series carry mark. */
int history_count_marked(const rd_history *h, int series, double now, rd_hist_mark mark);
/* A value with its mark as the screens print bounds: "<=" before an upper bound, "+"
 * after a lower one; text is the value already formatted. */
void history_mark_text(rd_hist_mark mark, const char *text, char *out, size_t cap);
/* "  (<=: 35 upper bounds)", "  (+: 12 lower bounds)", both, or "" when the hour of the
 * series holds none: a chart's title says which of its samples are bounds. */
void history_bounds_note(const rd_history *h, int series, double now, char *out, size_t cap);

/* The hour into a cJSON object as "history": {"step_s": 10, "series": {"failures_per_min":
 * [[t, v], ...], "retry_eligible", "dlq", "unhealthy_workers"}, "bounds": {SERIES: [[t,
 * "upper"|"lower"], ...]}, "queues": {NAME: [[t, v], ...]}}, t the step's start in epoch
 * seconds, v null for a gap, HIST_N pairs each, oldest first, ending at now's step;
 * "bounds" names only the samples that are bounds, under the series that has them
 * (history_out.c). */
struct cJSON;
void history_json(struct cJSON *into, const rd_history *h, double now);
/* The hour as text: one sparkline per series (width cells; ASCII when ascii) with its
 * newest value and top, a time axis; allocated (history_out.c). */
char *history_to_text(const rd_history *h, double now, int width, bool ascii);

/* Writes the hour (mode 0600, temporary file then rename); false with why. A bound is
 * written as the screens print it ("<=6000", "97+"); a file without marks reads as before. */
bool history_save(const rd_history *h, const char *path, char *why, size_t whycap);
/* Reads a file written by history_save into h (initialized first). A missing file is an
 * empty history (true). A damaged line stops the read there: every line before it is kept,
 * *damaged is set, and why says where ("PATH:LINE: ..."). false only when the file cannot
 * be opened or is not ours (fsperm: owner, no group/world access). */
bool history_load(rd_history *h, const char *path, bool *damaged, char *why, size_t whycap);
