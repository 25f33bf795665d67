#pragma once
/* The last hour drawn (core/history.h, core/spark.h): sparklines beside a number
 * (overview, fleet, queues) and the history view's charts. Blocks, or ASCII under
 * --ascii; the colour is the caller's theme slot; a gap is a blank, never a zero. */
#include <curses.h>
#include <stdbool.h>

#include "../core/history.h"
#include "view.h"

/* A series beyond history.h's: the sum of the queue series (the backlog), a gap where
 * every queue is a gap. */
enum { HISTD_BACKLOG = HIST_SERIES };

/* The series' last hour ending at now (HIST_N values, oldest first); false when every
 * value is a gap (or h is NULL). */
bool histd_series(const rd_history *h, int series, double now, float *out);
/* A sparkline of the series' last hour, width cells at y,x (blank when it has no sample).
 * Returns the highest value drawn (0 none). */
float histd_spark(const ui_ctx *c, WINDOW *w, int y, int x, int width, const rd_history *h,
                  int series, int attr);
/* history_queue of name (-1: none, or no history); histd_queues: any queue recorded. */
int histd_queue(const rd_history *h, const char *name);
bool histd_queues(const rd_history *h);
/* "12", "3.5", "1.2k": a value for an axis or a label (rates with one decimal). */
void histd_value(float v, bool rate, char *out, size_t cap);
