/* A group's onset against the history ring (onset.h). */
#include "onset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sanitize.h"

static double minute_of(double t) { return floor(t / 60.0) * 60.0; }

static const char *const kind_names[] = {
    [ONS_WORKER_UNHEALTHY] = "worker_unhealthy", [ONS_WORKER_DRAINING] = "worker_draining",
    [ONS_QUEUE_DEPTH] = "queue_depth", [ONS_DLQ_GROWTH] = "dlq_growth",
    [ONS_GROUPS_STARTED] = "groups_started",
};

const char *onset_kind_name(onset_kind k) { return kind_names[k]; }

const char *onset_state_name(onset_state s)
{
    return s == ONSET_KNOWN ? "known" : s == ONSET_BEFORE_WINDOW ? "before_window" : "no_history";
}

static rd_onset_item *item(rd_onset *o)
{
    if (o->n >= ONSET_ITEMS)
        return NULL;
    rd_onset_item *it = &o->with[o->n++];
    memset(it, 0, sizeof *it);
    return it;
}

/* The ring's changes: [at - 60, at + 60) against the minute before it. */
static void from_history(const rd_history *h, double at, rd_onset *o)
{
    rd_hist_event ev[HIST_EVENTS];
    size_t ne = history_events(h, at - 60, at + 60, ev, HIST_EVENTS);
    for (size_t k = 0; k < ne; k++) {
        rd_onset_item *it = item(o);
        if (!it)
            return;
        it->kind = ev[k].kind == HEV_DRAINING ? ONS_WORKER_DRAINING : ONS_WORKER_UNHEALTHY;
        it->at = (double)ev[k].step * HIST_STEP_S;
        snprintf(it->name, sizeof it->name, "%s", ev[k].name);
    }
    for (int q = 0; q < HIST_QUEUES; q++) {
        float before, after;
        if (!h->qname[q][0] || !history_at(h, HIST_FIXED + q, at - 120, at - 60, &before) ||
            !history_at(h, HIST_FIXED + q, at - 60, at + 60, &after))
            continue;
        if (!(after >= before * ONSET_QUEUE_FACTOR && after - before >= ONSET_QUEUE_MIN))
            continue;
        rd_onset_item *it = item(o);
        if (!it)
            return;
        it->kind = ONS_QUEUE_DEPTH;
        it->at = at;
        it->from = before;
        it->to = after;
        snprintf(it->name, sizeof it->name, "%s", h->qname[q]);
    }
    float before, after;
    if (history_at(h, HIST_DLQ, at - 120, at - 60, &before) && history_at(h, HIST_DLQ, at - 60, at + 60, &after) &&
        after > before) {
        rd_onset_item *it = item(o);
        if (it) {
            it->kind = ONS_DLQ_GROWTH;
            it->at = at;
            it->from = before;
            it->to = after;
        }
    }
}

static bool began_in_window(const rd_group *g, double window_start)
{
    return g->first_seen > 0 && g->first_seen >= window_start + 60.0;
}

void onset_of(const rd_history *h, const rd_group *g, size_t n, size_t i, double window_start,
              rd_onset *out)
{
    memset(out, 0, sizeof *out);
    const rd_group *me = &g[i];
    if (!began_in_window(me, window_start)) {
        out->state = ONSET_BEFORE_WINDOW;
        return;
    }
    double at = out->at = minute_of(me->first_seen);
    out->state = h && history_covers(h, at - 120, at + 60) ? ONSET_KNOWN : ONSET_NO_HISTORY;
    if (out->state == ONSET_KNOWN)
        from_history(h, at, out);
    size_t others = 0;
    for (size_t k = 0; k < n; k++)
        others += k != i && began_in_window(&g[k], window_start) &&
                  fabs(minute_of(g[k].first_seen) - at) <= 60.0;
    rd_onset_item *it = others ? item(out) : NULL;
    if (it) {
        it->kind = ONS_GROUPS_STARTED;
        it->at = at;
        it->count = others;
    }
}

static void hhmm(double t, bool local, char *out, size_t cap)
{
    time_t s = (time_t)t;
    struct tm tm;
    if (local)
        localtime_r(&s, &tm);
    else
        gmtime_r(&s, &tm);
    strftime(out, cap, "%H:%M", &tm);
}

static void fit_name(const char *raw, char *out, size_t cap)
{
    char *clean = sanitize_str(raw, 0);
    sanitize_fit(clean, 24, out, cap, 0);
    free(clean);
}

void onset_text(const rd_onset *o, bool local, char *out, size_t cap)
{
    if (o->state == ONSET_BEFORE_WINDOW) {
        snprintf(out, cap, "started before the window (its first failure is in the window's first minute)");
        return;
    }
    char t[16];
    hhmm(o->at, local, t, sizeof t);
    size_t used = (size_t)snprintf(out, cap, "started %s", t);
    bool dash = true;
    if (o->state == ONSET_NO_HISTORY && used < cap)
        used += (size_t)snprintf(out + used, cap - used, " \u2014 no history of those minutes");
    else if (!o->n && used < cap)
        used += (size_t)snprintf(out + used, cap - used, " \u2014 nothing else changed in the history");
    else
        dash = false;
    for (size_t k = 0; k < o->n && used < cap; k++) {
        const rd_onset_item *it = &o->with[k];
        char name[160], when[16], what[256];
        fit_name(it->name, name, sizeof name);
        hhmm(it->at, local, when, sizeof when);
        switch (it->kind) {
        case ONS_WORKER_UNHEALTHY: snprintf(what, sizeof what, "%s worker %s unhealthy", when, name); break;
        case ONS_WORKER_DRAINING: snprintf(what, sizeof what, "%s worker %s draining", when, name); break;
        case ONS_QUEUE_DEPTH:
            if (it->from > 0)
                snprintf(what, sizeof what, "queue %s depth \u00d7%.0f", name, it->to / it->from);
            else
                snprintf(what, sizeof what, "queue %s depth 0\u2192%.0f", name, it->to);
            break;
        case ONS_DLQ_GROWTH: snprintf(what, sizeof what, "DLQ +%.0f", it->to - it->from); break;
        case ONS_GROUPS_STARTED:
        default:
            snprintf(what, sizeof what, "%zu other group%s started", it->count, it->count == 1 ? "" : "s");
            break;
        }
        used += (size_t)snprintf(out + used, cap - used, "%s%s", k || dash ? " \u00b7 " : " \u2014 ", what);
    }
}
