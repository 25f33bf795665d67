/* The fleet's rows: one summary per system, worst first (fleet.h). */
#include "fleet.h"

#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlqhorizon.h"
#include "health.h"
#include "model_fields.h"
#include "model_json.h"
#include "sanitize.h"
#include "textutil.h"
#include "xalloc.h"

/* ---- the DLQ trend ---- */

void fleet_cfg_defaults(rd_fleet_cfg *c)
{
    c->fail_rate_warn = 1;
    c->fail_rate_crit = 10;
    c->dlq_warn = 1;
    c->dlq_crit = 1000;
    c->unhealthy_workers_crit = 3;
    c->fail_rate_rise = 3;
    c->dlq_horizon_warn = 3600;
    c->dlq_horizon_crit = 600;
}

static void rate_add(rd_fleet_trend *tr, double now, double rate)
{
    int last = (tr->rhead + FLEET_RATE_N - 1) % FLEET_RATE_N;
    if (rate < 0 || (tr->rn && now - tr->rt[last] < FLEET_RATE_STEP_S && now >= tr->rt[last]))
        return;
    tr->rt[tr->rhead] = now;
    tr->rv[tr->rhead] = rate;
    tr->rhead = (tr->rhead + 1) % FLEET_RATE_N;
    if (tr->rn < FLEET_RATE_N)
        tr->rn++;
}

bool fleet_rate_baseline(const rd_fleet_trend *tr, double now, double *mean)
{
    double sum = 0;
    int k = 0;
    for (int i = 0; tr && i < tr->rn; i++) {
        double age = now - tr->rt[i];
        if (age >= FLEET_RATE_RECENT_S && age <= FLEET_RATE_WINDOW_S) {
            sum += tr->rv[i];
            k++;
        }
    }
    if (k < FLEET_RATE_MIN_SAMPLES)
        return false;
    *mean = sum / k;
    return true;
}

void fleet_trend_add(rd_fleet_trend *tr, double now, long v, double rate)
{
    rate_add(tr, now, rate);
    if (v < 0)
        return;
    int last = (tr->head + FLEET_TREND_N - 1) % FLEET_TREND_N;
    if (tr->n && now - tr->t[last] < FLEET_TREND_STEP_S && now >= tr->t[last])
        return;
    tr->t[tr->head] = now;
    tr->v[tr->head] = v;
    tr->head = (tr->head + 1) % FLEET_TREND_N;
    if (tr->n < FLEET_TREND_N)
        tr->n++;
}

bool fleet_trend_delta(const rd_fleet_trend *tr, double now, long current, long *delta)
{
    if (current < 0)
        return false;
    for (int k = tr->n; k >= 1; k--) {   /* oldest first: the first one inside the window */
        int i = (tr->head + FLEET_TREND_N - k) % FLEET_TREND_N;
        if (now - tr->t[i] > FLEET_TREND_WINDOW_S)
            continue;
        if (now - tr->t[i] < FLEET_TREND_STEP_S)
            return false;
        *delta = current - tr->v[i];
        return true;
    }
    return false;
}

/* ---- one row ---- */

static bool status_queued(const char *s)
{
    static const char *const q[] = {"queued", "pending", "requested", "scheduled", "enqueued",
                                    "waiting", NULL};
    for (const char *const *p = q; s && *p; p++)
        if (strcmp(s, *p) == 0)
            return true;
    return false;
}

static int src_rank(rd_src_state s)
{
    switch (s) {
    case RD_SRC_DOWN: return 3;
    case RD_SRC_STALE: return 2;
    case RD_SRC_CONNECTING: return 1;
    case RD_SRC_OK: return 0;
    }
    return 0;
}

static void row_sources(rd_fleet_row *r, const rd_model *m, double now)
{
    r->src_state = RD_SRC_CONNECTING;
    r->src_age = -1;
    r->n_sources = (int)m->sources.n;
    int worst = -1;
    for (size_t i = 0; i < m->sources.n; i++) {
        const rd_source_status *s = &m->sources.items[i];
        int rank = src_rank(s->state);
        /* ok: the age of the oldest answer; otherwise how long the worst state has held */
        double age = s->state == RD_SRC_OK ? (s->last_ok > 0 ? now - s->last_ok : -1)
                                           : (s->since > 0 ? now - s->since : -1);
        if (rank > worst || (rank == worst && age > r->src_age)) {
            if (rank > worst && rank >= 2)
                snprintf(r->src_error, sizeof r->src_error, "%.*s: %.*s", (int)sizeof s->name,
                         s->name, (int)sizeof s->error, s->error);
            worst = rank;
            snprintf(r->src_name, sizeof r->src_name, "%.*s", (int)sizeof s->name, s->name);
            r->src_state = s->state;
            r->src_age = age < 0 ? -1 : age;
        }
    }
}

/* One reason for the level, placed after every reason at least as bad and before the
 * milder ones (worst first, in the order judged within a level); when the list is full
 * the mildest one gives way. */
static void reason(rd_fleet_row *r, rd_fleet_level *lvl, rd_fleet_level at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void reason(rd_fleet_row *r, rd_fleet_level *lvl, rd_fleet_level at, const char *fmt, ...)
{
    if (at > *lvl)
        *lvl = at;
    int at_i = 0;
    while (at_i < r->n_reasons && r->reason_level[at_i] >= at)
        at_i++;
    if (at_i >= FLEET_REASONS)
        return;
    int last = r->n_reasons < FLEET_REASONS ? r->n_reasons : FLEET_REASONS - 1;
    for (int i = last; i > at_i; i--) {
        memcpy(r->reasons[i], r->reasons[i - 1], FLEET_REASON_LEN);
        r->reason_level[i] = r->reason_level[i - 1];
    }
    if (r->n_reasons < FLEET_REASONS)
        r->n_reasons++;
    r->reason_level[at_i] = at;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->reasons[at_i], FLEET_REASON_LEN, fmt, ap);
    va_end(ap);
}

/* v reaches threshold t; a threshold of 0 is off */
static bool over(double v, double t)
{
    return t > 0 && v >= t;
}

static void level_failing(rd_fleet_row *r, const rd_fleet_cfg *c, rd_fleet_level *l)
{
    double f = r->failing_rate, base = r->rate_baseline;
    if (f < 0)
        return;
    if (over(f, c->fail_rate_crit))
        reason(r, l, FLEET_FAIL, "failing %.1f/min >= %g", f, c->fail_rate_crit);
    else if (base >= 0 && c->fail_rate_rise > 0 && over(f, c->fail_rate_warn) &&
             f >= c->fail_rate_rise * base)
        reason(r, l, FLEET_FAIL, "failing %.1f/min, %gx the last hour (%.1f)", f, c->fail_rate_rise,
               base);
    else if (over(f, c->fail_rate_warn))
        reason(r, l, FLEET_WARN, "failing %.1f/min >= %g", f, c->fail_rate_warn);
}

/* The soonest DLQ horizon below dlq_horizon_crit / _warn (a threshold of 0 is off):
 * "DLQ expires in 8m < 10m", "within" when it is only a bound, "~" an estimate. */
static void level_horizon(rd_fleet_row *r, const rd_fleet_cfg *c, rd_fleet_level *l)
{
    if (r->soonest < 0)
        return;
    const rd_fleet_horizon *h = &r->horizons[r->soonest];
    bool bound = h->in_s < 0;
    double s = bound ? h->within_s : h->in_s;
    bool crit = c->dlq_horizon_crit > 0 && s < c->dlq_horizon_crit;
    if (!crit && !(c->dlq_horizon_warn > 0 && s < c->dlq_horizon_warn))
        return;
    char t[32], lim[32];
    format_age(s, t, sizeof t);
    horizon_dur(crit ? c->dlq_horizon_crit : c->dlq_horizon_warn, lim, sizeof lim);
    reason(r, l, crit ? FLEET_FAIL : FLEET_WARN, "DLQ expires %s%s%s < %s",
           bound ? "within " : "in ", h->estimated ? "~" : "", t, lim);
}

static void row_level(rd_fleet_row *r, const rd_fleet_cfg *c)
{
    rd_fleet_level l = FLEET_OK;
    r->n_reasons = 0;
    if (r->src_state == RD_SRC_DOWN || r->src_state == RD_SRC_STALE)
        reason(r, &l, FLEET_DOWN, "%s %s", r->src_name, r->src_state == RD_SRC_DOWN ? "down" : "stale");
    level_failing(r, c, &l);
    bool unh_crit = over((double)r->unhealthy, (double)c->unhealthy_workers_crit);
    bool dlq_crit = over((double)r->dlq, (double)c->dlq_crit);
    if (unh_crit)
        reason(r, &l, FLEET_FAIL, "%ld unhealthy workers >= %ld", r->unhealthy, c->unhealthy_workers_crit);
    if (dlq_crit)
        reason(r, &l, FLEET_FAIL, "DLQ %ld >= %ld", r->dlq, c->dlq_crit);
    if (r->unhealthy > 0 && !unh_crit)
        reason(r, &l, FLEET_WARN, "%ld unhealthy worker%s", r->unhealthy, r->unhealthy == 1 ? "" : "s");
    if (over((double)r->dlq, (double)c->dlq_warn) && !dlq_crit)
        reason(r, &l, FLEET_WARN, "DLQ %ld >= %ld", r->dlq, c->dlq_warn);
    level_horizon(r, c, &l);
    if (r->dlq_trend_known && r->dlq_delta > 0)
        reason(r, &l, FLEET_WARN, "DLQ +%ld in 5m", r->dlq_delta);
    if (r->eligible > 0)
        reason(r, &l, FLEET_WARN, "%s%ld%s retryable", r->eligible_upper ? "<=" : "", r->eligible,
               r->eligible_more ? "+" : "");
    if (r->draining > 0)
        reason(r, &l, FLEET_WARN, "%ld draining", r->draining);
    if (l == FLEET_OK && r->src_state == RD_SRC_CONNECTING)
        reason(r, &l, FLEET_WAIT, "connecting");
    r->level = l;
    r->place = l;
}

static long dlq_size(const rd_model *m)
{
    if (m->dlq_total >= 0)
        return m->dlq_total;
    long n = -1;
    for (size_t i = 0; i < m->queues.n; i++) {
        const rd_queue *q = &m->queues.items[i];
        if (q->is_dlq && q->depth >= 0)
            n = (n < 0 ? 0 : n) + q->depth;
    }
    return n;
}

static int horizon_cmp(const void *a, const void *b)
{
    double x = horizon_figure(a, NULL), y = horizon_figure(b, NULL);
    if (x < 0 || y < 0)
        return (x < 0) - (y < 0);    /* figures first */
    return x < y ? -1 : x > y;
}

/* The system's DLQ horizons (dlqhorizon.h), soonest first, copied into the row. */
static void row_horizons(rd_fleet_row *r, const rd_model *m, double now)
{
    rd_horizon *h;
    size_t n = dlq_horizons(m, now, &h);
    qsort(h, n, sizeof *h, horizon_cmp);
    r->soonest = n && horizon_figure(&h[0], NULL) >= 0 ? 0 : -1;
    r->horizons_capped = n > FLEET_HORIZONS;
    for (size_t i = 0; i < n && i < FLEET_HORIZONS; i++) {
        rd_fleet_horizon *o = &r->horizons[r->n_horizons++];
        snprintf(o->queue, sizeof o->queue, "%s", h[i].queue ? h[i].queue : "");
        snprintf(o->source, sizeof o->source, "%s", h[i].source ? h[i].source : "");
        snprintf(o->basis, sizeof o->basis, "%s", h[i].basis);
        o->depth = h[i].depth;
        o->in_s = h[i].in_s;
        o->within_s = h[i].within_s;
        o->estimated = h[i].estimated;
    }
    free(h);
}

void fleet_row_fill(rd_fleet_row *r, const char *name, const char *banner, const char *profile,
                    const rd_model *m, const rd_fleet_trend *tr, const rd_fleet_cfg *cfg,
                    double now)
{
    rd_fleet_cfg defaults;
    if (!cfg) {
        fleet_cfg_defaults(&defaults);
        cfg = &defaults;
    }
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name ? name : "");
    snprintf(r->banner, sizeof r->banner, "%s", banner ? banner : "");
    snprintf(r->profile, sizeof r->profile, "%s", profile ? profile : "");
    row_sources(r, m, now);
    r->failing_rate = m->failing_rate;
    r->eligible = -1;
    r->oldest_queued = -1;
    bool any_answer = false;
    for (size_t i = 0; i < m->sources.n; i++)
        any_answer |= m->sources.items[i].last_ok > 0;
    if (any_answer || m->execs.n) {
        r->eligible = 0;
        r->eligible_more = m->execs_more;
    }
    for (size_t i = 0; i < m->execs.n; i++) {
        const rd_execution *e = &m->execs.items[i];
        r->eligible += e->elig.verdict == RD_ELIG_YES;
        if (status_queued(e->status) && e->created_at > 0 && now - e->created_at > r->oldest_queued) {
            r->oldest_queued = now - e->created_at;
            r->oldest_more = m->execs_more;
        }
    }
    /* the whole store's figures replace the page's where the profile reads them */
    if (m->store_eligible >= 0) {
        r->eligible = m->store_eligible;
        r->eligible_more = m->store_eligible_capped;
        r->eligible_upper = m->store_eligible_upper;
        r->eligible_store = true;
    }
    if (m->oldest_queued_at >= 0) {
        r->queued_store = true;
        r->queued_none = m->oldest_queued_at == 0;
        r->oldest_queued = r->queued_none ? -1 : fmax(0, now - m->oldest_queued_at);
        r->oldest_more = false;
    }
    r->dlq = dlq_size(m);
    row_horizons(r, m, now);
    r->dlq_cached_age = m->dlq_total >= 0 && m->dlq_cached_at > 0 ? fmax(0, now - m->dlq_cached_at) : -1;
    r->rate_baseline = -1;
    if (!fleet_rate_baseline(tr, now, &r->rate_baseline))
        r->rate_baseline = -1;
    r->dlq_trend_known = tr && fleet_trend_delta(tr, now, r->dlq, &r->dlq_delta);
    r->workers = r->unhealthy = r->draining = -1;
    if (m->workers.n) {
        r->workers = (long)m->workers.n;
        r->unhealthy = r->draining = 0;
    }
    for (size_t i = 0; i < m->workers.n; i++) {
        const rd_worker *w = &m->workers.items[i];
        r->unhealthy += w->health == RD_HEALTH_UNHEALTHY;
        r->draining += w->status && strcmp(w->status, "draining") == 0;
    }
    row_level(r, cfg);
}

/* ---- order ---- */

static int cmp_num(double a, double b) { return a > b ? -1 : a < b ? 1 : 0; }   /* larger first */

int fleet_row_cmp(const rd_fleet_row *a, const rd_fleet_row *b)
{
    return cmp_num(a->place, b->place);
}

rd_fleet_level fleet_place_update(rd_fleet_place *p, rd_fleet_level seen, double now, double hold_s)
{
    if (!p->known || p->place == FLEET_WAIT) {   /* the first answer places the row at once */
        *p = (rd_fleet_place){.known = true, .place = seen, .seen = seen, .seen_since = now};
        return p->place;
    }
    if (seen != p->seen) {
        p->seen = seen;
        p->seen_since = now;
    }
    if (seen != p->place && now - p->seen_since >= hold_s)
        p->place = seen;
    return p->place;
}

void fleet_sort(rd_fleet_row *rows, size_t n)
{
    /* insertion sort: a handful of systems, and stable */
    for (size_t i = 1; i < n; i++) {
        rd_fleet_row t = rows[i];
        size_t j = i;
        for (; j > 0 && fleet_row_cmp(&rows[j - 1], &t) > 0; j--)
            rows[j] = rows[j - 1];
        rows[j] = t;
    }
}

const char *fleet_level_name(rd_fleet_level l)
{
    static const char *const names[] = {"ok", "wait", "warn", "FAIL", "DOWN"};
    return (unsigned)l < sizeof names / sizeof *names ? names[l] : "?";
}

/* ---- cells ---- */

const char *const fleet_col_heads[FLEET_COL__COUNT] = {
    "STATE", "SYSTEM", "ENV", "SOURCES", "FAIL/MIN", "RETRYABLE", "DLQ", "TREND",
    "WORKERS", "OLDEST QUEUED", "WHY",
};

static void cell_age(char *out, double s, bool more)
{
    char a[24];
    if (s < 0) {
        snprintf(out, FLEET_CELL_MAX, "-");
        return;
    }
    format_age(s, a, sizeof a);
    snprintf(out, FLEET_CELL_MAX, "%s%s", more ? ">" : "", a);
}

static void cell_long(char *out, long v, bool more)
{
    if (v < 0)
        snprintf(out, FLEET_CELL_MAX, "-");
    else
        snprintf(out, FLEET_CELL_MAX, "%ld%s", v, more ? "+" : "");
}

void fleet_row_cells(const rd_fleet_row *r, char cells[FLEET_COL__COUNT][FLEET_CELL_MAX])
{
    snprintf(cells[FLEET_COL_LEVEL], FLEET_CELL_MAX, "%s", fleet_level_name(r->level));
    snprintf(cells[FLEET_COL_SYSTEM], FLEET_CELL_MAX, "%s", r->name);
    snprintf(cells[FLEET_COL_ENV], FLEET_CELL_MAX, "%s", r->banner[0] ? r->banner : "-");
    char age[24] = "";
    if (r->src_age >= 0)
        format_age(r->src_age, age, sizeof age);
    if (!r->n_sources)
        snprintf(cells[FLEET_COL_SOURCES], FLEET_CELL_MAX, "none yet");
    else if (r->src_state == RD_SRC_CONNECTING)
        snprintf(cells[FLEET_COL_SOURCES], FLEET_CELL_MAX, "connecting");
    else
        snprintf(cells[FLEET_COL_SOURCES], FLEET_CELL_MAX, "%s %s",
                 r->src_state == RD_SRC_OK ? "ok" : r->src_state == RD_SRC_STALE ? "STALE" : "DOWN",
                 age[0] ? age : "-");
    if (r->failing_rate >= 0)
        snprintf(cells[FLEET_COL_FAILING], FLEET_CELL_MAX, "%.1f", r->failing_rate);
    else
        snprintf(cells[FLEET_COL_FAILING], FLEET_CELL_MAX, "-");
    cell_long(cells[FLEET_COL_ELIGIBLE], r->eligible, r->eligible_more && r->eligible > 0);
    if (r->eligible > 0 && r->eligible_upper)    /* some may already have a later attempt */
        snprintf(cells[FLEET_COL_ELIGIBLE], FLEET_CELL_MAX, "<=%ld%s", r->eligible,
                 r->eligible_more ? "+" : "");    /* past the cap: neither bound holds */
    cell_long(cells[FLEET_COL_DLQ], r->dlq, false);
    if (r->dlq >= 0 && r->dlq_cached_age >= 0) {   /* until the live total replaces it */
        char a[24];
        format_age(r->dlq_cached_age, a, sizeof a);
        snprintf(cells[FLEET_COL_DLQ], FLEET_CELL_MAX, "%ld cached %s", r->dlq, a);
    }
    if (!r->dlq_trend_known)
        snprintf(cells[FLEET_COL_TREND], FLEET_CELL_MAX, "-");
    else if (r->dlq_delta == 0)
        snprintf(cells[FLEET_COL_TREND], FLEET_CELL_MAX, "=");
    else
        snprintf(cells[FLEET_COL_TREND], FLEET_CELL_MAX, "%+ld", r->dlq_delta);
    if (r->workers < 0)
        snprintf(cells[FLEET_COL_WORKERS], FLEET_CELL_MAX, "-");
    else
        snprintf(cells[FLEET_COL_WORKERS], FLEET_CELL_MAX, "%ld unh %ld drn", r->unhealthy, r->draining);
    if (r->queued_none)
        snprintf(cells[FLEET_COL_QUEUED], FLEET_CELL_MAX, "none");
    else
        cell_age(cells[FLEET_COL_QUEUED], r->oldest_queued, r->oldest_more);
    fleet_row_why(r, cells[FLEET_COL_WHY], FLEET_CELL_MAX);
}

void fleet_store_line(const rd_model *m, double now, char *out, size_t cap)
{
    rd_fleet_row r;
    char cells[FLEET_COL__COUNT][FLEET_CELL_MAX];
    fleet_row_fill(&r, "", NULL, NULL, m, NULL, NULL, now);
    fleet_row_cells(&r, cells);
    snprintf(out, cap, "retryable %s%s   oldest queued %s%s", cells[FLEET_COL_ELIGIBLE],
             r.eligible >= 0 && !r.eligible_store ? " (page)" : "", cells[FLEET_COL_QUEUED],
             r.oldest_queued >= 0 && !r.queued_store ? " (page)" : "");
}

void fleet_row_why(const rd_fleet_row *r, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    for (int i = 0; i < r->n_reasons && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? ", " : "", r->reasons[i]);
    if (!r->n_reasons)
        snprintf(out, cap, "-");
}

/* ---- output ---- */

static void add_num(cJSON *o, const char *k, double v, bool known)
{
    if (known && isfinite(v))
        cJSON_AddNumberToObject(o, k, round(v * 1000) / 1000);
    else
        cJSON_AddNullToObject(o, k);
}

static void add_str(cJSON *o, const char *k, const char *v)
{
    char *clean = sanitize_utf8(v, strlen(v));
    cJSON_AddStringToObject(o, k, clean);
    free(clean);
}

/* As horizon_json (dlqhorizon.h) writes a model's. */
static cJSON *fleet_horizon_json(const rd_fleet_horizon *h)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, MF_QUEUE, h->queue);
    add_str(o, MF_SOURCE, h->source);
    add_num(o, MF_DEPTH, (double)h->depth, h->depth >= 0);
    add_num(o, MF_EXPIRES_IN_S, h->in_s, h->in_s >= 0);
    add_num(o, MF_EXPIRES_WITHIN_S, h->within_s, h->within_s >= 0);
    cJSON_AddBoolToObject(o, MF_EXPIRES_ESTIMATED, h->estimated);
    add_str(o, MF_EXPIRES_BASIS, h->basis);
    return o;
}

static cJSON *row_json(const rd_fleet_row *r)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, "system", r->name);
    if (r->banner[0])
        add_str(o, "banner", r->banner);
    else
        cJSON_AddNullToObject(o, "banner");
    add_str(o, "profile", r->profile);
    cJSON_AddStringToObject(o, "level", fleet_level_name(r->level));
    cJSON_AddStringToObject(o, "sources_state", r->n_sources ? src_state_name(r->src_state) : "none");
    add_num(o, "sources_age_s", r->src_age, r->src_age >= 0);
    if (r->src_error[0])
        add_str(o, "sources_error", r->src_error);
    add_num(o, "failing_per_min", r->failing_rate, r->failing_rate >= 0);
    add_num(o, "retry_eligible", (double)r->eligible, r->eligible >= 0);
    cJSON_AddBoolToObject(o, "retry_eligible_lower_bound", r->eligible_more);
    cJSON_AddBoolToObject(o, "retry_eligible_upper_bound", r->eligible_upper);
    /* "store": counted in the store; "page": on the newest page only (a bound when
     * retry_eligible_lower_bound) */
    cJSON_AddStringToObject(o, "retry_eligible_source", r->eligible_store ? "store" : "page");
    add_num(o, "dlq_size", (double)r->dlq, r->dlq >= 0);
    add_num(o, "dlq_trend", (double)r->dlq_delta, r->dlq_trend_known);
    add_num(o, "workers", (double)r->workers, r->workers >= 0);
    add_num(o, "workers_unhealthy", (double)r->unhealthy, r->unhealthy >= 0);
    add_num(o, "workers_draining", (double)r->draining, r->draining >= 0);
    add_num(o, "oldest_queued_age_s", r->oldest_queued, r->oldest_queued >= 0);
    cJSON_AddBoolToObject(o, "oldest_queued_lower_bound", r->oldest_more && r->oldest_queued >= 0);
    cJSON_AddBoolToObject(o, "queued_none", r->queued_none);
    cJSON_AddStringToObject(o, "oldest_queued_source", r->queued_store ? "store" : "page");
    add_num(o, "dlq_cached_age_s", r->dlq_cached_age, r->dlq_cached_age >= 0);
    add_num(o, "failing_baseline_per_min", r->rate_baseline, r->rate_baseline >= 0);
    /* each DLQ's horizon, the soonest first (null figures: unknown), and the soonest one
     * with a figure (null: none has one) */
    cJSON *hs = cJSON_AddArrayToObject(o, MF_DLQ_HORIZONS);
    for (int i = 0; i < r->n_horizons; i++)
        cJSON_AddItemToArray(hs, fleet_horizon_json(&r->horizons[i]));
    cJSON_AddBoolToObject(o, "dlq_horizons_capped", r->horizons_capped);
    if (r->soonest >= 0)
        cJSON_AddItemToObject(o, MF_DLQ_HORIZON, fleet_horizon_json(&r->horizons[r->soonest]));
    else
        cJSON_AddNullToObject(o, MF_DLQ_HORIZON);
    cJSON *why = cJSON_AddArrayToObject(o, "reasons");
    for (int i = 0; i < r->n_reasons; i++)
        cJSON_AddItemToArray(why, cJSON_CreateString(r->reasons[i]));
    return o;
}

char *fleet_to_json(const rd_fleet_row *rows, size_t n)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, MF_VIEW, "fleet");
    cJSON *arr = cJSON_AddArrayToObject(root, "systems");
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, row_json(&rows[i]));
    char *raw = cJSON_Print(root);
    cJSON_Delete(root);
    if (!raw)
        return NULL;
    char *safe = json_text_safe(raw);
    free(raw);
    return safe;
}

char *fleet_to_text(const rd_fleet_row *rows, size_t n)
{
    enum { W = 32 };   /* the widest cell kept whole, but WHY (the last column) */
    char(*fit)[FLEET_COL__COUNT][FLEET_CELL_MAX * 4 + 8] = xcalloc(n ? n : 1, sizeof *fit);
    int w[FLEET_COL__COUNT];
    for (int c = 0; c < FLEET_COL__COUNT; c++)
        w[c] = sanitize_width(fleet_col_heads[c]);
    for (size_t i = 0; i < n; i++) {
        char cells[FLEET_COL__COUNT][FLEET_CELL_MAX];
        fleet_row_cells(&rows[i], cells);
        for (int c = 0; c < FLEET_COL__COUNT; c++) {
            char *clean = sanitize_str(cells[c], 0);
            int cw = sanitize_fit(clean, c == FLEET_COL_WHY ? FLEET_CELL_MAX : W, fit[i][c],
                                  sizeof fit[i][c], 0);
            free(clean);
            w[c] = cw > w[c] ? cw : w[c];
        }
    }
    text_buf b = {0};
    text_buf_str(&b, "FLEET\n");
    for (size_t i = 0; i <= n; i++) {
        for (int c = 0; c < FLEET_COL__COUNT; c++) {
            const char *s = i == 0 ? fleet_col_heads[c] : fit[i - 1][c];
            text_buf_str(&b, s);
            for (int k = c + 1 < FLEET_COL__COUNT ? w[c] - sanitize_width(s) + 2 : 0; k > 0; k--)
                text_buf_str(&b, " ");
        }
        text_buf_rtrim(&b);
        text_buf_str(&b, "\n");
    }
    if (!n)
        text_buf_str(&b, "(no systems configured)\n");
    for (size_t i = 0; i < n; i++)
        if (rows[i].src_error[0]) {
            char *clean = sanitize_str(rows[i].src_error, 0);
            char *name = sanitize_str(rows[i].name, 0);
            char *t = xasprintf("%s: %s\n", name, clean);
            text_buf_str(&b, t);
            free(t), free(name), free(clean);
        }
    free(fit);
    return b.p;
}
