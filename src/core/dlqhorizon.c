/* When each DLQ's oldest dead letter will be deleted (dlqhorizon.h). */
#include "dlqhorizon.h"

#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "health.h"                  /* format_age */
#include "model_fields.h"
#include "xalloc.h"

/* The best figures found for one DLQ: the soonest exact (or estimated) one and the soonest
 * bound, each with its basis; a note stands when neither is known. */
typedef struct best {
    double exact, bound;
    bool est;
    char exact_basis[HORIZON_BASIS_LEN], bound_basis[HORIZON_BASIS_LEN];
    char note[HORIZON_BASIS_LEN];
    bool note_kept;                  /* the note says nothing deletes them */
} best;

static void vput(char *out, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void vput(char *out, const char *fmt, va_list ap)
{
    vsnprintf(out, HORIZON_BASIS_LEN, fmt, ap);
}

static void exact(best *b, double s, bool est, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void exact(best *b, double s, bool est, const char *fmt, ...)
{
    s = s < 0 ? 0 : floor(s);        /* due already: the broker deletes it now */
    if (b->exact >= 0 && b->exact <= s)
        return;
    b->exact = s;
    b->est = est;
    va_list ap;
    va_start(ap, fmt);
    vput(b->exact_basis, fmt, ap);
    va_end(ap);
}

static void bound(best *b, double s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void bound(best *b, double s, const char *fmt, ...)
{
    s = s < 0 ? 0 : floor(s);
    if (b->bound >= 0 && b->bound <= s)
        return;
    b->bound = s;
    va_list ap;
    va_start(ap, fmt);
    vput(b->bound_basis, fmt, ap);
    va_end(ap);
}

static void note(best *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(best *b, const char *fmt, ...)
{
    if (b->note[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vput(b->note, fmt, ap);
    va_end(ap);
}

/* The figures judged together: an exact one stands unless a bound is sooner. */
static void settle(const best *b, rd_horizon *h)
{
    if (b->exact >= 0 && (b->bound < 0 || b->exact <= b->bound)) {
        h->in_s = b->exact;
        h->estimated = b->est;
        snprintf(h->basis, sizeof h->basis, "%s", b->exact_basis);
    } else if (b->bound >= 0) {
        h->within_s = b->bound;
        snprintf(h->basis, sizeof h->basis, "%s", b->bound_basis);
    } else {
        snprintf(h->basis, sizeof h->basis, "%s", b->note);
        h->kept = b->note_kept;
    }
}

void horizon_dur(double seconds, char *out, size_t cap)
{
    double ms = round(seconds * 1000);
    if (ms < 1000 || fmod(ms, 1000) != 0) {
        snprintf(out, cap, "%.0fms", ms);
        return;
    }
    long s = (long)(ms / 1000);
    static const struct { long n; const char *u; } units[] = {
        {86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"},
    };
    size_t used = 0;
    int parts = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof units / sizeof *units && s > 0 && parts < 2; i++) {
        if (s < units[i].n)
            continue;
        /* two units at most, and only when the rest is exact: "1h30m", else "90s" */
        long k = s / units[i].n;
        if (parts == 1 && s % units[i].n)
            break;
        int n = snprintf(out + used, cap - used, "%ld%s", k, units[i].u);
        if (n < 0 || (size_t)n >= cap - used)
            break;
        used += (size_t)n;
        s -= k * units[i].n;
        parts++;
    }
    if (s > 0) {                     /* not exact in two units: in seconds */
        snprintf(out, cap, "%.0fs", ms / 1000);
    }
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = s ? strlen(s) : 0, b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static bool same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* ---- RabbitMQ ------------------------------------------------------------------------------ */

/* What the peek read of queue q: how many, the one that entered the DLQ first (its newest
 * x-death time), whether any carries its own TTL. */
typedef struct peeked {
    size_t n;
    const rd_dlq_entry *oldest;
    bool per_message;
} peeked;

static peeked peek_of(const rd_model *m, const rd_queue *q, const char *owner, bool sqs)
{
    peeked p = {0};
    for (size_t i = 0; i < m->dlq.n; i++) {
        const rd_dlq_entry *e = &m->dlq.items[i];
        if (!same(e->source, owner) || !same(e->queue, q->name))
            continue;
        p.n++;
        p.per_message |= e->expiration != NULL;
        double t = sqs ? e->sent_at : e->last_death_at, o = 0;
        if (p.oldest)
            o = sqs ? p.oldest->sent_at : p.oldest->last_death_at;
        if (t > 0 && (!p.oldest || t < o))
            p.oldest = e;
    }
    return p;
}

/* owner's part has delivered a peek's entries */
static bool peek_done(const rd_model *m, const char *owner)
{
    for (size_t i = 0; i < m->dlq_parts.n; i++)
        if (same(m->dlq_parts.items[i].owner, owner))
            return m->dlq_parts.items[i].loaded;
    return false;
}

static void rabbit_ttl(const rd_model *m, const rd_queue *q, const peeked *p, double now, best *b)
{
    char ttl[32], from[112] = "";
    horizon_dur((double)q->ttl_ms / 1000, ttl, sizeof ttl);
    if (q->ttl_from)
        snprintf(from, sizeof from, " (%.100s)", q->ttl_from);
    double s = (double)q->ttl_ms / 1000;
    if (p->per_message)
        bound(b, s, "message-ttl %s%s; a TTL set per message (expiration): per message, unknown",
              ttl, from);
    else if (p->oldest && p->oldest->count > 1)
        /* RabbitMQ keeps the first time of a (queue, reason) it counts again: the message
         * may have entered the DLQ later, and so last longer */
        exact(b, p->oldest->last_death_at + s - now, false, "message-ttl %s%s from x-death, "
              "dead-lettered %ld times: from the first, it may stay longer", ttl, from,
              p->oldest->count);
    else if (p->oldest)
        exact(b, p->oldest->last_death_at + s - now, false, "message-ttl %s%s from x-death", ttl,
              from);
    else if (p->n)
        bound(b, s, "message-ttl %s%s: the oldest message has no x-death time", ttl, from);
    else if (peek_done(m, "rabbitmq"))
        bound(b, s, "message-ttl %s%s: the peek did not reach this queue", ttl, from);
    else
        bound(b, s, "message-ttl %s%s: unknown without a peek%s", ttl, from,
              m->dlq_peek_off ? ", off in read-only" : "");
}

static void rabbit_horizon(const rd_model *m, const rd_queue *q, double now, rd_horizon *h)
{
    best b = { .exact = -1, .bound = -1 };
    if (q->limits_note) {            /* a limit unknown: no figure could be trusted */
        snprintf(h->basis, sizeof h->basis, "%s: unknown", q->limits_note);
        return;
    }
    peeked p = peek_of(m, q, "rabbitmq", false);
    if (q->ttl_ms >= 0)
        rabbit_ttl(m, q, &p, now, &b);
    else if (p.per_message)
        note(&b, "a TTL set per message (expiration): per message, unknown");
    if (q->max_length > 0 && !q->overflow_rejects && q->depth >= 0) {
        long room = q->max_length > q->depth ? q->max_length - q->depth : 0;
        if (q->publish_rate > 0) {
            char rate[32];
            snprintf(rate, sizeof rate, "%.3g/min", q->publish_rate * 60);
            exact(&b, (double)(room + 1) / q->publish_rate, true,
                  "max-length %ld drop-head at %s", q->max_length, rate);
        } else if (room == 0)
            note(&b, "max-length %ld drop-head: full, the next dead letter pushes out the oldest",
                 q->max_length);
        else
            note(&b, "max-length %ld drop-head: %ld more dead letters push out the oldest",
                 q->max_length, room);
    }
    if (q->expires_ms > 0) {
        char e[32];
        horizon_dur((double)q->expires_ms / 1000, e, sizeof e);
        bound(&b, (double)q->expires_ms / 1000, "the queue expires after %s unused", e);
    }
    b.note_kept = !b.note[0];
    if (q->ttl_ms < 0 && q->max_length <= 0 && q->expires_ms <= 0 && !p.per_message)
        note(&b, "no message-ttl, max-length or expires: kept until consumed");
    else if (q->max_length > 0 && q->overflow_rejects)
        note(&b, "max-length %ld rejects new dead letters: kept until consumed", q->max_length);
    b.note_kept &= b.note[0] != '\0';
    settle(&b, h);
}

/* ---- SQS ----------------------------------------------------------------------------------- */

enum { SQS_MIN_RETENTION_S = 60 };   /* SQS's own minimum; below it the period is unknown */

static void sqs_horizon(const rd_model *m, const rd_queue *q, double now, rd_horizon *h)
{
    best b = { .exact = -1, .bound = -1 };
    if (q->retention_s < SQS_MIN_RETENTION_S) {
        snprintf(h->basis, sizeof h->basis, "retention period unknown");
        return;
    }
    char r[32];
    double rs = (double)q->retention_s;
    horizon_dur(rs, r, sizeof r);
    peeked p = peek_of(m, q, "sqs", true);
    if (ends_with(q->name, ".fifo"))
        bound(&b, rs, "retention %s from the move to the DLQ (FIFO): the move time is unknown", r);
    else if (!p.n && peek_done(m, "sqs"))
        bound(&b, rs, "retention %s from first enqueue: the peek received none of its messages", r);
    else if (!p.n)
        bound(&b, rs, "retention %s from first enqueue: unknown without a peek%s", r,
              m->dlq_peek_off ? ", off in read-only" : "");
    else if (!p.oldest)
        bound(&b, rs, "retention %s: the messages carry no SentTimestamp", r);
    else if ((long)p.n >= q->depth && q->depth >= 0)
        exact(&b, p.oldest->sent_at + rs - now, false, "retention %s from first enqueue", r);
    else                             /* an older one may not have been peeked */
        bound(&b, p.oldest->sent_at + rs - now,
              "retention %s from first enqueue, the oldest of %zu peeked", r, p.n);
    settle(&b, h);
}

/* ---- every DLQ ------------------------------------------------------------------------------ */

static const char STORE_RULE[] = "no retention rule: kept until resolved";

/* A figure read from a source that no longer answers may be old: the basis says so. */
static void stale_note(const rd_model *m, rd_horizon *h)
{
    for (size_t i = 0; h->source && i < m->sources.n; i++) {
        const rd_source_status *s = &m->sources.items[i];
        if (strcmp(s->name, h->source) != 0 || (s->state != RD_SRC_STALE && s->state != RD_SRC_DOWN))
            continue;
        size_t n = strlen(h->basis);
        snprintf(h->basis + n, sizeof h->basis - n, " (%s %s: as it last answered)", s->name,
                 src_state_name(s->state));
    }
}

static void queue_horizon(const rd_model *m, const rd_queue *q, double now, rd_horizon *h)
{
    memset(h, 0, sizeof *h);
    h->queue = q->name;
    h->source = q->source;
    h->depth = q->depth;
    h->in_s = h->within_s = -1;
    if (q->depth == 0) {
        snprintf(h->basis, sizeof h->basis, "empty");
        h->kept = true;
        return;
    }
    if (same(q->source, "rabbitmq"))
        rabbit_horizon(m, q, now, h);
    else if (same(q->source, "sqs"))
        sqs_horizon(m, q, now, h);
    else if (same(q->source, "postgresql") || same(q->source, "redis")) {
        snprintf(h->basis, sizeof h->basis, "%s", STORE_RULE);
        h->kept = true;
    }
    else                             /* a snapshot's queue of no known source */
        snprintf(h->basis, sizeof h->basis, "limits unknown (source %.40s)",
                 q->source ? q->source : "unknown");
    stale_note(m, h);
}

/* A store's DLQ part (not a broker's queue): its entries' queue name, else the source's. */
static bool part_horizon(const rd_model *m, const rd_dlq_part *p, rd_horizon *h)
{
    if (!(same(p->owner, "postgresql") || same(p->owner, "redis")) || (p->total <= 0 && !p->n))
        return false;                /* a broker's DLQs are its queues */
    memset(h, 0, sizeof *h);
    h->queue = p->n && p->items[0].queue ? p->items[0].queue : p->owner;
    h->source = p->owner;
    h->depth = p->total;
    h->in_s = h->within_s = -1;
    snprintf(h->basis, sizeof h->basis, "%s", STORE_RULE);
    h->kept = true;
    stale_note(m, h);
    return true;
}

size_t dlq_horizons(const rd_model *m, double now, rd_horizon **out)
{
    size_t n = 0;
    *out = xcalloc(m->queues.n + m->dlq_parts.n + 1, sizeof **out);
    for (size_t i = 0; i < m->queues.n; i++)
        if (m->queues.items[i].is_dlq)
            queue_horizon(m, &m->queues.items[i], now, &(*out)[n++]);
    for (size_t i = 0; i < m->dlq_parts.n; i++) {
        const rd_dlq_part *p = &m->dlq_parts.items[i];
        bool listed = false;         /* a store's DLQ already among its queues */
        for (size_t k = 0; k < n; k++)
            listed |= same((*out)[k].source, p->owner);
        if (!listed && part_horizon(m, p, &(*out)[n]))
            n++;
    }
    return n;
}

double horizon_figure(const rd_horizon *h, bool *bound_)
{
    if (bound_)
        *bound_ = h->in_s < 0 && h->within_s >= 0;
    return h->in_s >= 0 ? h->in_s : h->within_s;
}

const rd_horizon *dlq_horizon_soonest(const rd_horizon *h, size_t n)
{
    const rd_horizon *best_ = NULL;
    for (size_t i = 0; i < n; i++) {
        double f = horizon_figure(&h[i], NULL);
        if (f >= 0 && (!best_ || f < horizon_figure(best_, NULL)))
            best_ = &h[i];
    }
    return best_;
}

/* A bound stays a bound: "within 4d" for 3 d 23 h 45 m (format_age would say "3d"). */
static void ceil_age(double s, char *out, size_t cap)
{
    static const struct { double n; const char *u; } units[] = {
        {86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"},
    };
    size_t i = 0;
    while (i + 1 < sizeof units / sizeof *units && s < units[i].n)
        i++;
    double k = ceil(s / units[i].n);
    if (i > 0 && k * units[i].n >= units[i - 1].n && fmod(k * units[i].n, units[i - 1].n) == 0) {
        k = k * units[i].n / units[i - 1].n;     /* 60m → 1h, 24h → 1d */
        i--;
    }
    snprintf(out, cap, "%.0f%s", k, units[i].u);
}

void horizon_text(const rd_horizon *h, char *out, size_t cap)
{
    char t[32];
    if (h->in_s >= 1) {
        format_age(h->in_s, t, sizeof t);
        snprintf(out, cap, "oldest dead letter expires in %s%s (%s)", h->estimated ? "~" : "", t,
                 h->basis);
    } else if (h->in_s >= 0) {
        snprintf(out, cap, "oldest dead letter expires now (%s)", h->basis);
    } else if (h->within_s >= 0) {
        ceil_age(h->within_s, t, sizeof t);
        snprintf(out, cap, "oldest dead letter expires within %s (%s)", t, h->basis);
    } else
        snprintf(out, cap, "%s", h->basis);
}

static void add_figure(cJSON *o, const char *key, double v)
{
    if (v >= 0)
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

cJSON *horizon_json(const rd_horizon *h)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, MF_QUEUE, h->queue ? h->queue : "");
    if (h->source)
        cJSON_AddStringToObject(o, MF_SOURCE, h->source);
    else
        cJSON_AddNullToObject(o, MF_SOURCE);
    add_figure(o, MF_DEPTH, (double)h->depth);
    add_figure(o, MF_EXPIRES_IN_S, h->in_s);
    add_figure(o, MF_EXPIRES_WITHIN_S, h->within_s);
    cJSON_AddBoolToObject(o, MF_EXPIRES_ESTIMATED, h->estimated);
    cJSON_AddStringToObject(o, MF_EXPIRES_BASIS, h->basis);
    return o;
}
