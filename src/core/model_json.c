#include "model_json.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "groups.h"
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

static cJSON *exec_json(const rd_execution *e, double now)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, "id", e->id);
    add_str(o, "status", e->status);
    cJSON_AddNumberToObject(o, "attempt", e->attempt);
    add_long(o, "max_attempts", e->max_attempts);
    cJSON_AddBoolToObject(o, "retry_eligible", e->elig.verdict == RD_ELIG_YES);
    add_str(o, "chain_root", e->chain_root ? e->chain_root : e->id);
    add_str(o, "error", e->error);
    add_str(o, "worker", e->worker);
    add_time(o, "next_retry_at", e->next_retry_min);
    add_str(o, "name", e->name);
    add_str(o, "parent_id", e->parent_id);
    add_str(o, "eligibility", elig_name(e->elig.verdict));
    add_str(o, "eligibility_reason", e->elig.why);
    cJSON_AddBoolToObject(o, "flagged", e->elig.flagged);
    add_str(o, "retry_of", e->retry_of);
    add_str(o, "reason", e->reason);
    add_str(o, "fingerprint", e->fingerprint);
    add_time(o, "created_at", e->created_at);
    add_time(o, "updated_at", e->updated_at);
    add_time(o, "finished_at", e->finished_at);
    add_time(o, "next_retry_min", e->next_retry_min);
    add_time(o, "next_retry_max", e->next_retry_max);
    cJSON_AddBoolToObject(o, "orphan_suspect", e->flags & RD_EXEC_ORPHAN);
    cJSON_AddBoolToObject(o, "overlapping", e->flags & RD_EXEC_OVERLAP);
    cJSON_AddBoolToObject(o, "malformed", e->flags & RD_EXEC_MALFORMED);
    cJSON_AddBoolToObject(o, "oversized", e->flags & RD_EXEC_OVERSIZED);
    return o;
}

static cJSON *worker_json(const rd_worker *w, double now)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, "id", w->id);
    add_str(o, "name", w->name);
    add_str(o, "status", w->status);
    add_str(o, "health", health_name(w->health));
    add_str(o, "health_reason", w->health_reason);
    add_num(o, "heartbeat_age_s", ms(now - ms(w->heartbeat_at)),
            ms(w->heartbeat_at) > 0);
    add_long(o, "queue_depth", w->queue_depth);
    add_str(o, "reported_health", w->reported_health);
    add_long(o, "in_flight", w->in_flight);
    add_long(o, "capacity", w->capacity);
    add_num(o, "failure_rate", w->failure_rate, w->failure_rate >= 0);
    add_long(o, "consecutive_failures", w->consecutive_failures);
    add_str(o, "tags", w->tags);
    add_time(o, "heartbeat_at", w->heartbeat_at);
    cJSON_AddBoolToObject(o, "has_metrics", w->has_metrics);
    return o;
}

static cJSON *queue_json(const rd_queue *q, double now)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, "name", q->name);
    add_str(o, "source", q->source);
    add_long(o, "depth", q->depth);
    add_long(o, "consumers", q->consumers);
    cJSON_AddBoolToObject(o, "is_dlq", q->is_dlq);
    add_long(o, "ready", q->ready);
    add_long(o, "unacked", q->unacked);
    add_num(o, "publish_rate", q->publish_rate, q->publish_rate >= 0);
    add_num(o, "deliver_rate", q->deliver_rate, q->deliver_rate >= 0);
    add_str(o, "dead_letter_exchange", q->dead_letter_exchange);
    add_long(o, "ttl_ms", q->ttl_ms);
    if (q->retention_s > 0) {        /* an SQS queue */
        add_long(o, "delayed", q->delayed);
        add_long(o, "max_receive", q->max_receive > 0 ? q->max_receive : -1);
        add_long(o, "retention_s", q->retention_s);
        cJSON_AddBoolToObject(o, "not_draining", q->not_draining);
    }
    return o;
}

static cJSON *dlq_json(const rd_dlq_entry *d, double now)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, "id", d->id);
    add_str(o, "queue", d->queue);
    add_str(o, "execution_id", d->execution_id);
    if (d->step_id)
        add_str(o, "step_id", d->step_id);
    add_str(o, "reason", d->reason);
    add_long(o, "count", d->count);
    add_time(o, "first_death_at", d->first_death_at);
    add_time(o, "last_death_at", d->last_death_at);
    add_str(o, "payload", d->payload);
    add_str(o, "origin_queue", d->origin_queue);
    cJSON_AddBoolToObject(o, "redelivered", d->redelivered);
    if (d->source)
        add_str(o, "source", d->source);
    if (d->sent_at > 0) {            /* an SQS message */
        add_long(o, "attempt", d->attempt > 0 ? d->attempt : -1);
        add_str(o, "task_type", d->task_type);
        add_time(o, "sent_at", d->sent_at);
    }
    return o;
}

/* One source's share of the DLQ: {"source", "total", "entries"}. */
static cJSON *dlq_part_json(const rd_dlq_part *p, double now)
{
    (void)now;
    cJSON *o = cJSON_CreateObject();
    add_str(o, "source", p->owner);
    add_long(o, "total", p->total);
    add_long(o, "entries", (long)p->n);
    cJSON_AddBoolToObject(o, "loaded", p->loaded);
    return o;
}

/* The core API's state: {"state", "identity", "error", "checked_at", "since",
 * "last_action", "last_action_failed", "last_action_at"}. */
static cJSON *core_json(const rd_core_status *c)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, "state", core_state_name(c->state));
    add_str(o, "identity", c->identity[0] ? c->identity : NULL);
    add_str(o, "error", c->error[0] ? c->error : NULL);
    add_time(o, "checked_at", c->checked_at);
    add_time(o, "since", c->since);
    add_str(o, "last_action", c->last_action[0] ? c->last_action : NULL);
    cJSON_AddBoolToObject(o, "last_action_failed", c->last_action_failed);
    add_time(o, "last_action_at", c->last_action_at);
    return o;
}

static cJSON *source_json(const rd_source_status *s, double now)
{
    cJSON *o = cJSON_CreateObject();
    char name[sizeof s->name + 1], err[sizeof s->error + 1];
    snprintf(name, sizeof name, "%.*s", (int)sizeof s->name, s->name);
    snprintf(err, sizeof err, "%.*s", (int)sizeof s->error, s->error);
    add_str(o, "name", name);
    add_str(o, "state", src_state_name(s->state));
    add_str(o, "error", err[0] ? err : NULL);
    /* an answer stamped a hair after `now` (rounding, another clock) is 0 old, never -1 */
    add_num(o, "age_ms", fmax(0, floor((now - ms(s->last_ok)) * 1000)), ms(s->last_ok) > 0);
    add_time(o, "last_ok", s->last_ok);
    add_time(o, "since", s->since);
    if (s->tls[0]) {
        char tls[sizeof s->tls + 1];
        snprintf(tls, sizeof tls, "%.*s", (int)sizeof s->tls, s->tls);
        add_str(o, "tls", tls);
        cJSON_AddBoolToObject(o, "tls_verified", !s->tls_unverified);
    }
    if (s->creds[0]) {               /* the provider's name only, never a key */
        char creds[sizeof s->creds + 1];
        snprintf(creds, sizeof creds, "%.*s", (int)sizeof s->creds, s->creds);
        add_str(o, "credentials", creds);
        add_time(o, "credentials_expire", s->creds_expires);
    }
    if (s->host[0] || s->role[0] || s->failover[0]) {   /* reading from replicas */
        cJSON *r = cJSON_AddObjectToObject(o, "replica");
        add_str(r, "host", s->host[0] ? s->host : NULL);
        add_str(r, "role", s->role[0] ? s->role : NULL);
        add_num(r, "lag_s", s->lag_s, s->lag_known);
        add_str(r, "failover", s->failover[0] ? s->failover : NULL);
        add_time(r, "failover_at", s->failover_at);
    }
    if (s->progress.active) {        /* a long first read: the views are partial */
        char text[200];
        source_progress_text(s, text, sizeof text);
        cJSON *p = cJSON_AddObjectToObject(o, "progress");
        add_long(p, "done", s->progress.done);
        add_long(p, "total", s->progress.total);
        add_num(p, "share", s->progress.share, s->progress.share >= 0);
        add_str(p, "text", text);
    }
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    for (size_t i = 0; i < s->n_notes && i < RD_SRC_NOTES; i++) {
        char note[RD_SRC_NOTE_LEN + 1];
        snprintf(note, sizeof note, "%.*s", (int)RD_SRC_NOTE_LEN, s->notes[i]);
        char *clean = sanitize_utf8(note, strlen(note));
        cJSON_AddItemToArray(notes, cJSON_CreateString(clean));
        free(clean);
    }
    return o;
}

static cJSON *count_json(const rd_count *c, double now)
{
    cJSON *o = cJSON_CreateObject();
    char st[sizeof c->status + 1];
    snprintf(st, sizeof st, "%.*s", (int)sizeof c->status, c->status);
    add_str(o, "status", st);
    add_long(o, "count", c->count);
    cJSON_AddBoolToObject(o, "estimated", c->estimated);
    cJSON_AddBoolToObject(o, "capped", c->capped);
    return o;
}

/* The error groups of the loaded executions (groups.h), trend over GROUPS_INTERVAL_S. */
static void add_groups(cJSON *root, const rd_model *m, double now)
{
    rd_group *g = NULL;
    size_t n = groups_build(m->execs.items, m->execs.n, NULL, now, GROUPS_INTERVAL_S, &g);
    cJSON_AddNumberToObject(root, "trend_interval_s", GROUPS_INTERVAL_S);
    cJSON *arr = cJSON_AddArrayToObject(root, "groups");
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        add_str(o, "fingerprint", g[i].fp);
        cJSON_AddNumberToObject(o, "count", (double)g[i].count);
        cJSON_AddNumberToObject(o, "retry_eligible", (double)g[i].eligible);
        cJSON_AddNumberToObject(o, "recent", (double)g[i].recent);
        cJSON_AddNumberToObject(o, "before", (double)g[i].before);
        add_str(o, "trend", trend_name(g[i].trend));
        add_time(o, "first_seen", g[i].first_seen);
        add_time(o, "last_seen", g[i].last_seen);
        cJSON *acts = cJSON_AddArrayToObject(o, "actions");
        for (size_t k = 0; k < g[i].n_actions; k++) {
            cJSON *a = cJSON_CreateObject();
            add_str(a, "name", g[i].actions[k].name);
            cJSON_AddNumberToObject(a, "count", (double)g[i].actions[k].count);
            cJSON_AddItemToArray(acts, a);
        }
        cJSON *ids = cJSON_AddArrayToObject(o, "members");
        for (size_t k = 0; k < g[i].n_members; k++) {
            const char *id = m->execs.items[g[i].members[k]].id;
            char *clean = sanitize_utf8(id ? id : "", id ? strlen(id) : 0);
            cJSON_AddItemToArray(ids, cJSON_CreateString(clean));
            free(clean);
        }
        add_str(o, "sample_error", g[i].sample);
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

/* Every *_json(item, now) builder, over one of the model's vectors. */
#define ADD_ARRAY(root, key, vec, fn)                                  \
    do {                                                               \
        cJSON *arr_ = cJSON_AddArrayToObject(root, key);               \
        for (size_t i_ = 0; i_ < (vec).n; i_++)                        \
            cJSON_AddItemToArray(arr_, fn(&(vec).items[i_], now));     \
    } while (0)

char *model_to_json_at(const rd_model *m, const char *view, double now)
{
    unsigned v = view_mask(view);
    cJSON *root = cJSON_CreateObject();
    add_str(root, "view", view ? view : "overview");
    if (v & VPART_SOURCES) {
        ADD_ARRAY(root, "sources", m->sources, source_json);
        if (m->core.state != RD_CORE_NONE)
            cJSON_AddItemToObject(root, "core", core_json(&m->core));
    }
    if ((v & (VPART_COUNTS | VPART_DLQ | VPART_GROUPS)) && model_partial(m))
        cJSON_AddBoolToObject(root, "partial", true);   /* a first sweep is under way */
    if (v & VPART_COUNTS) {
        ADD_ARRAY(root, "counts", m->counts, count_json);
        add_long(root, "dlq_total", m->dlq_total);
        add_long(root, "orphan_suspects", m->orphan_suspects);
        add_num(root, "failing_rate", m->failing_rate, m->failing_rate >= 0);
        rd_backlog b;
        model_backlog(m, &b);
        if (b.queues || b.dlqs) {    /* SQS: the backlog and the queues not draining */
            cJSON *o = cJSON_AddObjectToObject(root, "sqs_backlog");
            add_long(o, "visible", b.visible);
            add_long(o, "in_flight", b.in_flight);
            add_long(o, "delayed", b.delayed);
            add_long(o, "dlq", b.dead);
            cJSON *nd = cJSON_AddArrayToObject(o, "not_draining");
            for (size_t i = 0; i < m->queues.n; i++)
                if (m->queues.items[i].not_draining && m->queues.items[i].name)
                    cJSON_AddItemToArray(nd, cJSON_CreateString(m->queues.items[i].name));
        }
    }
    if (v & VPART_EXECS) {
        ADD_ARRAY(root, "executions", m->execs, exec_json);
        cJSON_AddBoolToObject(root, "executions_more", m->execs_more);
    }
    if (v & VPART_CHAIN) {
        add_str(root, "chain_id", m->chain_id);
        ADD_ARRAY(root, "chain", m->chain, exec_json);
    }
    if (v & VPART_WORKERS)
        ADD_ARRAY(root, "workers", m->workers, worker_json);
    if (v & VPART_QUEUES)
        ADD_ARRAY(root, "queues", m->queues, queue_json);
    if (v & VPART_DLQ) {
        ADD_ARRAY(root, "dlq", m->dlq, dlq_json);
        cJSON_AddBoolToObject(root, "dlq_loaded", m->dlq_loaded);
        if (m->dlq_peek_off)   /* read-only: the broker's and SQS's peeks were not done */
            cJSON_AddBoolToObject(root, "dlq_peek_off", true);
        if (!(v & VPART_COUNTS))
            add_long(root, "dlq_total", m->dlq_total);
        ADD_ARRAY(root, "dlq_sources", m->dlq_parts, dlq_part_json);
    } else if (v & VPART_DLQ_TOTALS) {
        ADD_ARRAY(root, "dlq_sources", m->dlq_parts, dlq_part_json);
    }
    if (v & VPART_GROUPS)
        add_groups(root, m, now);
    char *txt = cJSON_Print(root);
    cJSON_Delete(root);
    if (!txt)
        abort();   /* cJSON only fails on OOM */
    char *out = json_text_safe(txt);
    cJSON_free(txt);
    return out;
}

char *model_to_json(const rd_model *m, const char *view)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return model_to_json_at(m, view, (double)tv.tv_sec + tv.tv_usec / 1e6);
}
