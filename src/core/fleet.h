#pragma once
/*
 * The fleet: one summary line per configured system, worst first. Pure: built from each
 * system's model (filled by its own background session) and a short history of its DLQ
 * size; the console's fleet view and `snapshot --view fleet` print the same rows.
 */
#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* How bad a system looks, worst last (the sort puts the highest first). */
typedef enum {
    FLEET_OK = 0,
    FLEET_WAIT,       /* a source has not answered yet */
    FLEET_WARN,       /* DLQ not empty, retryable failures, draining workers */
    FLEET_FAIL,       /* failing now, unhealthy workers, DLQ growing */
    FLEET_DOWN,       /* a source is down or stale: the rest may be old */
} rd_fleet_level;

/* The level's thresholds, per system (config keys of the same names, docs/config.md).
 * Defaults: a system at its normal background failure rate reads ok or warn, not FAIL. */
typedef struct rd_fleet_cfg {
    double fail_rate_warn;        /* failures per minute: warn at 1 */
    double fail_rate_crit;        /* FAIL at 10 */
    long dlq_warn;                /* DLQ size: warn at 1 */
    long dlq_crit;                /* FAIL at 1000 */
    long unhealthy_workers_crit;  /* FAIL at 3 unhealthy workers (one or two: warn) */
    double fail_rate_rise;        /* FAIL when the rate is at least fail_rate_warn and this
                                     many times the system's own last hour; 0 = off; 3 */
    double dlq_horizon_warn;      /* s: warn when a DLQ's oldest dead letter is deleted
                                     sooner than this (dlqhorizon.h); 0 = off; 1 h */
    double dlq_horizon_crit;      /* s: FAIL sooner than this; 0 = off; 10 min */
} rd_fleet_cfg;
void fleet_cfg_defaults(rd_fleet_cfg *c);

/* The DLQ size over the last few minutes: one sample per FLEET_TREND_STEP_S; the failure
 * rate over the last hour: one sample per FLEET_RATE_STEP_S. */
enum { FLEET_TREND_N = 32, FLEET_RATE_N = 64 };
#define FLEET_TREND_STEP_S 10.0
#define FLEET_TREND_WINDOW_S 300.0
#define FLEET_RATE_STEP_S 60.0
#define FLEET_RATE_WINDOW_S 3600.0
/* the baseline leaves out the newest minutes (the rise being judged) and needs this many
 * samples (10 minutes of history) */
#define FLEET_RATE_RECENT_S 300.0
enum { FLEET_RATE_MIN_SAMPLES = 10 };

typedef struct rd_fleet_trend {
    double t[FLEET_TREND_N];
    long v[FLEET_TREND_N];
    int n, head;                  /* ring: head = next slot */
    double rt[FLEET_RATE_N], rv[FLEET_RATE_N];
    int rn, rhead;
} rd_fleet_trend;

/* Records the DLQ size v (skipped when unknown, v < 0) at most once per step, and the
 * failure rate (per minute, skipped when < 0) at most once per rate step. */
void fleet_trend_add(rd_fleet_trend *tr, double now, long v, double rate);
/* The mean failure rate of the last hour before the newest FLEET_RATE_RECENT_S; false
 * while fewer than FLEET_RATE_MIN_SAMPLES samples are that old. */
bool fleet_rate_baseline(const rd_fleet_trend *tr, double now, double *mean);
/* current minus the oldest sample within the window; false when current is unknown or
 * no sample in the window is at least a step old. */
bool fleet_trend_delta(const rd_fleet_trend *tr, double now, long current, long *delta);

enum { FLEET_REASONS = 8, FLEET_REASON_LEN = 48, FLEET_HORIZONS = 8 };

/* A DLQ's horizon as the row keeps it (its own copy: rows are copied and sorted). */
typedef struct rd_fleet_horizon {
    char queue[96], source[16], basis[160];
    long depth;                   /* -1 unknown */
    double in_s, within_s;        /* -1 unknown (dlqhorizon.h) */
    bool estimated;
} rd_fleet_horizon;

typedef struct rd_fleet_row {
    char name[64];                /* raw (from the config) */
    char banner[32];              /* raw; "" when none */
    char profile[32];
    rd_fleet_level level;
    rd_fleet_level place;         /* the level the row is sorted by: level, or the one held
                                   * for two polls (fleet_place_update) */
    rd_src_state src_state;       /* the worst source state */
    int n_sources;
    double src_age;               /* s: ok = age of the oldest answer, else time in the
                                     state; -1 unknown */
    char src_error[296];            /* the first failing source's "name: error", raw */
    char src_name[32];            /* the worst source's name, raw; "" none */
    double failing_rate;          /* per minute, -1 unknown */
    long eligible;                /* retry-eligible executions: the whole store's count when
                                     the profile reads it, else the newest page's; -1 unknown */
    bool eligible_more;           /* a lower bound: the store's count hit its cap, or (page)
                                     more pages exist */
    bool eligible_upper;          /* the store's count may include failures a later attempt
                                     supersedes: an upper bound ("<=") */
    bool eligible_store;          /* eligible is the store's count, not the page's */
    long dlq;                     /* -1 unknown */
    bool dlq_trend_known;
    long dlq_delta;               /* change over the trend window */
    long workers, unhealthy, draining;   /* -1 unknown (no workers known) */
    double oldest_queued;         /* age in s of the oldest queued execution: the store's
                                     when the profile reads it, else the page's; -1 unknown */
    bool oldest_more;             /* (page) more pages exist: a lower bound */
    bool queued_store;            /* oldest_queued is the store's */
    bool queued_none;             /* the store holds no queued execution */
    double dlq_cached_age;        /* s: the DLQ size is (partly) the last-known snapshot's,
                                     written this long ago; -1 live */
    double rate_baseline;         /* the last hour's mean failure rate, -1 unknown */
    /* each DLQ's horizon (dlqhorizon.h), the soonest first, at most FLEET_HORIZONS of them
     * (horizons_capped: more DLQs than that); soonest: the index of the one with the
     * smallest figure, -1 none has one; strings raw */
    rd_fleet_horizon horizons[FLEET_HORIZONS];
    int n_horizons;
    bool horizons_capped;
    int soonest;
    /* why the level: one short text per threshold crossed, worst first */
    char reasons[FLEET_REASONS][FLEET_REASON_LEN];
    int n_reasons;
    rd_fleet_level reason_level[FLEET_REASONS];   /* each reason's own level */
} rd_fleet_row;

/* One system's row from its model at now, judged by cfg (NULL: the defaults); tr may be
 * NULL. The console's fleet and `snapshot --view fleet` both come here. */
void fleet_row_fill(rd_fleet_row *r, const char *name, const char *banner, const char *profile,
                    const rd_model *m, const rd_fleet_trend *tr, const rd_fleet_cfg *cfg,
                    double now);
/* Worst place first; equal places keep the order given (the config's): the figures that
 * move every poll (failing rate, DLQ size) never swap rows. Stable. */
int fleet_row_cmp(const rd_fleet_row *a, const rd_fleet_row *b);
void fleet_sort(rd_fleet_row *rows, size_t n);

/* A system's place in the fleet across polls: a new level moves its row only once it has
 * held for hold_s (about two polls: the row's STATE shows it at once). The first level
 * after `wait` (no answer yet) places the row at once. */
typedef struct rd_fleet_place {
    bool known;
    rd_fleet_level place, seen;
    double seen_since;
} rd_fleet_place;
/* The level seen now; returns the place to sort by. */
rd_fleet_level fleet_place_update(rd_fleet_place *p, rd_fleet_level seen, double now, double hold_s);
const char *fleet_level_name(rd_fleet_level l);   /* "ok" "wait" "warn" "FAIL" "DOWN" */

/* The printed columns, shared by the console and the snapshot text. */
enum {
    FLEET_COL_LEVEL, FLEET_COL_SYSTEM, FLEET_COL_ENV, FLEET_COL_SOURCES, FLEET_COL_FAILING,
    FLEET_COL_ELIGIBLE, FLEET_COL_DLQ, FLEET_COL_TREND, FLEET_COL_WORKERS, FLEET_COL_QUEUED,
    FLEET_COL_WHY, FLEET_COL__COUNT
};
enum { FLEET_CELL_MAX = 160 };
extern const char *const fleet_col_heads[FLEET_COL__COUNT];
/* The row's cells as raw text (name and banner unsanitized: the printer sanitizes). */
void fleet_row_cells(const rd_fleet_row *r, char cells[FLEET_COL__COUNT][FLEET_CELL_MAX]);
/* "retryable 6000   oldest queued 1h": the fleet's two whole-store cells (the same text,
 * bounds marked "+", "<=", ">"; " (page)" when a figure is the loaded page's) for a
 * system's model at now; the overview prints it. */
void fleet_store_line(const rd_model *m, double now, char *out, size_t cap);
/* The row's reasons joined: "DLQ 188 >= 1, 4 retryable"; "-" when none. */
void fleet_row_why(const rd_fleet_row *r, char *out, size_t cap);

/* JSON {"view":"fleet","systems":[...]} and the aligned, sanitized text; allocated. */
char *fleet_to_json(const rd_fleet_row *rows, size_t n);
char *fleet_to_text(const rd_fleet_row *rows, size_t n);
