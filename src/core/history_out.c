/* The hour for `snapshot`: JSON pairs and text sparklines (history.h). */
#include "history.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "spark.h"
#include "xalloc.h"

static const struct { const char *key, *label; int series; } FIXED[] = {
    {"failures_per_min", "failures/min", HIST_FAIL_RATE},
    {"retry_eligible", "retry-eligible", HIST_ELIGIBLE},
    {"dlq", "DLQ", HIST_DLQ},
    {"unhealthy_workers", "unhealthy workers", HIST_UNHEALTHY},
};
enum { N_FIXED = sizeof FIXED / sizeof *FIXED };

static cJSON *pairs(const rd_history *h, int series, double now)
{
    float v[HIST_N];
    history_series(h, series, now, v, HIST_N);
    double first = (floor(now / HIST_STEP_S) - (HIST_N - 1)) * HIST_STEP_S;
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < HIST_N; i++) {
        cJSON *p = cJSON_CreateArray();
        cJSON_AddItemToArray(p, cJSON_CreateNumber(first + i * HIST_STEP_S));
        cJSON_AddItemToArray(p, isnan(v[i]) ? cJSON_CreateNull() : cJSON_CreateNumber((double)v[i]));
        cJSON_AddItemToArray(a, p);
    }
    return a;
}

/* The samples of a series that are bounds: [[t, "upper"|"lower"], ...]; NULL when none. */
static cJSON *bounds(const rd_history *h, int series, double now)
{
    float v[HIST_N];
    unsigned char mk[HIST_N];
    history_series(h, series, now, v, HIST_N);
    history_marks(h, series, now, mk, HIST_N);
    double first = (floor(now / HIST_STEP_S) - (HIST_N - 1)) * HIST_STEP_S;
    cJSON *a = NULL;
    for (int i = 0; i < HIST_N; i++) {
        if (isnan(v[i]) || mk[i] == HIST_EXACT)
            continue;
        if (!a)
            a = cJSON_CreateArray();
        cJSON *p = cJSON_CreateArray();
        cJSON_AddItemToArray(p, cJSON_CreateNumber(first + i * HIST_STEP_S));
        cJSON_AddItemToArray(p, cJSON_CreateString(mk[i] == HIST_UPPER ? "upper" : "lower"));
        cJSON_AddItemToArray(a, p);
    }
    return a;
}

void history_json(cJSON *into, const rd_history *h, double now)
{
    cJSON *o = cJSON_AddObjectToObject(into, "history");
    cJSON_AddNumberToObject(o, "step_s", HIST_STEP_S);
    cJSON *s = cJSON_AddObjectToObject(o, "series");
    for (int i = 0; i < N_FIXED; i++)
        cJSON_AddItemToObject(s, FIXED[i].key, pairs(h, FIXED[i].series, now));
    cJSON *b = cJSON_AddObjectToObject(o, "bounds");
    for (int i = 0; i < N_FIXED; i++) {
        cJSON *a = bounds(h, FIXED[i].series, now);
        if (a)
            cJSON_AddItemToObject(b, FIXED[i].key, a);
    }
    cJSON *q = cJSON_AddObjectToObject(o, "queues");
    for (int k = 0; k < HIST_QUEUES; k++)
        if (h->qname[k][0])
            cJSON_AddItemToObject(q, h->qname[k], pairs(h, HIST_FIXED + k, now));
}

/* appends to a growing string */
static void put(char **buf, size_t *len, const char *s)
{
    size_t n = strlen(s);
    *buf = xrealloc(*buf, *len + n + 1);
    memcpy(*buf + *len, s, n + 1);
    *len += n;
}

static void text_series(char **buf, size_t *len, const rd_history *h, int series, const char *label,
                        double now, int width, bool ascii)
{
    float v[HIST_N], last = NAN;
    rd_hist_mark mark = HIST_EXACT;
    history_series(h, series, now, v, HIST_N);
    history_newest(h, series, now, 3, &last, &mark);
    char *line = xmalloc((size_t)width * 3 + 1);
    float top = spark_line(v, HIST_N, width, ascii, line, (size_t)width * 3 + 1);
    char num[24], nowv[32];
    if (isnan(last))
        snprintf(nowv, sizeof nowv, "-");
    else {
        snprintf(num, sizeof num, "%g", (double)last);
        history_mark_text(mark, num, nowv, sizeof nowv);
    }
    char note[96];
    history_bounds_note(h, series, now, note, sizeof note);
    char *clean = sanitize_str(label, ascii ? SAN_ASCII : 0);   /* a queue's name is outside data */
    char *head = xasprintf("%-24s now %-8s max %g%s\n  ", clean, nowv, (double)top, note);
    put(buf, len, head);
    free(head);
    free(clean);
    put(buf, len, line);
    put(buf, len, "\n");
    free(line);
}

char *history_to_text(const rd_history *h, double now, int width, bool ascii)
{
    char *buf = xstrdup("");
    size_t len = 0;
    char head[96];
    snprintf(head, sizeof head, "The last hour, one sample per %.0f s (blank: no sample)\n", HIST_STEP_S);
    put(&buf, &len, head);
    for (int i = 0; i < N_FIXED; i++)
        text_series(&buf, &len, h, FIXED[i].series, FIXED[i].label, now, width, ascii);
    int qs[HIST_QUEUES];
    int nq = history_queues_deepest(h, now, qs);   /* deepest first */
    for (int i = 0; i < nq; i++) {
        char label[HIST_QNAME + 8];
        snprintf(label, sizeof label, "queue %s", h->qname[qs[i] - HIST_FIXED]);
        text_series(&buf, &len, h, qs[i], label, now, width, ascii);
    }
    char *axis = xmalloc((size_t)width + 1);
    memset(axis, ' ', (size_t)width);
    axis[width] = '\0';
    if (width >= 8) {
        memcpy(axis, "-60m", 4);
        memcpy(axis + width - 3, "now", 3);
    }
    put(&buf, &len, "  ");
    put(&buf, &len, axis);
    put(&buf, &len, "\n");
    free(axis);
    return buf;
}
