#pragma once
/* Worker health classification (SPEC §1, seed 000 thresholds; all configurable). */
#include "model.h"

typedef struct rd_health_cfg {
    double heartbeat_max_age;   /* 30 s */
    int failures_unhealthy;     /* 10 */
    int failures_degraded;      /* 3 */
    long depth_unhealthy;       /* 100 */
    long depth_degraded;        /* 50 */
    double rate_unhealthy;      /* 0.70 */
    double rate_degraded;       /* 0.30 */
} rd_health_cfg;

void health_defaults(rd_health_cfg *c);
/* Classifies w (reads heartbeat_at, queue_depth, failure_rate, consecutive_failures,
 * has_metrics); writes w->health and w->health_reason. A heartbeat in the future
 * (clock skew > 5 s) is reported in the reason, not treated as fresh forever. */
void health_classify(const rd_health_cfg *c, rd_worker *w, double now);
/* The same for a worker whose data did not change since it was classified: only the
 * clock moved. Does nothing until the verdict or its reason's age text would change
 * (w->health_until), so a refresh that re-judges every worker costs ~nothing. True when
 * the verdict changed: a reason whose age text moved on ("heartbeat 14m old" -> "15m") is
 * updated in place and shows at the next paint, which a view showing ages gets anyway. */
bool health_reclassify(const rd_health_cfg *c, rd_worker *w, double now);
/* "5m", "42s", "3h", "2d" — compact age for reasons and tables. */
void format_age(double seconds, char *out, size_t cap);

/* Queue trend between polls (SQS): in/out rates from the deltas of the total and the
 * "not draining" detector: visible grew on RD_DRAIN_GROW_POLLS consecutive polls while
 * nothing was in flight (nobody receives). A steady visible count with nothing in flight
 * keeps the flag; a drop or anything in flight clears it. */
enum { RD_DRAIN_GROW_POLLS = 2 };
typedef struct rd_queue_trend {
    long prev_total, prev_visible;  /* -1 before the first poll */
    double prev_at;
    double in_rate, out_rate;       /* msgs/s, -1 unknown */
    int grew;                       /* consecutive polls on which visible grew, none in flight */
    bool not_draining;
} rd_queue_trend;

void queue_trend_init(rd_queue_trend *t);
/* One poll's counts (negative = unknown, counted as 0) at monotonic time now;
 * returns t->not_draining. */
bool queue_trend_note(rd_queue_trend *t, long visible, long in_flight, long delayed, double now);
