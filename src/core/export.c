#include "export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model_json.h"
#include "model_fields.h"
#include "sanitize.h"
#include "views.h"
#include "xalloc.h"

static void put(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    xgrow(buf, cap, *len + n + 1, 1);
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = 0;
}

void export_csv_field(char **buf, size_t *len, size_t *cap, const char *raw, bool sep)
{
    if (sep)
        put(buf, len, cap, ",", 1);
    if (!raw || !*raw)
        return;
    char *clean = sanitize_str(raw, SAN_KEEP_NL);   /* a newline stays, inside quotes */
    /* a spreadsheet runs a cell starting with = + - @ TAB or CR as a formula: a leading
     * quote keeps it text (OWASP's CSV injection rule) */
    char *s = strchr("=+-@\t\r", raw[0]) ? xasprintf("'%s", clean) : xstrdup(clean);
    free(clean);
    size_t n = strlen(s);
    bool quote = strpbrk(s, ",\"\r\n") != NULL || s[0] == ' ' || s[n - 1] == ' ';
    if (!quote) {
        put(buf, len, cap, s, n);
        free(s);
        return;
    }
    put(buf, len, cap, "\"", 1);
    for (const char *p = s; *p; p++)
        put(buf, len, cap, *p == '"' ? "\"\"" : p, *p == '"' ? 2 : 1);
    put(buf, len, cap, "\"", 1);
    free(s);
}

bool export_has_payloads(const char *view)
{
    const rd_view *v = view_find(view);
    return v && (v->mask & VPART_DLQ);
}

typedef struct csv { char *b; size_t n, cap; } csv;

static void f_str(csv *c, const char *s, bool sep) { export_csv_field(&c->b, &c->n, &c->cap, s, sep); }

static void f_long(csv *c, long v)
{
    char t[32] = "";
    if (v >= 0)
        snprintf(t, sizeof t, "%ld", v);
    f_str(c, t, true);
}

static void f_num(csv *c, double v)
{
    char t[32] = "";
    if (v >= 0)
        snprintf(t, sizeof t, "%.6g", v);
    f_str(c, t, true);
}

static void f_time(csv *c, double t)
{
    char out[32] = "";
    if (t > 0) {
        time_t s = (time_t)t;
        struct tm tm;
        gmtime_r(&s, &tm);
        strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    f_str(c, out, true);
}

static void eol(csv *c) { put(&c->b, &c->n, &c->cap, "\r\n", 2); }

static void header(csv *c, const char *const *cols)
{
    for (size_t i = 0; cols[i]; i++)
        f_str(c, cols[i], i > 0);
    eol(c);
}

static void csv_execs(csv *c, const rd_execution *e, size_t n)
{
    static const char *const cols[] = {
        MF_ID, MF_PARENT_ID, MF_NAME, MF_STATUS, MF_ATTEMPT, MF_MAX_ATTEMPTS, MF_ELIGIBLE,
        MF_WORKER, MF_CREATED_AT, MF_UPDATED_AT, MF_FINISHED_AT, MF_REASON, MF_ERROR,
        MF_FINGERPRINT, NULL};
    header(c, cols);
    for (size_t i = 0; i < n; i++, e++) {
        f_str(c, e->id, false);
        f_str(c, e->parent_id, true);
        f_str(c, e->name, true);
        f_str(c, e->status, true);
        f_long(c, e->attempt);
        f_long(c, e->max_attempts);
        f_str(c, elig_name(e->elig.verdict), true);
        f_str(c, e->worker, true);
        f_time(c, e->created_at);
        f_time(c, e->updated_at);
        f_time(c, e->finished_at);
        f_str(c, e->reason, true);
        f_str(c, e->error, true);
        f_str(c, e->fingerprint, true);
        eol(c);
    }
}

static void csv_workers(csv *c, const rd_model *m)
{
    static const char *const cols[] = {
        MF_ID, MF_NAME, MF_STATUS, MF_HEALTH, MF_HEALTH_REASON, MF_HEARTBEAT_AT, MF_QUEUE_DEPTH,
        MF_IN_FLIGHT, MF_CAPACITY, MF_FAILURE_RATE, MF_CONSECUTIVE_FAILURES, MF_TAGS, NULL};
    header(c, cols);
    for (size_t i = 0; i < m->workers.n; i++) {
        const rd_worker *w = &m->workers.items[i];
        f_str(c, w->id, false);
        f_str(c, w->name, true);
        f_str(c, w->status, true);
        f_str(c, health_name(w->health), true);
        f_str(c, w->health_reason, true);
        f_time(c, w->heartbeat_at);
        f_long(c, w->queue_depth);
        f_long(c, w->in_flight);
        f_long(c, w->capacity);
        f_num(c, w->failure_rate);
        f_long(c, w->consecutive_failures);
        f_str(c, w->tags, true);
        eol(c);
    }
}

static void csv_queues(csv *c, const rd_model *m)
{
    static const char *const cols[] = {
        MF_NAME, MF_DEPTH, MF_READY, MF_UNACKED, MF_CONSUMERS, MF_PUBLISH_RATE, MF_DELIVER_RATE,
        MF_IS_DLQ, NULL};
    header(c, cols);
    for (size_t i = 0; i < m->queues.n; i++) {
        const rd_queue *q = &m->queues.items[i];
        f_str(c, q->name, false);
        f_long(c, q->depth);
        f_long(c, q->ready);
        f_long(c, q->unacked);
        f_long(c, q->consumers);
        f_num(c, q->publish_rate);
        f_num(c, q->deliver_rate);
        f_str(c, q->is_dlq ? "true" : "false", true);
        eol(c);
    }
}

static void csv_dlq(csv *c, const rd_model *m)
{
    static const char *const cols[] = {
        MF_ID, MF_QUEUE, MF_EXECUTION_ID, MF_REASON, MF_COUNT, MF_ORIGIN_QUEUE, MF_FIRST_DEATH_AT,
        MF_LAST_DEATH_AT, MF_REDELIVERED, MF_PAYLOAD, NULL};
    header(c, cols);
    for (size_t i = 0; i < m->dlq.n; i++) {
        const rd_dlq_entry *d = &m->dlq.items[i];
        f_str(c, d->id, false);
        f_str(c, d->queue, true);
        f_str(c, d->execution_id, true);
        f_str(c, d->reason, true);
        f_long(c, d->count);
        f_str(c, d->origin_queue, true);
        f_time(c, d->first_death_at);
        f_time(c, d->last_death_at);
        f_str(c, d->redelivered ? "true" : "false", true);
        f_str(c, d->payload, true);
        eol(c);
    }
}

char *export_render(const rd_model *m, const char *view, rd_export_fmt fmt, double now, char *err, size_t errcap)
{
    const rd_view *v = view_find(view);
    if (!v || !v->listed || !v->exportable) {
        char names[200];
        view_names(names, sizeof names, true);
        snprintf(err, errcap, "nothing to export in the %s view (%s)", view ? view : "current", names);
        return NULL;
    }
    if (fmt == EXPORT_JSON)
        return model_to_json_at(m, view, now);
    csv c = {xstrdup(""), 0, 1};
    if (v->mask & VPART_EXECS)
        csv_execs(&c, m->execs.items, m->execs.n);
    else if (v->mask & VPART_CHAIN)
        csv_execs(&c, m->chain.items, m->chain.n);
    else if (v->mask & VPART_WORKERS)
        csv_workers(&c, m);
    else if (v->mask & VPART_QUEUES)
        csv_queues(&c, m);
    else
        csv_dlq(&c, m);
    return c.b;
}
