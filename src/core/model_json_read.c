/* Reading a snapshot back into a model (model_from_json): the input side of model_json.h.
 * Outside data: every field optional, strings capped, numbers ranged. */
#include "model_json.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "model_fields.h"
#include "sanitize.h"
#include "xalloc.h"

#define JSON_MAX_STR (1u << 20)   /* strings read back are capped */

/* ---- input ----------------------------------------------------------- */

static char *dup_str(const cJSON *o, const char *k) { return json_strdup(o, k, JSON_MAX_STR); }

/* Into a fixed buffer: valid UTF-8, cut on a character boundary (so that what
 * is written back out reads in again unchanged). */
static void fixed_copy(const char *s, char *out, size_t cap)
{
    size_t n = strnlen(s, cap * 4);
    char *valid = sanitize_utf8(s, n);
    n = strlen(valid);
    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && ((unsigned char)valid[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(out, valid, n);
    out[n] = '\0';
    free(valid);
}

static void get_fixed(const cJSON *o, const char *k, char *out, size_t cap)
{
    const char *v = json_str(o, k);
    fixed_copy(v ? v : "", out, cap);
}

/* Epoch seconds up to 1e11 (the year 5138): beyond that, milliseconds of them are no
 * longer exact in a double, and a time printed and read back would move. 0 = unknown. */
static double sane_time(double t)
{
    return t > 0 && t < 1e11 ? t : 0;
}

static double get_time(const cJSON *o, const char *k)
{
    return sane_time(json_num(o, k, 0));
}

/* A rate (per second or per minute): up to 1e12, beyond that tampered (a figure printed
 * whole would fill its cell with digits); -1 = unknown. */
static double get_rate(const cJSON *o, const char *k)
{
    double r = json_num(o, k, -1);
    return r >= 0 && r <= 1e12 ? r : -1;
}

static rd_elig elig_parse(const cJSON *o)
{
    char e[24];
    get_fixed(o, MF_ELIGIBILITY, e, sizeof e);
    static const rd_elig all[] = { RD_ELIG_YES, RD_ELIG_NO, RD_ELIG_CONFIG_ERROR,
                                   RD_ELIG_UNKNOWN };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (strcmp(e, elig_name(all[i])) == 0)
            return all[i];
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, MF_RETRY_ELIGIBLE);
    return cJSON_IsBool(b) ? (cJSON_IsTrue(b) ? RD_ELIG_YES : RD_ELIG_NO) : RD_ELIG_UNKNOWN;
}

static void exec_parse(const cJSON *o, void *item, double now)
{
    rd_execution *e = item;
    e->id = dup_str(o, MF_ID);
    e->status = dup_str(o, MF_STATUS);
    e->attempt = (int)json_long(o, MF_ATTEMPT, 0, 1000000000);
    e->max_attempts = (int)json_long(o, MF_MAX_ATTEMPTS, -1, 1000000000);
    e->elig.verdict = elig_parse(o);
    get_fixed(o, MF_ELIGIBILITY_REASON, e->elig.why, sizeof e->elig.why);
    e->elig.flagged = json_true(o, MF_FLAGGED);
    e->chain_root = dup_str(o, MF_CHAIN_ROOT);
    if (e->chain_root && e->id && strcmp(e->chain_root, e->id) == 0) {
        free(e->chain_root);   /* the root is itself */
        e->chain_root = NULL;
    }
    e->error = dup_str(o, MF_ERROR);
    e->worker = dup_str(o, MF_WORKER);
    e->name = dup_str(o, MF_NAME);
    e->parent_id = dup_str(o, MF_PARENT_ID);
    e->retry_of = dup_str(o, MF_RETRY_OF);
    e->reason = dup_str(o, MF_REASON);
    e->fingerprint = dup_str(o, MF_FINGERPRINT);
    e->created_at = get_time(o, MF_CREATED_AT);
    e->updated_at = get_time(o, MF_UPDATED_AT);
    e->finished_at = get_time(o, MF_FINISHED_AT);
    e->next_retry_min = get_time(o, MF_NEXT_RETRY_MIN);
    if (!e->next_retry_min)
        e->next_retry_min = get_time(o, MF_NEXT_RETRY_AT);
    e->next_retry_max = get_time(o, MF_NEXT_RETRY_MAX);
    if (!e->next_retry_max)
        e->next_retry_max = e->next_retry_min;
    e->flags = (json_true(o, MF_ORPHAN_SUSPECT) ? RD_EXEC_ORPHAN : 0) |
               (json_true(o, MF_OVERLAPPING) ? RD_EXEC_OVERLAP : 0) |
               (json_true(o, MF_MALFORMED) ? RD_EXEC_MALFORMED : 0) |
               (json_true(o, MF_OVERSIZED) ? RD_EXEC_OVERSIZED : 0);
}

static rd_health health_parse(const char *s)
{
    static const rd_health all[] = { RD_HEALTH_HEALTHY, RD_HEALTH_DEGRADED,
                                     RD_HEALTH_UNHEALTHY };
    for (size_t i = 0; s && i < sizeof all / sizeof *all; i++)
        if (strcmp(s, health_name(all[i])) == 0)
            return all[i];
    return RD_HEALTH_UNKNOWN;
}

static void worker_parse(const cJSON *o, void *item, double now)
{
    rd_worker *w = item;
    w->id = dup_str(o, MF_ID);
    w->name = dup_str(o, MF_NAME);
    w->status = dup_str(o, MF_STATUS);
    char h[16];
    get_fixed(o, MF_HEALTH, h, sizeof h);
    w->health = health_parse(h);
    get_fixed(o, MF_HEALTH_REASON, w->health_reason, sizeof w->health_reason);
    w->heartbeat_at = get_time(o, MF_HEARTBEAT_AT);
    double age = json_num(o, MF_HEARTBEAT_AGE_S, NAN);
    if (!w->heartbeat_at && isfinite(age))
        w->heartbeat_at = sane_time(now - age);
    w->queue_depth = json_long(o, MF_QUEUE_DEPTH, -1, 1L << 50);
    w->reported_health = dup_str(o, MF_REPORTED_HEALTH);
    w->in_flight = (int)json_long(o, MF_IN_FLIGHT, -1, 1000000000);
    w->capacity = (int)json_long(o, MF_CAPACITY, -1, 1000000000);
    w->failure_rate = json_num(o, MF_FAILURE_RATE, -1);
    if (!(w->failure_rate >= 0 && w->failure_rate <= 1))   /* a fraction (probe_health.c) */
        w->failure_rate = -1;
    w->consecutive_failures = (int)json_long(o, MF_CONSECUTIVE_FAILURES, -1, 1000000000);
    w->tags = dup_str(o, MF_TAGS);
    w->has_metrics = json_true(o, MF_HAS_METRICS) || w->queue_depth >= 0 ||
                     w->failure_rate >= 0 || w->consecutive_failures >= 0;
}

static void queue_parse(const cJSON *o, void *item, double now)
{
    rd_queue *q = item;
    q->name = dup_str(o, MF_NAME);
    q->depth = json_long(o, MF_DEPTH, -1, 1L << 50);
    q->consumers = (int)json_long(o, MF_CONSUMERS, -1, 1000000000);
    q->is_dlq = json_true(o, MF_IS_DLQ);
    q->ready = json_long(o, MF_READY, -1, 1L << 50);
    q->unacked = json_long(o, MF_UNACKED, -1, 1L << 50);
    q->publish_rate = get_rate(o, MF_PUBLISH_RATE);
    q->deliver_rate = get_rate(o, MF_DELIVER_RATE);
    q->dead_letter_exchange = dup_str(o, MF_DEAD_LETTER_EXCHANGE);
    q->ttl_ms = json_long(o, MF_TTL_MS, -1, 1L << 50);
    q->delayed = json_long(o, MF_DELAYED, 0, 1L << 50);
    q->max_receive = json_long(o, MF_MAX_RECEIVE, 0, 1L << 50);
    q->retention_s = json_long(o, MF_RETENTION_S, 0, 1L << 50);
    q->not_draining = json_true(o, MF_NOT_DRAINING);
}

static void dlq_parse(const cJSON *o, void *item, double now)
{
    rd_dlq_entry *d = item;
    d->id = dup_str(o, MF_ID);
    d->queue = dup_str(o, MF_QUEUE);
    d->execution_id = dup_str(o, MF_EXECUTION_ID);
    d->step_id = dup_str(o, MF_STEP_ID);
    d->reason = dup_str(o, MF_REASON);
    d->count = json_long(o, MF_COUNT, -1, 1L << 50);
    d->first_death_at = get_time(o, MF_FIRST_DEATH_AT);
    d->last_death_at = get_time(o, MF_LAST_DEATH_AT);
    d->payload = dup_str(o, MF_PAYLOAD);
    d->origin_queue = dup_str(o, MF_ORIGIN_QUEUE);
    d->redelivered = json_true(o, MF_REDELIVERED);
    d->attempt = (int)json_long(o, MF_ATTEMPT, 0, 1000000000);
    d->task_type = dup_str(o, MF_TASK_TYPE);
    d->sent_at = get_time(o, MF_SENT_AT);
}

static void source_parse(const cJSON *o, void *item, double now)
{
    rd_source_status *s = item;
    char st[16];
    memset(s, 0, sizeof *s);
    get_fixed(o, MF_NAME, s->name, sizeof s->name);
    get_fixed(o, MF_STATE, st, sizeof st);
    static const rd_src_state all[] = { RD_SRC_OK, RD_SRC_STALE, RD_SRC_DOWN };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (strcmp(st, src_state_name(all[i])) == 0)
            s->state = all[i];
    get_fixed(o, MF_ERROR, s->error, sizeof s->error);
    get_fixed(o, MF_TLS, s->tls, sizeof s->tls);
    get_fixed(o, MF_PUSH, s->push, sizeof s->push);
    s->tls_unverified = s->tls[0] && !json_true(o, MF_TLS_VERIFIED);
    s->last_ok = get_time(o, MF_LAST_OK);
    double age = json_num(o, MF_AGE_MS, NAN);
    if (!s->last_ok && isfinite(age))
        s->last_ok = sane_time(now - age / 1000);
    s->since = get_time(o, MF_SINCE);
    const cJSON *notes = cJSON_GetObjectItemCaseSensitive(o, MF_NOTES);
    const cJSON *it;
    if (cJSON_IsArray(notes))
        cJSON_ArrayForEach(it, notes) {
            if (s->n_notes == RD_SRC_NOTES)
                break;
            if (cJSON_IsString(it) && it->valuestring)
                fixed_copy(it->valuestring, s->notes[s->n_notes++], RD_SRC_NOTE_LEN);
        }
}

static void count_parse(const cJSON *o, void *item, double now)
{
    rd_count *c = item;
    memset(c, 0, sizeof *c);
    get_fixed(o, MF_STATUS, c->status, sizeof c->status);
    c->count = json_long(o, MF_COUNT, -1, 1L << 50);
    c->estimated = json_true(o, MF_ESTIMATED);
    c->capped = json_true(o, MF_CAPPED);
}

static size_t array_objects(const cJSON *root, const char *key, const cJSON ***out)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key);
    *out = NULL;
    if (!cJSON_IsArray(a))
        return (size_t)-1;
    size_t n = 0, cap = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, a) {
        if (!cJSON_IsObject(it))
            continue;
        xgrow(out, &cap, n + 1, sizeof **out);
        (*out)[n++] = it;
    }
    return n;
}

typedef void (*parse_fn)(const cJSON *o, void *item, double now);

/* Array `key` of objects as a new vector of `size`-byte items; NULL when absent. */
static void *load_array(const cJSON *root, const char *key, size_t size, parse_fn fn,
                        double now, size_t *n)
{
    const cJSON **objs;
    *n = array_objects(root, key, &objs);
    if (*n == (size_t)-1) {
        *n = 0;
        return NULL;
    }
    char *items = xcalloc(*n ? *n : 1, size);
    for (size_t i = 0; i < *n; i++)
        fn(objs[i], items + i * size, now);
    free(objs);
    return items;
}

typedef void (*part_set_fn)(rd_model *m, const char *owner, void *items, size_t n);

static void set_dlq_part(rd_model *m, const char *o, void *v, size_t n)
{
    model_dlq_set(m, o, v, n);
}

static void set_queue_part(rd_model *m, const char *o, void *v, size_t n)
{
    model_set_queues(m, o, v, n);
}

/* Hands the n items v (of `size` bytes, parsed from the objects of root[key]) to their owners:
 * each object's "source", "snapshot" when absent, in the order of first appearance. The
 * owners take the members; v itself is freed. */
static void load_parts(rd_model *m, const cJSON *root, const char *key, void *v, size_t n,
                       size_t size, part_set_fn set)
{
    const cJSON **objs;
    array_objects(root, key, &objs);
    char **owner = xcalloc(n ? n : 1, sizeof *owner);
    for (size_t i = 0; i < n; i++) {
        owner[i] = dup_str(objs[i], MF_SOURCE);
        if (!owner[i])
            owner[i] = xstrdup("snapshot");
    }
    for (size_t i = 0; i < n; i++) {
        if (!owner[i])
            continue;                /* handed with an earlier owner */
        char *o = owner[i], *mine = xcalloc(n, size);
        size_t k = 0;
        for (size_t j = i; j < n; j++)
            if (owner[j] && (j == i || strcmp(owner[j], o) == 0)) {
                memcpy(mine + k++ * size, (char *)v + j * size, size);
                if (j != i) {
                    free(owner[j]);
                    owner[j] = NULL;
                }
            }
        set(m, o, mine, k);
        free(o);
        owner[i] = NULL;
    }
    free(objs);
    free(owner);
    free(v);
}

/* The DLQ of a snapshot: entries grouped by their source, totals from "dlq_sources" (or
 * "dlq_total" as one share). A snapshot's DLQ replaces the model's. */
static void load_dlq(rd_model *m, const cJSON *root, double now)
{
    size_t n, np;
    rd_dlq_entry *v = load_array(root, MF_DLQ, sizeof *v, dlq_parse, now, &n);
    const cJSON **parts;
    bool has_total = cJSON_GetObjectItemCaseSensitive(root, MF_DLQ_TOTAL) != NULL;
    if (!v && !has_total)
        return;
    model_dlq_reset(m);
    if (v) {
        load_parts(m, root, MF_DLQ, v, n, sizeof *v, set_dlq_part);
        /* an empty "dlq" array is a peek that found nothing, unless it says otherwise */
        const cJSON *dl = cJSON_GetObjectItemCaseSensitive(root, MF_DLQ_LOADED);
        if (!n && (!cJSON_IsBool(dl) || cJSON_IsTrue(dl)))
            model_dlq_set(m, "snapshot", NULL, 0);
    }
    np = array_objects(root, MF_DLQ_SOURCES, &parts);
    if (np == (size_t)-1) {
        model_dlq_total(m, "snapshot", json_long(root, MF_DLQ_TOTAL, -1, 1L << 50));
        return;
    }
    for (size_t i = 0; i < np; i++) {
        char *o = dup_str(parts[i], MF_SOURCE);
        if (o && *o)
            model_dlq_total(m, o, json_long(parts[i], MF_TOTAL, -1, 1L << 50));
        free(o);
    }
    free(parts);
}

static void load_core(rd_model *m, const cJSON *root)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, MF_CORE);
    if (!cJSON_IsObject(o))
        return;
    rd_core_status *c = &m->core;
    char st[16];
    get_fixed(o, MF_STATE, st, sizeof st);
    static const rd_core_state all[] = { RD_CORE_CHECKING, RD_CORE_OK, RD_CORE_ERROR,
                                         RD_CORE_DOWN };
    c->state = RD_CORE_NONE;
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (strcmp(st, core_state_name(all[i])) == 0)
            c->state = all[i];
    get_fixed(o, MF_IDENTITY, c->identity, sizeof c->identity);
    get_fixed(o, MF_ERROR, c->error, sizeof c->error);
    c->checked_at = get_time(o, MF_CHECKED_AT);
    c->since = get_time(o, MF_SINCE);
    get_fixed(o, MF_LAST_ACTION, c->last_action, sizeof c->last_action);
    c->last_action_failed = json_true(o, MF_LAST_ACTION_FAILED);
    c->last_action_at = get_time(o, MF_LAST_ACTION_AT);
}

static void load_model(rd_model *m, const cJSON *root, double now)
{
    size_t n;
    void *v;
    if ((v = load_array(root, MF_EXECUTIONS, sizeof(rd_execution), exec_parse, now, &n)))
        model_set_execs(m, v, n, json_true(root, MF_EXECUTIONS_MORE));
    if ((v = load_array(root, MF_CHAIN, sizeof(rd_execution), exec_parse, now, &n))) {
        char *id = dup_str(root, MF_CHAIN_ID);
        model_set_chain(m, id, v, n);
        free(id);
    }
    if ((v = load_array(root, MF_RUNNING, sizeof(rd_execution), exec_parse, now, &n))) {
        char *w = dup_str(root, MF_RUNNING_WORKER);   /* the drain cockpit's worker */
        model_set_running(m, w, v, n, true);
        free(w);
    }
    if ((v = load_array(root, MF_WORKERS, sizeof(rd_worker), worker_parse, now, &n)))
        model_set_workers(m, v, n);
    if ((v = load_array(root, MF_QUEUES, sizeof(rd_queue), queue_parse, now, &n))) {
        model_queues_reset(m);      /* a snapshot's queues replace the model's */
        load_parts(m, root, MF_QUEUES, v, n, sizeof(rd_queue), set_queue_part);
    }
    load_dlq(m, root, now);
    load_core(m, root);
    if ((v = load_array(root, MF_COUNTS, sizeof(rd_count), count_parse, now, &n)))
        model_set_counts(m, v, n);
    if ((v = load_array(root, MF_SOURCES, sizeof(rd_source_status), source_parse, now, &n))) {
        free(m->sources.items);
        m->sources.items = v;
        m->sources.n = m->sources.cap = n;
    }
    if (cJSON_GetObjectItemCaseSensitive(root, MF_ORPHAN_SUSPECTS))
        m->orphan_suspects = json_long(root, MF_ORPHAN_SUSPECTS, -1, 1L << 50);
    if (cJSON_GetObjectItemCaseSensitive(root, MF_FAILING_RATE))
        m->failing_rate = get_rate(root, MF_FAILING_RATE);
    model_changed(m);
}

bool model_from_json(rd_model *m, const char *json, double now, char *err, size_t errcap)
{
    if (err && errcap)
        err[0] = '\0';
    cJSON *root = json ? cJSON_Parse(json) : NULL;
    if (!cJSON_IsObject(root)) {
        if (err && errcap)
            snprintf(err, errcap, root ? "JSON is not an object" : "malformed JSON");
        cJSON_Delete(root);
        return false;
    }
    double at = sane_time(json_num(root, MF_NOW, 0));   /* the snapshot's own time */
    load_model(m, root, at ? at : now);
    cJSON_Delete(root);
    return true;
}
