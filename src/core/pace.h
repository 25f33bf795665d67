#pragma once
/*
 * Pacing work on a shared server to a share of one of its cores (the Redis sweep's
 * `sweep_budget`). Each flight reports what it cost the server (seconds of server CPU,
 * measured from commandstats deltas or estimated per command); the next flight may start
 * once the cost so far fits the share: a virtual clock (GCRA) advanced by cost / share,
 * with a small burst allowance so a short sweep is not slowed at all. Pure: the caller
 * gives the time, so it is tested with a simulated clock.
 */
#include <stdbool.h>

typedef struct rd_pace {
    double share;        /* of one server core, 0 < share ≤ 1; 0 = unpaced */
    double burst;        /* seconds of server CPU that may be spent ahead of the share */
    double tat;          /* theoretical arrival time: when the cost so far is paid off */
    double spent;        /* server CPU reported so far (s) */
    double started;      /* time of the first flight; < 0 before */
} rd_pace;

/* share as given by the config (0 = unpaced); burst in server-CPU seconds (0.01 is 10 ms). */
void pace_init(rd_pace *p, double share, double burst);
/* When the next flight may start (≤ now: at once). */
double pace_next(const rd_pace *p, double now);
/* A flight started at `start` cost the server `cost` seconds of CPU. */
void pace_spent(rd_pace *p, double start, double cost);
/* The server CPU share spent since the first flight, measured at now (0 before any). */
double pace_share_used(const rd_pace *p, double now);
