#include "drain.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void drain_hist_add(rd_drain_hist *h, double t, long depth, long in_flight)
{
    if (h->n && t < h->s[h->n - 1].t)
        return;
    if (h->n && t == h->s[h->n - 1].t)
        h->n--;
    if (h->n == DRAIN_HIST_MAX) {
        memmove(h->s, h->s + 1, (DRAIN_HIST_MAX - 1) * sizeof *h->s);
        h->n--;
    }
    h->s[h->n++] = (rd_drain_sample){t, depth, in_flight};
}

long drain_left(const rd_drain_sample *s)
{
    if (s->depth < 0 && s->in_flight < 0)
        return -1;
    return (s->depth > 0 ? s->depth : 0) + (s->in_flight > 0 ? s->in_flight : 0);
}

rd_drain_eta drain_eta(const rd_drain_hist *h, double window_s)
{
    rd_drain_eta e = {DRAIN_ETA_UNKNOWN, -1, 0, 0};
    if (!h->n)
        return e;
    const rd_drain_sample *last = &h->s[h->n - 1];
    e.left = drain_left(last);
    if (e.left == 0) {
        e.kind = DRAIN_ETA_EMPTY;
        return e;
    }
    if (e.left < 0)
        return e;
    const rd_drain_sample *first = NULL;   /* the oldest known sample inside the window */
    for (size_t i = 0; i + 1 < h->n; i++)
        if (h->s[i].t >= last->t - window_s && drain_left(&h->s[i]) >= 0) {
            first = &h->s[i];
            break;
        }
    if (!first || last->t - first->t < DRAIN_MIN_SPAN_S)
        return e;
    e.rate = (double)(drain_left(first) - e.left) / (last->t - first->t);
    if (e.rate <= 0) {
        if (last->t - first->t >= DRAIN_STALL_SPAN_S)
            e.kind = DRAIN_ETA_STALLED;
        return e;
    }
    e.kind = DRAIN_ETA_OK;
    e.eta_s = (double)e.left / e.rate;
    return e;
}

void drain_spark(const rd_drain_hist *h, int width, bool ascii, char *out, size_t cap)
{
    static const char *const blocks[] = {"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
                                         "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88"};
    static const char ramp[] = ".:-=+*#@";
    size_t o = 0;
    if (!cap)
        return;
    out[0] = 0;
    if (width <= 0)
        return;
    size_t from = h->n > (size_t)width ? h->n - (size_t)width : 0;
    long max = 0;
    for (size_t i = from; i < h->n; i++)
        if (drain_left(&h->s[i]) > max)
            max = drain_left(&h->s[i]);
    for (size_t i = from; i < h->n; i++) {
        long v = drain_left(&h->s[i]);
        int level = v < 0 ? -1 : max ? (int)((v * 7 + max / 2) / max) : 0;
        const char *glyph;
        char one[2] = {0, 0};
        if (level < 0)
            glyph = " ";
        else if (ascii) {
            one[0] = ramp[level];
            glyph = one;
        } else
            glyph = blocks[level];
        size_t k = strlen(glyph);
        if (o + k + 1 > cap)
            break;
        memcpy(out + o, glyph, k);
        o += k;
    }
    out[o] = 0;
}

double drain_expected_finish(const rd_execution *e, double timeout_s)
{
    if (timeout_s <= 0 || e->created_at <= 0)
        return 0;
    return e->created_at + timeout_s;
}

static bool tok_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* true when needle occurs in hay as a whole token (bounded by non-token characters). */
static bool has_token(const char *hay, const char *needle)
{
    size_t n = needle ? strlen(needle) : 0;
    if (!hay || !n)
        return false;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++) {
        bool left = p == hay || !tok_char(p[-1]);
        bool right = !tok_char(p[n]);
        if (left && right)
            return true;
    }
    return false;
}

bool drain_queue_of(const char *queue, const rd_worker *w)
{
    return has_token(queue, w->id) || has_token(queue, w->name);
}

long drain_broker_depth(const rd_model *m, const rd_worker *w, const char **qname)
{
    long sum = -1;
    if (qname)
        *qname = NULL;
    for (size_t i = 0; i < m->queues.n; i++) {
        const rd_queue *q = &m->queues.items[i];
        if (q->is_dlq || q->depth < 0 || !q->name || !drain_queue_of(q->name, w))
            continue;
        sum = (sum < 0 ? 0 : sum) + q->depth;
        if (qname)
            *qname = q->name;
    }
    return sum;
}

bool drain_has_broker(const rd_model *m)
{
    /* queues the store itself reports (OpenAgents' queued jobs by tag, Tasker's pgmq) are
     * not a broker's: no worker owns one, and BROKER would read "-" for every worker */
    for (size_t i = 0; i < m->queues.n; i++)
        if (!m->queues.items[i].source || strcmp(m->queues.items[i].source, "postgresql") != 0)
            return true;
    for (size_t i = 0; i < m->sources.n; i++)
        if (strcmp(m->sources.items[i].name, "rabbitmq") == 0 || strcmp(m->sources.items[i].name, "sqs") == 0)
            return true;
    return false;
}

/* true when a token of tags a (free text or a JSON list) is a token of b. */
static bool tags_share(const char *a, const char *b)
{
    char tok[64];
    for (const char *p = a; *p;) {
        while (*p && !tok_char(*p))
            p++;
        size_t n = 0;
        while (p[n] && tok_char(p[n]))
            n++;
        if (n && n < sizeof tok) {
            memcpy(tok, p, n);
            tok[n] = 0;
            if (has_token(b, tok))
                return true;
        }
        p += n;
    }
    return false;
}

static bool no_tags(const char *t)
{
    for (; t && *t; t++)
        if (tok_char(*t))
            return false;
    return true;
}

bool drain_compatible(const rd_worker *a, const rd_worker *b)
{
    if (no_tags(a->tags) || no_tags(b->tags))
        return true;
    return tags_share(a->tags, b->tags);
}

bool drain_available(const rd_worker *w)
{
    static const char *const taking[] = {"active", "busy", "running", "idle", "online", "healthy"};
    if (w->health == RD_HEALTH_UNHEALTHY)
        return false;
    if (!w->status || !*w->status)
        return true;
    for (size_t i = 0; i < sizeof taking / sizeof *taking; i++)
        if (strcasecmp(w->status, taking[i]) == 0)
            return true;
    return false;
}

void drain_risk(const rd_model *m, const rd_worker *w, rd_drain_risk *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < m->queues.n; i++) {
        const rd_queue *q = &m->queues.items[i];
        if (q->is_dlq || !q->name || q->consumers != 1 || !drain_queue_of(q->name, w))
            continue;
        if (out->n_last_queue < DRAIN_RISK_QUEUES)
            out->last_queue[out->n_last_queue++] = q;
    }
    for (size_t i = 0; i < m->workers.n; i++) {
        const rd_worker *o = &m->workers.items[i];
        if (o == w || (o->id && w->id && strcmp(o->id, w->id) == 0) || !drain_compatible(w, o))
            continue;
        out->compatible++;
        out->compatible_ok += drain_available(o);
    }
    out->no_other = out->compatible == 0;
    out->others_unhealthy = out->compatible > 0 && out->compatible_ok == 0;
}

size_t drain_warnings(const rd_model *m, const rd_worker *w, drain_line_fn emit, void *ud)
{
    rd_drain_risk k;
    drain_risk(m, w, &k);
    char line[400];
    for (size_t i = 0; i < k.n_last_queue; i++) {
        snprintf(line, sizeof line, "WARNING: last consumer of queue %s (%ld messages): it would stop draining",
                 k.last_queue[i]->name, k.last_queue[i]->depth);
        emit(line, ud);
    }
    if (k.others_unhealthy) {
        snprintf(line, sizeof line, "WARNING: no other healthy compatible worker: every other compatible "
                 "worker (%zu) is unhealthy or not taking work", k.compatible);
        emit(line, ud);
    } else if (k.no_other) {
        emit("WARNING: no other compatible worker: its work would wait", ud);
    }
    return k.n_last_queue + (k.others_unhealthy || k.no_other);
}
