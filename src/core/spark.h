#pragma once
/*
 * Sparklines and small charts from a series with gaps (NAN), as UTF-8 text: eighth blocks
 * (▁▂▃▄▅▆▇█), or ASCII under --ascii. A gap is a blank cell, never a zero: a zero is the
 * lowest mark (▁ or _), any value above zero at least one step higher. The series is
 * resampled to the width: each cell shows the highest value of the samples it covers.
 */
#include <stdbool.h>
#include <stddef.h>

/* The resampled cells (NAN = gap) and their highest value (0 when all are gaps or zero). */
float spark_cells(const float *v, int n, int width, float *cells);
/* One line of width cells into out (NUL-terminated; cap ≥ width * 3 + 1 for blocks);
 * returns the highest value the line is scaled to. */
float spark_line(const float *v, int n, int width, bool ascii, char *out, size_t cap);
/* A chart of height rows (lines[0] is the top), each of width cells into lines[r] (cap
 * bytes each); returns the highest value, the top of the chart. */
float spark_chart(const float *v, int n, int width, int height, bool ascii, char **lines,
                  size_t cap);
