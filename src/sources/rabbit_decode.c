#include "rabbit_decode.h"

#include <cjson/cJSON.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/jsonget.h"
#include "../core/textutil.h"
#include "../core/xalloc.h"
#include "redis_record.h"            /* alakai_parse_time: RFC 3339 / epoch text */

enum { RB_NAME_CAP = 512, RB_MAX_QUEUES = 20000 };

void rb_globs_parse(rb_globs *g, const char *csv)
{
    memset(g, 0, sizeof *g);
    if (!csv)
        return;
    text_span *sp = text_split_all(csv, TEXT_LIST_WORDS, &g->n);
    g->v = xcalloc(g->n ? g->n : 1, sizeof *g->v);
    for (size_t i = 0; i < g->n; i++)
        g->v[i] = xstrndup(sp[i].s, sp[i].len);
    free(sp);
}

void rb_globs_free(rb_globs *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->v[i]);
    free(g->v);
    memset(g, 0, sizeof *g);
}

bool rb_globs_match(const rb_globs *g, const char *name)
{
    for (size_t i = 0; i < g->n; i++)
        if (fnmatch(g->v[i], name, 0) == 0)
            return true;
    return false;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

bool rb_is_dlq(const rb_globs *dlq, const char *name)
{
    return rb_globs_match(dlq, name) || ends_with(name, ".dlq") || ends_with(name, "_dlq") ||
           ends_with(name, ".dlx.queue");
}

void rb_queue_page_free(rb_queue_page *p)
{
    for (size_t i = 0; i < p->n; i++)
        queue_clear(&p->items[i]);
    free(p->items);
    memset(p, 0, sizeof *p);
}

static cJSON *parse(const char *body, size_t len)
{
    char *buf = xmalloc(len + 1);
    memcpy(buf, body, len);
    buf[len] = '\0';
    cJSON *root = cJSON_ParseWithLengthOpts(buf, len + 1, NULL, 1);
    free(buf);
    return root;
}

static long num_or(const cJSON *o, const char *key, long dflt)
{
    return json_long(o, key, dflt, 9000000000000000L);
}

static double rate_of(const cJSON *stats, const char *key)
{
    double r = json_num(json_obj(stats, key), "rate", -1);
    return r >= 0 ? r : -1;
}

static char *capped(const char *s, size_t cap)
{
    size_t n = strlen(s);
    if (n >= cap) {
        n = cap - 1;
        /* back to the start of a UTF-8 character, at most 3 bytes: a longer run of
         * continuation bytes is invalid anyway (sanitized at display), not cut to "" */
        size_t stop = n > 3 ? n - 3 : 0, m = n;
        while (m > stop && ((unsigned char)s[m] & 0xC0) == 0x80)
            m--;
        if (((unsigned char)s[m] & 0xC0) != 0x80)
            n = m;
    }
    return xstrndup(s, n);
}

/* ---- a queue's limits: its arguments and its effective policy ---------------------------- */

enum { RB_NOTE_CAP = 160 };

/* A limit's value as the broker holds it: a whole number of 0 or more (the arguments may be
 * any AMQP type: a text, a float, a negative are stated, never read as a number). */
static bool limit_value(const cJSON *v, long *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
        v->valuedouble != floor(v->valuedouble) || v->valuedouble > 9e15)
        return false;
    *out = (long)v->valuedouble;
    return true;
}

static void note_set(rd_queue *q, const char *what)
{
    if (!q->limits_note)             /* the first problem is enough to say it is unknown */
        q->limits_note = capped(what, RB_NOTE_CAP);
}

/* "x-message-ttl \"1h\" is not a whole number of 0 or more" (the value as the broker shows it) */
static void note_bad(rd_queue *q, const char *prefix, const char *key, const cJSON *v)
{
    char *shown = cJSON_PrintUnformatted(v);
    char buf[RB_NOTE_CAP];
    snprintf(buf, sizeof buf, "%s%s %.60s is not a whole number of 0 or more", prefix, key,
             shown ? shown : "?");
    free(shown);
    note_set(q, buf);
}

/* One numeric limit: the lower of the argument (arg_key) and the policy's (pol_key), as
 * RabbitMQ applies it; -1 when neither sets it. *by_policy when the policy's is the lower. */
static long limit_of(rd_queue *q, const cJSON *args, const char *arg_key, const cJSON *pol,
                     const char *pol_key, bool *by_policy)
{
    long a = -1, p = -1, v;
    const cJSON *av = cJSON_GetObjectItemCaseSensitive(args, arg_key);
    const cJSON *pv = cJSON_GetObjectItemCaseSensitive(pol, pol_key);
    if (av && limit_value(av, &v))
        a = v;
    else if (av)
        note_bad(q, "", arg_key, av);
    if (pv && limit_value(pv, &v))
        p = v;
    else if (pv)
        note_bad(q, "policy ", pol_key, pv);
    if (by_policy)
        *by_policy = p >= 0 && (a < 0 || p < a);
    return a < 0 ? p : p < 0 ? a : (a < p ? a : p);
}

/* x-overflow (the argument wins over the policy's overflow): drop-head (the default) drops
 * the oldest; reject-publish and reject-publish-dlx refuse the new message instead. */
static void overflow_of(rd_queue *q, const cJSON *args, const cJSON *pol)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, "x-overflow");
    const char *key = "x-overflow";
    if (!v) {
        v = cJSON_GetObjectItemCaseSensitive(pol, "overflow");
        key = "policy overflow";
    }
    if (!v)
        return;
    if (cJSON_IsString(v) && strcmp(v->valuestring, "drop-head") == 0)
        return;
    if (cJSON_IsString(v) && strncmp(v->valuestring, "reject-publish", 14) == 0 &&
        (!v->valuestring[14] || strcmp(v->valuestring + 14, "-dlx") == 0))
        q->overflow_rejects = true;
    else {
        char *shown = cJSON_PrintUnformatted(v), buf[RB_NOTE_CAP];
        snprintf(buf, sizeof buf, "%s %.60s is not drop-head, reject-publish or "
                 "reject-publish-dlx", key, shown ? shown : "?");
        free(shown);
        note_set(q, buf);
    }
}

/* The limits that delete a DLQ's messages (core/dlqhorizon.h). A broker that does not show
 * the arguments or the policy's definition (a proxy, a column left out, an older broker)
 * leaves them unknown, said in limits_note. */
static void limits_from_json(const cJSON *it, rd_queue *q)
{
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(it, "arguments");
    const cJSON *pol = cJSON_GetObjectItemCaseSensitive(it, "effective_policy_definition");
    const cJSON *pname = cJSON_GetObjectItemCaseSensitive(it, "policy");
    const char *policy = cJSON_IsString(pname) && pname->valuestring[0] ? pname->valuestring : NULL;
    q->max_length = q->expires_ms = -1;
    if (!cJSON_IsObject(args)) {
        args = NULL;
        note_set(q, "the broker does not show the queue's arguments");
    }
    if (!cJSON_IsObject(pol)) {
        pol = NULL;
        char buf[RB_NOTE_CAP];
        snprintf(buf, sizeof buf, "policy %.80s: the broker does not show its definition",
                 policy ? policy : "");
        if (policy)
            note_set(q, buf);
        else if (!cJSON_IsNull(pname))
            note_set(q, "the broker does not show the queue's policy");
    }
    bool ttl_policy = false;
    q->ttl_ms = limit_of(q, args, "x-message-ttl", pol, "message-ttl", &ttl_policy);
    if (ttl_policy && policy) {
        char buf[RB_NOTE_CAP];
        snprintf(buf, sizeof buf, "policy %s", policy);
        q->ttl_from = capped(buf, RB_NOTE_CAP);
    }
    q->max_length = limit_of(q, args, "x-max-length", pol, "max-length", NULL);
    q->expires_ms = limit_of(q, args, "x-expires", pol, "expires", NULL);
    overflow_of(q, args, pol);
}

static void queue_from_json(const cJSON *it, const char *name, bool dlq, rd_queue *q)
{
    memset(q, 0, sizeof *q);
    q->name = capped(name, RB_NAME_CAP);
    q->depth = num_or(it, "messages", -1);
    q->ready = num_or(it, "messages_ready", -1);
    q->unacked = num_or(it, "messages_unacknowledged", -1);
    long consumers = num_or(it, "consumers", -1);
    q->consumers = consumers <= INT_MAX ? (int)consumers : -1;   /* no wrap to negative */
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(it, "message_stats");
    q->publish_rate = rate_of(st, "publish_details");
    q->deliver_rate = rate_of(st, "deliver_get_details");
    q->is_dlq = dlq;
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(it, "arguments");
    const cJSON *dlx = cJSON_GetObjectItemCaseSensitive(args, "x-dead-letter-exchange");
    if (cJSON_IsString(dlx))
        q->dead_letter_exchange = capped(dlx->valuestring, RB_NAME_CAP);
    limits_from_json(it, q);
}

bool rb_decode_queues(const char *body, size_t len, const rb_globs *show,
                      const rb_globs *dlq, rb_queue_page *out, char *why, size_t cap)
{
    cJSON *root = parse(body, len);
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "items");
    if (!cJSON_IsArray(items)) {
        snprintf(why, cap, "broker answered something that is not a queue list");
        cJSON_Delete(root);
        return false;
    }
    out->page_count = num_or(root, "page_count", -1);
    const cJSON *it;
    cJSON_ArrayForEach(it, items) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (!cJSON_IsString(nm) || out->n >= RB_MAX_QUEUES)
            continue;
        bool is_dlq = rb_is_dlq(dlq, nm->valuestring);
        if (!is_dlq && show->n > 0 && !rb_globs_match(show, nm->valuestring))
            continue;
        xgrow(&out->items, &out->cap, out->n + 1, sizeof *out->items);
        queue_from_json(it, nm->valuestring, is_dlq, &out->items[out->n++]);
    }
    cJSON_Delete(root);
    return true;
}

/* ---- DLQ messages ---------------------------------------------------------------------- */

static double time_of(const cJSON *v)
{
    double t = 0;
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble > 0)
        t = v->valuedouble > 1e11 ? v->valuedouble / 1000 : v->valuedouble;
    else if (cJSON_IsString(v))
        alakai_parse_time(v->valuestring, &t);
    return t;
}

/* An id as text: strings as they are, integral numbers without exponent. */
static char *id_of(const cJSON *v)
{
    if (cJSON_IsString(v) && v->valuestring[0])
        return capped(v->valuestring, 128);
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && fabs(v->valuedouble) < 9.007e15 &&
        v->valuedouble == floor(v->valuedouble))
        return xasprintf("%.0f", v->valuedouble);
    return NULL;
}

/* Attune envelope {payload:{execution_id}}, flat {execution_id}, Tasker {task_uuid},
 * Alakai {taskId}. */
static char *execution_of(const char *payload)
{
    cJSON *root = parse(payload, strlen(payload));
    static const char *const keys[] = { "execution_id", "executionId", "task_uuid",
                                        "step_uuid", "taskId", "job_id" };
    char *id = NULL;
    const cJSON *inner = cJSON_GetObjectItemCaseSensitive(root, "payload");
    for (int pass = 0; pass < 2 && !id; pass++) {
        const cJSON *o = pass == 0 ? inner : root;
        if (!cJSON_IsObject(o))
            continue;
        for (size_t i = 0; i < sizeof keys / sizeof *keys && !id; i++)
            id = id_of(cJSON_GetObjectItemCaseSensitive(o, keys[i]));
    }
    cJSON_Delete(root);
    return id;
}

static void death_of(const cJSON *headers, rd_dlq_entry *d)
{
    const cJSON *xd = cJSON_GetObjectItemCaseSensitive(headers, "x-death");
    const cJSON *e;
    bool first = true;
    if (!cJSON_IsArray(xd))
        xd = NULL;
    for (e = xd ? xd->child : NULL; e; e = e->next) {
        double t = time_of(cJSON_GetObjectItemCaseSensitive(e, "time"));
        if (first) {                 /* newest first */
            const char *reason = json_str(e, "reason"), *queue = json_str(e, "queue");
            d->reason = reason ? capped(reason, 64) : NULL;
            d->origin_queue = queue ? capped(queue, RB_NAME_CAP) : NULL;
            d->count = num_or(e, "count", -1);
            first = false;
        }
        if (t > 0 && (d->first_death_at == 0 || t < d->first_death_at))
            d->first_death_at = t;
        if (t > d->last_death_at)
            d->last_death_at = t;
    }
    if (!d->reason && json_str(headers, "x-first-death-reason"))
        d->reason = capped(json_str(headers, "x-first-death-reason"), 64);
    if (!d->origin_queue && json_str(headers, "x-first-death-queue"))
        d->origin_queue = capped(json_str(headers, "x-first-death-queue"), RB_NAME_CAP);
}

/* Standard base64 → bytes (NUL-terminated, *n = length); NULL when invalid. */
static char *b64_decode(const char *in, size_t *n)
{
    size_t len = strlen(in);
    char *out = xmalloc(len / 4 * 3 + 4);
    unsigned acc = 0;
    int bits = 0;
    *n = 0;
    for (const char *p = in; *p && *p != '='; p++) {
        const char *digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const char *c = strchr(digits, *p);
        if (!c || !*p) {
            if (*p == '\n' || *p == '\r')
                continue;
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)(c - digits);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[(*n)++] = (char)((acc >> bits) & 0xFF);
        }
    }
    out[*n] = '\0';
    return out;
}

/* Payload text: as sent, or base64-decoded when it is not valid UTF-8 (RabbitMQ's
 * "auto" encoding); raw bytes are kept (capped) and sanitized at display time. */
static void payload_of(const char *payload, const char *enc, rd_dlq_entry *d)
{
    bool b64 = enc && strcmp(enc, "base64") == 0;
    size_t n = 0;
    char *dec = b64 ? b64_decode(payload, &n) : NULL;
    if (b64 && (!dec || strlen(dec) != n)) {         /* undecodable or binary (NUL) */
        d->payload = xasprintf("(base64) %.*s", RB_PAYLOAD_CAP, payload);
        free(dec);
        return;
    }
    const char *text = dec ? dec : payload;
    d->payload = capped(text, RB_PAYLOAD_CAP);
    d->execution_id = execution_of(text);
    free(dec);
}

static void message_of(const cJSON *m, const char *queue, size_t idx, rd_dlq_entry *d)
{
    memset(d, 0, sizeof *d);
    d->count = -1;
    d->queue = xstrdup(queue);
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(m, "properties");
    const char *mid = json_str(props, "message_id");
    const cJSON *exp = cJSON_GetObjectItemCaseSensitive(props, "expiration");
    if (exp && !cJSON_IsNull(exp)) {     /* its own TTL: kept as the broker shows it */
        char *t = cJSON_IsString(exp) ? NULL : cJSON_PrintUnformatted(exp);
        d->expiration = capped(t ? t : exp->valuestring, 64);
        free(t);
    }
    d->id = mid && *mid ? capped(mid, 128) : xasprintf("%s#%zu", queue, idx + 1);
    death_of(cJSON_GetObjectItemCaseSensitive(props, "headers"), d);
    d->redelivered = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "redelivered"));
    const char *payload = json_str(m, "payload"), *enc = json_str(m, "payload_encoding");
    if (payload)
        payload_of(payload, enc, d);
}

bool rb_decode_messages(const char *body, size_t len, const char *queue,
                        rd_dlq_entry **items, size_t *n, char *why, size_t cap)
{
    cJSON *root = parse(body, len);
    if (!cJSON_IsArray(root)) {
        snprintf(why, cap, "broker answered something that is not a message list");
        cJSON_Delete(root);
        return false;
    }
    size_t cnt = (size_t)cJSON_GetArraySize(root), i = 0, capn = *n;
    *items = xrealloc(*items, (capn + cnt + 1) * sizeof **items);
    const cJSON *m;
    cJSON_ArrayForEach(m, root) {
        message_of(m, queue, i++, &(*items)[*n]);
        (*n)++;
    }
    cJSON_Delete(root);
    return true;
}
