#include "model_json.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlqhorizon.h"
#include "drain.h"
#include "groupid.h"
#include "groups.h"
#include "history.h"
#include "onset.h"
#include "storegroups.h"
#include "model_fields.h"
#include "model_tables.h"
#include "sanitize.h"
#include "xalloc.h"
#include "views.h"

/* ---- output ---------------------------------------------------------- */

/* Code points cJSON prints raw that a terminal or viewer would act on: DEL, C1
 * controls, bidi marks, embeddings, overrides and isolates, line/paragraph
 * separators. */
static bool json_must_escape(unsigned long cp)
{
    return cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E ||
           cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

char *json_text_safe(const char *json)
{
    /* invalid UTF-8 never gets out: U+FFFD first, then the escapes */
    char *valid = sanitize_utf8(json, json ? strlen(json) : 0);
    size_t n = strlen(valid), cap = n * 2 + 1, o = 0;
    char *out = xmalloc(cap);   /* an escape is 6 bytes for at least 1 (DEL) or 2 */
    const unsigned char *u = (const unsigned char *)valid;
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        unsigned long cp = len == 1 ? c : c & (0x7Fu >> len);
        for (size_t k = 1; k < len; k++)
            cp = cp << 6 | (u[i + k] & 0x3Fu);
        if (json_must_escape(cp)) {
            if (o + 7 > cap)
                xgrow(&out, &cap, o + 7, 1);
            o += (size_t)snprintf(out + o, 7, "\\u%04lx", cp);
        } else {
            if (o + len + 1 > cap)
                xgrow(&out, &cap, o + len + 1, 1);
            memcpy(out + o, u + i, len);
            o += len;
        }
        i += len;
    }
    out[o] = '\0';
    free(valid);
    return out;
}

static void add_str(cJSON *o, const char *k, const char *v)
{
    if (!v) {
        cJSON_AddNullToObject(o, k);
        return;
    }
    char *clean = sanitize_utf8(v, strlen(v));
    cJSON_AddStringToObject(o, k, clean);
    free(clean);
}

static void add_num(cJSON *o, const char *k, double v, bool known)
{
    if (known && isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static void add_long(cJSON *o, const char *k, long v) { add_num(o, k, (double)v, v >= 0); }

/* Times in milliseconds precision: cJSON prints 15 significant digits when that is
 * "close enough", so finer values would not read back identically. */
static double ms(double t) { return round(t * 1000) / 1000; }
static void add_time(cJSON *o, const char *k, double t) { add_num(o, k, ms(t), ms(t) > 0); }

/* Writes a FK_STRUCT field: an object or array of its own. */
typedef void (*nested_fn)(cJSON *o, const rd_field *f, const void *rec, double now);

/* One record as an object, its fields in table order (model_tables.c). */
static cJSON *record_json(const rd_record *r, const void *rec, double now, nested_fn nested)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < r->n; i++) {
        const rd_field *f = &r->fields[i];
        if ((f->flags & FF_NOJSON) || (f->when && !f->when(rec)))
            continue;
        const char *k = f->key;
        long v;
        switch (f->kind) {
        case FK_STR:
        case FK_NAME:
            add_str(o, k, field_str(f, rec));
            break;
        case FK_BUF: {
            char *s = xasprintf("%.*s", (int)f->size, field_str(f, rec));
            add_str(o, k, !s[0] && (f->flags & FF_EMPTY_NULL) ? NULL : s);
            free(s);
            break;
        }
        case FK_INT:
        case FK_LONG:
            v = field_long(f, rec);
            if (f->flags & FF_RAW)
                cJSON_AddNumberToObject(o, k, (double)v);
            else
                add_long(o, k, (f->flags & FF_POSITIVE) && v <= 0 ? -1 : v);
            break;
        case FK_RATE:
            add_num(o, k, field_num(f, rec), field_num(f, rec) >= 0);
            break;
        case FK_TIME:
            add_time(o, k, field_num(f, rec));
            break;
        case FK_BOOL:
        case FK_FLAG:
        case FK_TEST:
            cJSON_AddBoolToObject(o, k, field_long(f, rec) != 0);
            break;
        case FK_AGE: {
            /* an answer stamped a hair after `now` (rounding, another clock) is 0 ms old */
            double t = ms(field_num(f, rec));
            add_num(o, k, f->flags & FF_MS ? fmax(0, floor((now - t) * 1000)) : ms(now - t),
                    t > 0);
            break;
        }
        case FK_STRUCT:
            if (nested)
                nested(o, f, rec, now);
            break;
        }
    }
    return o;
}

static cJSON *exec_json(const rd_execution *e, double now)
{
    return record_json(&exec_record, e, now, NULL);
}

static cJSON *worker_json(const rd_worker *w, double now)
{
    return record_json(&worker_record, w, now, NULL);
}

static cJSON *queue_json(const rd_queue *q, double now)
{
    return record_json(&queue_record, q, now, NULL);
}

static cJSON *dlq_json(const rd_dlq_entry *d, double now)
{
    return record_json(&dlq_record, d, now, NULL);
}

/* One source's share of the DLQ: {"source", "total", "entries"}. */
static cJSON *dlq_part_json(const rd_dlq_part *p, double now)
{
    (void)now;
    cJSON *o = cJSON_CreateObject();
    add_str(o, MF_SOURCE, p->owner);
    add_long(o, MF_TOTAL, p->total);
    add_long(o, MF_ENTRIES, (long)p->n);
    cJSON_AddBoolToObject(o, MF_LOADED, p->loaded);
    return o;
}

/* A source's nested parts: "replica", "progress", "notes". */
static void source_nested(cJSON *o, const rd_field *f, const void *rec, double now)
{
    const rd_source_status *s = rec;
    if (strcmp(f->key, MF_REPLICA) == 0) {         /* reading from replicas */
        cJSON *r = cJSON_AddObjectToObject(o, MF_REPLICA);
        add_str(r, MF_HOST, s->host[0] ? s->host : NULL);
        add_str(r, MF_ROLE, s->role[0] ? s->role : NULL);
        add_num(r, MF_LAG_S, s->lag_s, s->lag_known);
        add_str(r, MF_FAILOVER, s->failover[0] ? s->failover : NULL);
        add_time(r, MF_FAILOVER_AT, s->failover_at);
    } else if (strcmp(f->key, MF_PROGRESS) == 0) { /* a long first read: the views are partial */
        char text[200];
        source_progress_text(s, text, sizeof text);
        cJSON *p = cJSON_AddObjectToObject(o, MF_PROGRESS);
        add_long(p, MF_PROGRESS_DONE, s->progress.done);
        add_long(p, MF_TOTAL, s->progress.total);
        add_num(p, MF_PROGRESS_SHARE, s->progress.share, s->progress.share >= 0);
        add_str(p, MF_PROGRESS_TEXT, text);
    } else if (strcmp(f->key, MF_NOTES) == 0) {
        cJSON *notes = cJSON_AddArrayToObject(o, MF_NOTES);
        for (size_t i = 0; i < s->n_notes && i < RD_SRC_NOTES; i++) {
            char note[RD_SRC_NOTE_LEN + 1];
            snprintf(note, sizeof note, "%.*s", (int)RD_SRC_NOTE_LEN, s->notes[i]);
            char *clean = sanitize_utf8(note, strlen(note));
            cJSON_AddItemToArray(notes, cJSON_CreateString(clean));
            free(clean);
        }
    }
}

static cJSON *source_json(const rd_source_status *s, double now)
{
    return record_json(&source_record, s, now, source_nested);
}

static cJSON *count_json(const rd_count *c, double now)
{
    return record_json(&count_record, c, now, NULL);
}

/* The window of the store's groups, the bound, whether it was hit, when computed; or the
 * scope "loaded" (the loaded executions' groups). */
static void add_groups_scope(cJSON *root, const rd_model *m)
{
    const rd_sgroups *s = m->sgroups;
    add_str(root, MF_GROUPS_SCOPE, s ? "store" : "loaded");
    if (!s)
        return;
    char win[16];
    sgroups_window_text(sgroups_window(s), win, sizeof win);
    add_str(root, MF_WINDOW, win);
    cJSON_AddNumberToObject(root, MF_WINDOW_S, sgroups_window(s));
    cJSON_AddNumberToObject(root, MF_GROUPS_CAP, (double)sgroups_cap(s));
    cJSON_AddBoolToObject(root, MF_GROUPS_CAPPED, sgroups_capped(s));
    cJSON_AddNumberToObject(root, MF_GROUPS_FAILURES, (double)sgroups_failures(s));
    add_time(root, MF_GROUPS_COMPUTED_AT, sgroups_time(s));
}

/* The window's baseline of what stands out: its executions, whether capped, the
 * dimensions the store records and those it does not (standout.h). */
static void add_so_window(cJSON *root, const rd_model *m)
{
    const so_base *b = sgroups_base(m->sgroups);
    if (!b) {
        cJSON_AddNullToObject(root, MF_STANDS_OUT_WINDOW);
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(root, MF_STANDS_OUT_WINDOW);
    cJSON_AddNumberToObject(o, MF_EXECUTIONS, (double)so_base_executions(b));
    cJSON_AddBoolToObject(o, MF_CAPPED, so_base_capped(b));
    cJSON *rec = cJSON_AddArrayToObject(o, MF_COMPARED), *not = cJSON_AddArrayToObject(o, MF_NOT_COMPARED);
    for (int d = 0; d < SO_NDIM; d++)
        cJSON_AddItemToArray(so_base_records(b, (so_dim)d) ? rec : not,
                             cJSON_CreateString(so_dim_name((so_dim)d)));
}

static double round4(double v) { return (double)(long long)(v * 10000.0 + 0.5) / 10000.0; }

/* A group's list of what stands out, or null with the note saying why. */
static void add_standout(cJSON *o, const rd_model *m, const rd_group *g)
{
    const rd_standout *l;
    size_t n;
    so_state st = sgroups_standout(m->sgroups, g->fp, &l, &n);
    if (st != SO_LISTED) {
        char why[160];
        so_state_text(st, sgroups_base(m->sgroups), g->count, why, sizeof why);
        cJSON_AddNullToObject(o, MF_STANDS_OUT);
        add_str(o, MF_STANDS_OUT_NOTE, m->sgroups ? why : "the loaded executions' groups: not compared");
        return;
    }
    cJSON *arr = cJSON_AddArrayToObject(o, MF_STANDS_OUT);
    for (size_t k = 0; k < n; k++) {
        cJSON *x = cJSON_CreateObject();
        add_str(x, MF_DIMENSION, so_dim_name(l[k].dim));
        add_str(x, MF_VALUE, l[k].value);
        cJSON_AddNumberToObject(x, MF_IN_GROUP, round4(l[k].in_group));
        cJSON_AddNumberToObject(x, MF_IN_WINDOW, round4(l[k].in_window));
        if (isinf(l[k].lift))          /* none of the window's other executions has it */
            cJSON_AddNullToObject(x, MF_LIFT);
        else
            cJSON_AddNumberToObject(x, MF_LIFT, (double)(long long)(l[k].lift * 100.0 + 0.5) / 100.0);
        cJSON_AddNumberToObject(x, MF_N_GROUP, (double)l[k].n_group);
        cJSON_AddNumberToObject(x, MF_N_WINDOW, (double)l[k].n_window);
        cJSON_AddItemToArray(arr, x);
    }
    cJSON_AddNullToObject(o, MF_STANDS_OUT_NOTE);
}

/* The error groups (the store's in a window, else the loaded executions'), trend over
 * GROUPS_INTERVAL_S. */
/* The group's onset against the ring (onset.h): {at, state, with: [...], text}; null for
 * the loaded executions' groups (no window). */
static void add_onset(cJSON *o, const rd_model *m, const rd_group *g, size_t n, size_t i,
                      const rd_history *h)
{
    if (!m->sgroups) {
        cJSON_AddNullToObject(o, MF_ONSET);
        return;
    }
    rd_onset on;
    onset_of(h, g, n, i, sgroups_time(m->sgroups) - sgroups_window(m->sgroups), &on);
    cJSON *x = cJSON_AddObjectToObject(o, MF_ONSET);
    add_time(x, MF_AT, on.state == ONSET_BEFORE_WINDOW ? 0 : on.at);
    add_str(x, MF_STATE, onset_state_name(on.state));
    cJSON *with = on.state == ONSET_KNOWN || on.n ? cJSON_AddArrayToObject(x, MF_WITH) : NULL;
    if (!with)
        cJSON_AddNullToObject(x, MF_WITH);
    for (size_t k = 0; with && k < on.n; k++) {
        const rd_onset_item *it = &on.with[k];
        cJSON *y = cJSON_CreateObject();
        add_str(y, MF_KIND, onset_kind_name(it->kind));
        add_time(y, MF_AT, it->at);
        if (it->kind == ONS_GROUPS_STARTED)
            cJSON_AddNumberToObject(y, MF_COUNT, (double)it->count);
        else if (it->kind == ONS_WORKER_UNHEALTHY || it->kind == ONS_WORKER_DRAINING)
            add_str(y, MF_NAME, it->name);
        if (it->kind == ONS_QUEUE_DEPTH)
            add_str(y, MF_NAME, it->name);
        if (it->kind == ONS_QUEUE_DEPTH || it->kind == ONS_DLQ_GROWTH) {
            cJSON_AddNumberToObject(y, MF_FROM, it->from);
            cJSON_AddNumberToObject(y, MF_TO, it->to);
        }
        cJSON_AddItemToArray(with, y);
    }
    char text[1024];
    onset_text(&on, false, text, sizeof text);
    add_str(x, MF_TEXT, text);
}

static void add_groups(cJSON *root, const rd_model *m, double now, const rd_history *h)
{
    rd_group *g = NULL;
    size_t n = sgroups_of_model(m, NULL, now, &g);
    add_groups_scope(root, m);
    add_so_window(root, m);
    cJSON_AddNumberToObject(root, MF_TREND_INTERVAL_S, GROUPS_INTERVAL_S);
    cJSON *arr = cJSON_AddArrayToObject(root, MF_GROUPS);
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        char gid[GROUPID_LEN + 1];
        groupid_make(g[i].fp, gid);
        add_str(o, MF_ID, gid);
        add_str(o, MF_FINGERPRINT, g[i].fp);
        cJSON_AddNumberToObject(o, MF_COUNT, (double)g[i].count);
        cJSON_AddNumberToObject(o, MF_RETRY_ELIGIBLE, (double)g[i].eligible);
        cJSON_AddNumberToObject(o, MF_RECENT, (double)g[i].recent);
        cJSON_AddNumberToObject(o, MF_BEFORE, (double)g[i].before);
        add_str(o, MF_TREND, trend_name(g[i].trend));
        add_time(o, MF_FIRST_SEEN, g[i].first_seen);
        add_time(o, MF_LAST_SEEN, g[i].last_seen);
        cJSON *acts = cJSON_AddArrayToObject(o, MF_ACTIONS);
        for (size_t k = 0; k < g[i].n_actions; k++) {
            cJSON *a = cJSON_CreateObject();
            add_str(a, MF_NAME, g[i].actions[k].name);
            cJSON_AddNumberToObject(a, MF_COUNT, (double)g[i].actions[k].count);
            cJSON_AddItemToArray(acts, a);
        }
        cJSON *ids = cJSON_AddArrayToObject(o, MF_MEMBERS);
        for (size_t k = 0; k < g[i].n_members; k++) {
            const char *id = m->execs.items[g[i].members[k]].id;
            char *clean = sanitize_utf8(id ? id : "", id ? strlen(id) : 0);
            cJSON_AddItemToArray(ids, cJSON_CreateString(clean));
            free(clean);
        }
        add_str(o, MF_SAMPLE_ERROR, g[i].sample);
        add_standout(o, m, &g[i]);
        add_onset(o, m, g, n, i, h);
        cJSON_AddItemToArray(arr, o);
    }
    groups_free(g, n);
}

/* The view's parts (views.h); an unknown view, or none, is the overview. */
static unsigned view_mask(const char *view)
{
    /* the last-known snapshot file (session/snapcache.h), not a user view: no sources, no
     * DLQ entries; the DLQ totals per source, so each live source replaces its own */
    if (view && strcmp(view, "cache") == 0)
        return VPART_COUNTS | VPART_EXECS | VPART_WORKERS | VPART_QUEUES | VPART_DLQ_TOTALS;
    const rd_view *v = view_find(view);
    return v && v->mask ? v->mask : view_find("overview")->mask;
}

/* One execution in full (detail.h): its record as an object, null with why when none. */
static void add_detail(cJSON *root, const rd_model *m)
{
    add_str(root, MF_EXECUTION_ID, m->detail_id);
    cJSON *d = m->detail ? cJSON_Parse(m->detail) : NULL;
    cJSON_AddItemToObject(root, MF_EXECUTION, d ? d : cJSON_CreateNull());
    if (!d)
        add_str(root, MF_EXECUTION_WHY, m->detail_why ? m->detail_why : "not read");
}

/* When each DLQ's oldest dead letter will be deleted (dlqhorizon.h). */
static void add_horizons(cJSON *root, const rd_model *m, double now)
{
    rd_horizon *h;
    size_t n = dlq_horizons(m, now, &h);
    cJSON *arr = cJSON_AddArrayToObject(root, MF_DLQ_HORIZONS);
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, horizon_json(&h[i]));
    free(h);
}

/* Every *_json(item, now) builder, over one of the model's vectors. */
/* Where a broker is configured, each worker's "broker_depth": the broker's count of its own
 * queues (drain_broker_depth; null when the broker lists none of its), beside its own
 * "queue_depth", as the console's Workers view shows them (BROKER, OWN). */
static void add_broker_depths(cJSON *arr, const rd_model *m)
{
    if (!arr || !drain_has_broker(m))
        return;
    for (size_t i = 0; i < m->workers.n; i++) {
        cJSON *o = cJSON_GetArrayItem(arr, (int)i);
        long d = drain_broker_depth(m, &m->workers.items[i], NULL);
        if (!o)
            break;
        if (d >= 0)
            cJSON_AddNumberToObject(o, MF_BROKER_DEPTH, (double)d);
        else
            cJSON_AddNullToObject(o, MF_BROKER_DEPTH);
    }
}

#define ADD_ARRAY(root, key, vec, fn)                                  \
    do {                                                               \
        cJSON *arr_ = cJSON_AddArrayToObject(root, key);               \
        for (size_t i_ = 0; i_ < (vec).n; i_++)                        \
            cJSON_AddItemToArray(arr_, fn(&(vec).items[i_], now));     \
    } while (0)

char *model_to_json_at(const rd_model *m, const char *view, double now)
{
    return model_to_json_hist(m, view, now, NULL);
}

char *model_to_json_hist(const rd_model *m, const char *view, double now, const rd_history *h)
{
    return model_to_json_onset(m, view, now, h, h);
}

char *model_to_json_onset(const rd_model *m, const char *view, double now, const rd_history *h,
                          const rd_history *onset_h)
{
    unsigned v = view_mask(view);
    cJSON *root = cJSON_CreateObject();
    add_str(root, MF_VIEW, view ? view : "overview");
    if (v & VPART_SOURCES) {
        ADD_ARRAY(root, MF_SOURCES, m->sources, source_json);
        if (m->core.state != RD_CORE_NONE)
            cJSON_AddItemToObject(root, MF_CORE, record_json(&core_record, &m->core, now, NULL));
    }
    if ((v & (VPART_COUNTS | VPART_DLQ | VPART_GROUPS)) && model_partial(m))
        cJSON_AddBoolToObject(root, MF_PARTIAL, true);   /* a first sweep is under way */
    if (v & VPART_COUNTS) {
        ADD_ARRAY(root, MF_COUNTS, m->counts, count_json);
        add_long(root, MF_DLQ_TOTAL, m->dlq_total);
        add_long(root, MF_ORPHAN_SUSPECTS, m->orphan_suspects);
        add_num(root, MF_FAILING_RATE, m->failing_rate, m->failing_rate >= 0);
        /* the whole store's figures (null: the profile cannot say; fleet.c falls back) */
        add_long(root, MF_RETRY_ELIGIBLE, m->store_eligible);
        cJSON_AddBoolToObject(root, MF_RETRY_ELIGIBLE_BOUND, m->store_eligible_capped);
        cJSON_AddBoolToObject(root, MF_RETRY_ELIGIBLE_UPPER, m->store_eligible_upper);
        add_num(root, MF_OLDEST_QUEUED_AGE, ms(fmax(0, now - m->oldest_queued_at)),
                m->oldest_queued_at > 0);
        cJSON_AddBoolToObject(root, MF_QUEUED_NONE, m->oldest_queued_at == 0);
        rd_backlog b;
        model_backlog(m, &b);
        if (b.queues || b.dlqs) {    /* SQS: the backlog and the queues not draining */
            cJSON *o = cJSON_AddObjectToObject(root, MF_SQS_BACKLOG);
            add_long(o, MF_VISIBLE, b.visible);
            add_long(o, MF_IN_FLIGHT, b.in_flight);
            add_long(o, MF_DELAYED, b.delayed);
            add_long(o, MF_DLQ, b.dead);
            cJSON *nd = cJSON_AddArrayToObject(o, MF_NOT_DRAINING);
            for (size_t i = 0; i < m->queues.n; i++)
                if (m->queues.items[i].not_draining && m->queues.items[i].name)
                    cJSON_AddItemToArray(nd, cJSON_CreateString(m->queues.items[i].name));
        }
    }
    if (v & VPART_EXECS) {
        ADD_ARRAY(root, MF_EXECUTIONS, m->execs, exec_json);
        cJSON_AddBoolToObject(root, MF_EXECUTIONS_MORE, m->execs_more);
    }
    if (v & VPART_CHAIN) {
        add_str(root, MF_CHAIN_ID, m->chain_id);
        ADD_ARRAY(root, MF_CHAIN, m->chain, exec_json);
    }
    if (v & VPART_DETAIL)
        add_detail(root, m);
    if (v & VPART_WORKERS) {
        ADD_ARRAY(root, MF_WORKERS, m->workers, worker_json);
        add_broker_depths(cJSON_GetObjectItemCaseSensitive(root, MF_WORKERS), m);
    }
    if (v & VPART_QUEUES)
        ADD_ARRAY(root, MF_QUEUES, m->queues, queue_json);
    if (v & VPART_DLQ) {
        ADD_ARRAY(root, MF_DLQ, m->dlq, dlq_json);
        cJSON_AddBoolToObject(root, MF_DLQ_LOADED, m->dlq_loaded);
        if (m->dlq_peek_off)   /* read-only: the broker's and SQS's peeks were not done */
            cJSON_AddBoolToObject(root, MF_DLQ_PEEK_OFF, true);
        if (!(v & VPART_COUNTS))
            add_long(root, MF_DLQ_TOTAL, m->dlq_total);
        ADD_ARRAY(root, MF_DLQ_SOURCES, m->dlq_parts, dlq_part_json);
        add_horizons(root, m, now);
    } else if (v & VPART_DLQ_TOTALS) {
        ADD_ARRAY(root, MF_DLQ_SOURCES, m->dlq_parts, dlq_part_json);
    }
    if (v & VPART_GROUPS)
        add_groups(root, m, now, onset_h);
    if (h)
        history_json(root, h, now);
    char *txt = cJSON_Print(root);
    cJSON_Delete(root);
    if (!txt)
        abort();   /* cJSON only fails on OOM */
    char *out = json_text_safe(txt);
    cJSON_free(txt);
    return out;
}

