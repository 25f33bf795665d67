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
#include "model_tables.h"
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

/* The fields of record r from object o, by its table (model_tables.c); rec is zeroed. */
static void record_parse(const rd_record *r, const cJSON *o, void *rec)
{
    for (size_t i = 0; i < r->n; i++) {
        const rd_field *f = &r->fields[i];
        char *p = (char *)rec + f->off;
        if (f->flags & (FF_NOJSON | FF_NOREAD | FF_BORROWED))
            continue;
        switch (f->kind) {
        case FK_STR: *(char **)p = dup_str(o, f->key); break;
        case FK_BUF: get_fixed(o, f->key, p, f->size); break;
        /* json_long: finite and in range, or the default, before any cast */
        case FK_INT: *(int *)p = (int)json_long(o, f->key, f->def, 1000000000); break;
        case FK_LONG: *(long *)p = json_long(o, f->key, f->def, 1L << 50); break;
        case FK_RATE: *(double *)p = get_rate(o, f->key); break;
        case FK_TIME: *(double *)p = get_time(o, f->key); break;
        case FK_BOOL: *(bool *)p = json_true(o, f->key); break;
        case FK_FLAG:
            if (json_true(o, f->key))
                *(unsigned *)p |= (unsigned)f->size;
            break;
        case FK_NAME: f->parse(rec, json_str(o, f->key)); break;
        case FK_TEST: {
            const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, f->key);
            if (cJSON_IsBool(b))
                f->set(rec, cJSON_IsTrue(b));
            break;
        }
        case FK_AGE:
        case FK_STRUCT:
            break;
        }
    }
}

static void exec_parse(const cJSON *o, void *item, double now)
{
    rd_execution *e = item;
    record_parse(&exec_record, o, e);
    if (e->chain_root && e->id && strcmp(e->chain_root, e->id) == 0) {
        free(e->chain_root);   /* the root is itself */
        e->chain_root = NULL;
    }
    if (!e->next_retry_min)
        e->next_retry_min = get_time(o, MF_NEXT_RETRY_AT);
    if (!e->next_retry_max)
        e->next_retry_max = e->next_retry_min;
}

static void worker_parse(const cJSON *o, void *item, double now)
{
    rd_worker *w = item;
    record_parse(&worker_record, o, w);
    if (!(w->failure_rate >= 0 && w->failure_rate <= 1))   /* a fraction (probe_health.c) */
        w->failure_rate = -1;
    double age = json_num(o, MF_HEARTBEAT_AGE_S, NAN);
    if (!w->heartbeat_at && isfinite(age))
        w->heartbeat_at = sane_time(now - age);
    w->has_metrics = w->has_metrics || w->queue_depth >= 0 || w->failure_rate >= 0 ||
                     w->consecutive_failures >= 0;
}

static void queue_parse(const cJSON *o, void *item, double now)
{
    record_parse(&queue_record, o, item);
}

static void dlq_parse(const cJSON *o, void *item, double now)
{
    record_parse(&dlq_record, o, item);
}

static void source_parse(const cJSON *o, void *item, double now)
{
    rd_source_status *s = item;
    memset(s, 0, sizeof *s);
    record_parse(&source_record, o, s);
    s->tls_unverified = s->tls[0] && !json_true(o, MF_TLS_VERIFIED);
    double age = json_num(o, MF_AGE_MS, NAN);
    if (!s->last_ok && isfinite(age))
        s->last_ok = sane_time(now - age / 1000);
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
    memset(item, 0, sizeof(rd_count));
    record_parse(&count_record, o, item);
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
    memset(&m->core, 0, sizeof m->core);
    record_parse(&core_record, o, &m->core);
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
    if ((v = load_array(root, MF_SOURCES, sizeof(rd_source_status), source_parse, now, &n)))
        model_set_sources(m, v, n);
    if (cJSON_GetObjectItemCaseSensitive(root, MF_ORPHAN_SUSPECTS))
        model_set_orphan_suspects(m, json_long(root, MF_ORPHAN_SUSPECTS, -1, 1L << 50));
    if (cJSON_GetObjectItemCaseSensitive(root, MF_FAILING_RATE))
        model_set_failing_rate(m, get_rate(root, MF_FAILING_RATE));
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
