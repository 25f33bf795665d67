#include "health.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SKEW_TOLERANCE_S 5.0

void health_defaults(rd_health_cfg *c)
{
    c->heartbeat_max_age = 30;
    c->failures_unhealthy = 10;
    c->failures_degraded = 3;
    c->depth_unhealthy = 100;
    c->depth_degraded = 50;
    c->rate_unhealthy = 0.70;
    c->rate_degraded = 0.30;
}

void format_age(double s, char *out, size_t cap)
{
    if (!cap)
        return;
    if (isnan(s)) {
        snprintf(out, cap, "?");
        return;
    }
    const char *sign = s < 0 ? "-" : "";
    s = fabs(s);
    if (s < 60)
        snprintf(out, cap, "%s%.0fs", sign, floor(s));
    else if (s < 3600)
        snprintf(out, cap, "%s%.0fm", sign, floor(s / 60));
    else if (s < 86400)
        snprintf(out, cap, "%s%.0fh", sign, floor(s / 3600));
    else if (s < 1e12)
        snprintf(out, cap, "%s%.0fd", sign, floor(s / 86400));
    else
        snprintf(out, cap, "%sforever", sign);
}

/* Collects the reasons of the worst level seen so far. */
typedef struct verdict {
    rd_health level;
    char reason[96];
} verdict;

static void note(verdict *v, rd_health level, const char *why)
{
    if (level < v->level)
        return;
    if (level > v->level) {
        v->level = level;
        v->reason[0] = '\0';
    }
    size_t n = strlen(v->reason);
    if (n)
        snprintf(v->reason + n, sizeof v->reason - n, ", %s", why);
    else
        snprintf(v->reason, sizeof v->reason, "%s", why);
}

static void check_heartbeat(const rd_health_cfg *c, const rd_worker *w, double now, verdict *v)
{
    char age[16], why[80];
    if (w->heartbeat_at <= 0)
        return;
    double a = now - w->heartbeat_at;
    if (a < -SKEW_TOLERANCE_S) {
        format_age(-a, age, sizeof age);
        snprintf(why, sizeof why, "heartbeat %s in the future (clock skew)", age);
        note(v, RD_HEALTH_DEGRADED, why);
    } else if (a >= c->heartbeat_max_age) {
        format_age(a, age, sizeof age);
        snprintf(why, sizeof why, "heartbeat %s old", age);
        note(v, RD_HEALTH_UNHEALTHY, why);
    }
}

static void check_metrics(const rd_health_cfg *c, const rd_worker *w, verdict *v)
{
    char why[64];
    int f = w->consecutive_failures;
    if (f >= 0 && (f >= c->failures_unhealthy || f >= c->failures_degraded)) {
        snprintf(why, sizeof why, "%d consecutive failures", f);
        note(v, f >= c->failures_unhealthy ? RD_HEALTH_UNHEALTHY : RD_HEALTH_DEGRADED, why);
    }
    long d = w->queue_depth;
    if (d >= 0 && (d >= c->depth_unhealthy || d >= c->depth_degraded)) {
        snprintf(why, sizeof why, "queue depth %ld", d);
        note(v, d >= c->depth_unhealthy ? RD_HEALTH_UNHEALTHY : RD_HEALTH_DEGRADED, why);
    }
    double r = w->failure_rate;
    if (r >= 0 && !isnan(r) && (r >= c->rate_unhealthy || r >= c->rate_degraded)) {
        snprintf(why, sizeof why, "failure rate %.0f%%", r * 100);
        note(v, r >= c->rate_unhealthy ? RD_HEALTH_UNHEALTHY : RD_HEALTH_DEGRADED, why);
    }
}

/* When the verdict can next change with the clock alone: a fresh heartbeat turns old at
 * heartbeat_max_age; an old one's age text ("5m") changes at its unit's next step
 * (format_age); a heartbeat in the future is judged again at every refresh. */
static double valid_until(const rd_health_cfg *c, const rd_worker *w, double now)
{
    if (w->heartbeat_at <= 0)
        return INFINITY;
    double a = now - w->heartbeat_at;
    if (!(a >= -SKEW_TOLERANCE_S))
        return now;
    if (a < c->heartbeat_max_age)
        return w->heartbeat_at + c->heartbeat_max_age;
    double unit = a < 60 ? 1 : a < 3600 ? 60 : a < 86400 ? 3600 : a < 1e12 ? 86400 : INFINITY;
    return isinf(unit) ? INFINITY : w->heartbeat_at + (floor(a / unit) + 1) * unit;
}

void health_classify(const rd_health_cfg *c, rd_worker *w, double now)
{
    bool metrics = w->has_metrics || w->queue_depth >= 0 || w->failure_rate >= 0 ||
                   w->consecutive_failures >= 0;
    w->health_until = valid_until(c, w, now);
    if (w->heartbeat_at <= 0 && !metrics) {
        w->health = RD_HEALTH_UNKNOWN;
        snprintf(w->health_reason, sizeof w->health_reason, "no heartbeat and no metrics");
        return;
    }
    verdict v = { RD_HEALTH_HEALTHY, "" };
    check_heartbeat(c, w, now, &v);
    check_metrics(c, w, &v);
    w->health = v.level;
    snprintf(w->health_reason, sizeof w->health_reason, "%s", v.reason);
}

bool health_reclassify(const rd_health_cfg *c, rd_worker *w, double now)
{
    if (now < w->health_until)
        return false;
    rd_health was = w->health;
    health_classify(c, w, now);
    return w->health != was;
}

void queue_trend_init(rd_queue_trend *t)
{
    memset(t, 0, sizeof *t);
    t->prev_total = t->prev_visible = -1;
    t->in_rate = t->out_rate = -1;
}

bool queue_trend_note(rd_queue_trend *t, long visible, long in_flight, long delayed, double now)
{
    visible = visible > 0 ? visible : 0;
    in_flight = in_flight > 0 ? in_flight : 0;
    long total = visible + in_flight + (delayed > 0 ? delayed : 0);
    if (t->prev_total >= 0 && now > t->prev_at) {
        double d = (double)(total - t->prev_total) / (now - t->prev_at);
        t->in_rate = d > 0 ? d : 0;
        t->out_rate = d < 0 ? -d : 0;
        if (in_flight > 0 || visible < t->prev_visible || visible == 0)
            t->grew = 0;
        else if (visible > t->prev_visible)
            t->grew++;
        /* equal and nothing in flight: still not draining, no new evidence */
    }
    t->prev_total = total;
    t->prev_visible = visible;
    t->prev_at = now;
    t->not_draining = t->grew >= RD_DRAIN_GROW_POLLS;
    return t->not_draining;
}
