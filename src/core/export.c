#include "export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "groupid.h"
#include "groups.h"
#include "model_json.h"
#include "model_fields.h"
#include "model_tables.h"
#include "sanitize.h"
#include "storegroups.h"
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

/* A CSV column: its heading and the record's field it shows (model_tables.c). */
typedef struct col { const char *head, *key; } col;
#define C(k) { k, k }

/* One cell of field `key`, formatted by its kind. */
static void f_field(csv *c, const rd_record *r, const char *key, const void *rec, bool sep)
{
    const rd_field *f = record_field(r, key);
    if (!f)
        abort();                    /* a column names a field of its table */
    switch (f->kind) {
    case FK_BUF: {
        char *s = xasprintf("%.*s", (int)f->size, field_str(f, rec));
        f_str(c, s, sep);
        free(s);
        return;
    }
    case FK_INT:
    case FK_LONG: f_long(c, field_long(f, rec)); return;
    case FK_RATE: f_num(c, field_num(f, rec)); return;
    case FK_TIME: f_time(c, field_num(f, rec)); return;
    case FK_BOOL:
    case FK_FLAG:
    case FK_TEST: f_str(c, field_long(f, rec) ? "true" : "false", sep); return;
    default: f_str(c, field_str(f, rec), sep); return;
    }
}

/* The heading line and a line per record (n records of r->size bytes at items). */
static void csv_records(csv *c, const rd_record *r, const col *cols, size_t ncols,
                        const void *items, size_t n)
{
    for (size_t i = 0; i < ncols; i++)
        f_str(c, cols[i].head, i > 0);
    eol(c);
    for (size_t k = 0; k < n; k++) {
        const void *rec = (const char *)items + k * r->size;
        for (size_t i = 0; i < ncols; i++)
            f_field(c, r, cols[i].key, rec, i > 0);
        eol(c);
    }
}

#define CSV(c, r, cols, items, n) csv_records(c, r, cols, sizeof cols / sizeof *cols, items, n)

static const col exec_cols[] = {
    C(MF_ID), C(MF_PARENT_ID), C(MF_NAME), C(MF_STATUS), C(MF_ATTEMPT), C(MF_MAX_ATTEMPTS),
    { MF_ELIGIBLE, MF_ELIGIBILITY }, C(MF_WORKER), C(MF_CREATED_AT), C(MF_UPDATED_AT),
    C(MF_FINISHED_AT), C(MF_REASON), C(MF_ERROR), C(MF_FINGERPRINT),
};
static const col worker_cols[] = {
    C(MF_ID), C(MF_NAME), C(MF_STATUS), C(MF_HEALTH), C(MF_HEALTH_REASON), C(MF_HEARTBEAT_AT),
    C(MF_QUEUE_DEPTH), C(MF_IN_FLIGHT), C(MF_CAPACITY), C(MF_FAILURE_RATE),
    C(MF_CONSECUTIVE_FAILURES), C(MF_TAGS),
};
static const col queue_cols[] = {
    C(MF_NAME), C(MF_DEPTH), C(MF_READY), C(MF_UNACKED), C(MF_CONSUMERS), C(MF_PUBLISH_RATE),
    C(MF_DELIVER_RATE), C(MF_IS_DLQ),
};
static const col dlq_cols[] = {
    C(MF_ID), C(MF_QUEUE), C(MF_EXECUTION_ID), C(MF_REASON), C(MF_COUNT), C(MF_ORIGIN_QUEUE),
    C(MF_FIRST_DEATH_AT), C(MF_LAST_DEATH_AT), C(MF_REDELIVERED), C(MF_PAYLOAD),
};

/* The error groups as the groups view and `snapshot --view groups` count them: the
 * store's in a window when the store has answered (scope "store 1h", "capped" when the
 * count stopped at its bound), else the loaded executions' (scope "loaded"). */
static void csv_groups(csv *c, const rd_model *m, double now)
{
    static const char *const heads[] = {
        MF_ID, MF_FINGERPRINT, MF_COUNT, MF_RETRY_ELIGIBLE, MF_RECENT, MF_BEFORE, MF_TREND,
        MF_FIRST_SEEN, MF_LAST_SEEN, "top_action", "scope", MF_SAMPLE_ERROR,
    };
    for (size_t i = 0; i < sizeof heads / sizeof *heads; i++)
        f_str(c, heads[i], i > 0);
    eol(c);
    char scope[64] = "loaded", win[32];
    if (m->sgroups) {
        sgroups_window_text(sgroups_window(m->sgroups), win, sizeof win);
        snprintf(scope, sizeof scope, "store %s%s", win, sgroups_capped(m->sgroups) ? ", capped" : "");
    }
    rd_group *g = NULL;
    size_t n = sgroups_of_model(m, NULL, now, &g);
    for (size_t i = 0; i < n; i++) {
        char gid[GROUPID_LEN + 1];
        groupid_make(g[i].fp, gid);
        f_str(c, gid, false);
        f_str(c, g[i].fp, true);
        f_long(c, (long)g[i].count);
        f_long(c, (long)g[i].eligible);
        f_long(c, (long)g[i].recent);
        f_long(c, (long)g[i].before);
        f_str(c, trend_name(g[i].trend), true);
        f_time(c, g[i].first_seen);
        f_time(c, g[i].last_seen);
        f_str(c, g[i].n_actions ? g[i].actions[0].name : "", true);
        f_str(c, scope, true);
        f_str(c, g[i].sample ? g[i].sample : "", true);
        eol(c);
    }
    groups_free(g, n);
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
    if (v->mask & VPART_GROUPS)
        csv_groups(&c, m, now);
    else if (v->mask & VPART_EXECS)
        CSV(&c, &exec_record, exec_cols, m->execs.items, m->execs.n);
    else if (v->mask & VPART_CHAIN)
        CSV(&c, &exec_record, exec_cols, m->chain.items, m->chain.n);
    else if (v->mask & VPART_WORKERS)
        CSV(&c, &worker_record, worker_cols, m->workers.items, m->workers.n);
    else if (v->mask & VPART_QUEUES)
        CSV(&c, &queue_record, queue_cols, m->queues.items, m->queues.n);
    else
        CSV(&c, &dlq_record, dlq_cols, m->dlq.items, m->dlq.n);
    return c.b;
}
