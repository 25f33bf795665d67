/* The last hour drawn (histdraw.h). */
#include "histdraw.h"

#include <math.h>
#include <stdio.h>

#include "../core/sanitize.h"
#include "../core/spark.h"
#include "draw.h"

bool histd_series(const rd_history *h, int series, double now, float *out)
{
    if (!h)
        return false;
    if (series != HISTD_BACKLOG) {
        history_series(h, series, now, out, HIST_N);
    } else {
        float q[HIST_N];
        for (int i = 0; i < HIST_N; i++)
            out[i] = NAN;
        for (int k = 0; k < HIST_QUEUES; k++) {
            if (!h->qname[k][0])
                continue;
            history_series(h, HIST_FIXED + k, now, q, HIST_N);
            for (int i = 0; i < HIST_N; i++)
                if (!isnan(q[i]))
                    out[i] = isnan(out[i]) ? q[i] : out[i] + q[i];
        }
    }
    for (int i = 0; i < HIST_N; i++)
        if (!isnan(out[i]))
            return true;
    return false;
}

enum { SPARK_CAP = 1024 * 3 + 1 };

float histd_spark(const ui_ctx *c, WINDOW *w, int y, int x, int width, const rd_history *h,
                  int series, int attr)
{
    float v[HIST_N];
    char line[SPARK_CAP];
    if (width <= 0)
        return 0;
    if (width > 1024)
        width = 1024;
    if (!histd_series(h, series, c->now, v)) {
        draw_fill(w, y, x, width, 0);
        return 0;
    }
    float top = spark_line(v, HIST_N, width, (c->san & SAN_ASCII) != 0, line, sizeof line);
    draw_clean(w, y, x, width, line, attr);
    return top;
}

void histd_value(float v, bool rate, char *out, size_t cap)
{
    if (isnan(v))
        snprintf(out, cap, "-");
    else if (v >= 1e6f)
        snprintf(out, cap, "%.1fM", (double)v / 1e6);
    else if (v >= 1e4f)
        snprintf(out, cap, "%.1fk", (double)v / 1e3);
    else if (rate && v < 100)
        snprintf(out, cap, "%.1f", (double)v);
    else
        snprintf(out, cap, "%.0f", (double)v);
}

int histd_queue(const rd_history *h, const char *name)
{
    return h && name ? history_queue(h, name) : -1;
}

bool histd_queues(const rd_history *h)
{
    for (int k = 0; h && k < HIST_QUEUES; k++)
        if (h->qname[k][0])
            return true;
    return false;
}
