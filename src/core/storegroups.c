#include "storegroups.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "onset.h"
#include "testhook.h"
#include "xalloc.h"

struct rd_sgroups {
    double window_s, at;
    long cap;
    bool capped;
    RD_VEC(rd_execution) protos;   /* the distinct raw errors; the groups borrow their text */
    rd_group_tally *tally;
    size_t tally_cap;
    so_counts **pdims;             /* per prototype: its failures by dimension (NULL none) */
    size_t pdims_cap;
    rd_group *g;
    size_t n;
    size_t failures;
    so_base *base;                 /* the window's baseline (NULL none) */
    so_state *so_st;               /* per group: what stands out */
    rd_standout **so;
    size_t *so_n;
};

long sgroups_cap_default(void)
{
    const char *v = testhook_env("REDRIVE_GROUPS_CAP");
    char *end = NULL;
    long n = v ? strtol(v, &end, 10) : 0;
    return v && end != v && !*end && n > 0 && n <= SGROUPS_CAP ? n : SGROUPS_CAP;
}

static void free_standout(rd_sgroups *s)
{
    for (size_t i = 0; s->so && i < s->n; i++)
        so_list_free(s->so[i], s->so_n[i]);
    free(s->so);
    free(s->so_n);
    free(s->so_st);
    s->so = NULL;
    s->so_n = NULL;
    s->so_st = NULL;
}

rd_sgroups *sgroups_new(double window_s, long cap, double at)
{
    rd_sgroups *s = xcalloc(1, sizeof *s);
    s->window_s = window_s;
    s->cap = cap;
    s->at = at;
    return s;
}

void sgroups_free(rd_sgroups *s)
{
    if (!s)
        return;
    free_standout(s);
    so_base_free(s->base);
    groups_free(s->g, s->n);
    for (size_t i = 0; i < s->protos.n; i++) {
        execution_clear(&s->protos.items[i]);
        so_counts_free(s->pdims ? s->pdims[i] : NULL);
    }
    free(s->pdims);
    free(s->protos.items);
    free(s->tally);
    free(s);
}

void sgroups_add(rd_sgroups *s, rd_execution *proto, const rd_group_tally *t)
{
    xgrow(&s->protos.items, &s->protos.cap, s->protos.n + 1, sizeof *s->protos.items);
    xgrow(&s->tally, &s->tally_cap, s->protos.n + 1, sizeof *s->tally);
    size_t had = s->pdims_cap;
    xgrow(&s->pdims, &s->pdims_cap, s->protos.n + 1, sizeof *s->pdims);
    memset(s->pdims + had, 0, (s->pdims_cap - had) * sizeof *s->pdims);
    s->protos.items[s->protos.n] = *proto;
    memset(proto, 0, sizeof *proto);
    s->tally[s->protos.n++] = *t;
    s->failures += t->count;
}

void sgroups_set_capped(rd_sgroups *s, bool capped) { s->capped = capped; }

void sgroups_add_dim(rd_sgroups *s, so_dim d, const char *value, size_t n)
{
    if (s->protos.n)
        sgroups_add_dim_at(s, s->protos.n - 1, d, value, n);
}

size_t sgroups_protos(const rd_sgroups *s) { return s->protos.n; }

void sgroups_add_dim_at(rd_sgroups *s, size_t i, so_dim d, const char *value, size_t n)
{
    assert(i < s->protos.n);
    so_counts **c = &s->pdims[i];
    if (!*c)
        *c = so_counts_new();
    so_counts_add(*c, d, value, n);
}

void sgroups_add_tally_at(rd_sgroups *s, size_t i, const rd_group_tally *t)
{
    assert(i < s->protos.n);
    rd_group_tally *o = &s->tally[i];
    o->count += t->count;
    o->recent += t->recent;
    if (t->first_seen > 0 && (o->first_seen <= 0 || t->first_seen < o->first_seen))
        o->first_seen = t->first_seen;
    if (t->last_seen > o->last_seen)
        o->last_seen = t->last_seen;
    s->failures += t->count;
}

void sgroups_set_base(rd_sgroups *s, so_base *b)
{
    so_base_free(s->base);
    s->base = b;
}

typedef struct fp_at {
    const char *fp;
    size_t g;
} fp_at;

static int fp_at_cmp(const void *pa, const void *pb)
{
    return strcmp(((const fp_at *)pa)->fp, ((const fp_at *)pb)->fp);
}

typedef struct dims_ctx {
    so_counts *into;
    const so_base *base;
} dims_ctx;

/* One cell of a prototype's own spread into its group's counts (a worker's host too). */
static void add_dim(so_dim d, const char *value, size_t n, void *ud)
{
    dims_ctx *dc = ud;
    if (d == SO_WORKER && !so_base_records(dc->base, SO_WORKER))
        return;
    so_counts_add(dc->into, d, value, n);
    if (d == SO_WORKER)
        so_counts_add(dc->into, SO_HOST, so_base_host_of(dc->base, value), n);
}

/* Each group's counts over the dimensions its rows carry (every prototype stands for its
 * tally's failures), then its list against the baseline. */
static void compute_standout(rd_sgroups *s)
{
    s->so_st = xcalloc(s->n + 1, sizeof *s->so_st);
    s->so = xcalloc(s->n + 1, sizeof *s->so);
    s->so_n = xcalloc(s->n + 1, sizeof *s->so_n);
    if (!s->base || !s->n)
        return;
    fp_at *idx = xcalloc(s->n, sizeof *idx);
    for (size_t i = 0; i < s->n; i++)
        idx[i] = (fp_at){ s->g[i].fp ? s->g[i].fp : "", i };
    qsort(idx, s->n, sizeof *idx, fp_at_cmp);
    so_counts **c = xcalloc(s->n, sizeof *c);
    for (size_t k = 0; k < s->protos.n; k++) {
        const rd_execution *e = &s->protos.items[k];
        fp_at key = { e->fingerprint ? e->fingerprint : "", 0 };
        const fp_at *hit = bsearch(&key, idx, s->n, sizeof *idx, fp_at_cmp);
        if (!hit)
            continue;
        so_counts *gc = c[hit->g] ? c[hit->g] : (c[hit->g] = so_counts_new());
        size_t n = s->tally[k].count;
        char att[24];
        snprintf(att, sizeof att, "%d", e->attempt);
        so_counts_add(gc, SO_ACTION, e->name, n);
        if (e->attempt > 0)
            so_counts_add(gc, SO_ATTEMPT, att, n);
        if (s->pdims[k]) {              /* the row's own spread over workers (or more) */
            so_counts_finish(s->pdims[k]);
            dims_ctx dc = { gc, s->base };
            so_counts_each(s->pdims[k], add_dim, &dc);
            continue;
        }
        if (so_base_records(s->base, SO_WORKER))
            so_counts_add(gc, SO_WORKER, e->worker, n);
        so_counts_add(gc, SO_HOST, so_base_host_of(s->base, e->worker), n);
    }
    for (size_t i = 0; i < s->n; i++) {
        if (c[i])
            so_counts_finish(c[i]);
        s->so_st[i] = so_compute(s->base, c[i], s->g[i].count, &s->so[i], &s->so_n[i]);
        so_counts_free(c[i]);
    }
    free(c);
    free(idx);
}

void sgroups_finish(rd_sgroups *s)
{
    free_standout(s);
    groups_free(s->g, s->n);
    s->n = groups_merge(s->protos.items, s->tally, s->protos.n, &s->g);
    /* the trend compares rates: the earlier part of the window is longer than the last
     * interval, so its failures are scaled to the interval's length first */
    double rest = s->window_s - GROUPS_INTERVAL_S;
    for (size_t i = 0; i < s->n && rest > 0; i++) {
        size_t before = s->g[i].before, scaled = (size_t)(before * GROUPS_INTERVAL_S / rest + 0.5);
        s->g[i].trend = trend_of(s->g[i].recent, before && !scaled ? 1 : scaled);
    }
    compute_standout(s);
}

size_t sgroups_n(const rd_sgroups *s) { return s ? s->n : 0; }
const rd_group *sgroups_at(const rd_sgroups *s, size_t i) { return &s->g[i]; }
double sgroups_window(const rd_sgroups *s) { return s->window_s; }
double sgroups_time(const rd_sgroups *s) { return s->at; }
long sgroups_cap(const rd_sgroups *s) { return s->cap; }
bool sgroups_capped(const rd_sgroups *s) { return s->capped; }
size_t sgroups_failures(const rd_sgroups *s) { return s->failures; }
const so_base *sgroups_base(const rd_sgroups *s) { return s ? s->base : NULL; }

so_state sgroups_standout(const rd_sgroups *s, const char *fp, const rd_standout **l, size_t *n)
{
    *l = NULL;
    *n = 0;
    for (size_t i = 0; s && s->so_st && fp && i < s->n; i++)
        if (strcmp(s->g[i].fp ? s->g[i].fp : "", fp) == 0) {
            *l = s->so[i];
            *n = s->so_n[i];
            return s->so_st[i];
        }
    return SO_UNKNOWN;
}

bool sgroups_parse_window(const char *text, double *out)
{
    double v;
    if (!text || !parse_duration(text, &v) || v < 60 || v > 30 * 86400.0)
        return false;
    *out = v;
    return true;
}

void sgroups_window_text(double w, char *out, size_t cap)
{
    long s = (long)(w + 0.5);
    if (s >= 86400 && s % 86400 == 0)
        snprintf(out, cap, "%ldd", s / 86400);
    else if (s >= 3600 && s % 3600 == 0)
        snprintf(out, cap, "%ldh", s / 3600);
    else if (s >= 60 && s % 60 == 0)
        snprintf(out, cap, "%ldm", s / 60);
    else
        snprintf(out, cap, "%lds", s);
}

/* The store's groups, copied so the view can filter them (groups_free); their LOOP column
 * counts the loop retries among the loaded executions (the journal names executions). */
static size_t store_groups(const rd_model *m, const int *loops, rd_group **out)
{
    size_t n = sgroups_n(m->sgroups);
    rd_group *g = n ? xcalloc(n, sizeof *g) : NULL;
    for (size_t i = 0; i < n; i++) {
        g[i] = *sgroups_at(m->sgroups, i);
        const rd_action_count *a = g[i].actions;
        g[i].actions = g[i].n_actions ? xmalloc(g[i].n_actions * sizeof *a) : NULL;
        if (g[i].actions)
            memcpy(g[i].actions, a, g[i].n_actions * sizeof *a);
        g[i].members = NULL;
        g[i].n_members = 0;
        g[i].loops = 0;
        for (size_t k = 0; k < m->execs.n; k++) {
            const rd_execution *e = &m->execs.items[k];
            g[i].loops += loops && loops[k] > 0 && exec_failed(e) && strcmp(e->fingerprint ? e->fingerprint : "", g[i].fp) == 0;
        }
    }
    *out = g;
    return n;
}

size_t sgroups_of_model(const rd_model *m, const int *loops, double now, rd_group **out)
{
    if (m->sgroups || m->sgroups_pending)
        return store_groups(m, loops, out);
    return groups_build(m->execs.items, m->execs.n, loops, now, GROUPS_INTERVAL_S, out);
}

groupid_result sgroups_resolve(const rd_sgroups *s, const char *text, const rd_group **g, char *why, size_t cap)
{
    size_t n = sgroups_n(s), at = 0;
    groupid_result r = groupid_resolve(n ? sgroups_at(s, 0) : NULL, n, text, &at, why, cap);
    *g = r == GROUPID_FOUND ? sgroups_at(s, at) : NULL;
    return r;
}

void sgroups_standout_text(const rd_sgroups *s, const rd_group *g, size_t max, char *out, size_t cap)
{
    const rd_standout *l;
    size_t n;
    so_state st = sgroups_standout(s, g->fp, &l, &n);
    size_t used;
    if (st != SO_LISTED || !n) {
        so_state_text(st, sgroups_base(s), g->count, out, cap);
        used = strlen(out);
    } else {
        used = (size_t)snprintf(out, cap, "stands out: ");
        for (size_t k = 0; k < n && k < max && used < cap; k++) {
            char item[256];
            so_item_text(&l[k], s->window_s, k == 0, item, sizeof item);
            used += (size_t)snprintf(out + used, cap - used, "%s%s", k ? " \u00b7 " : "", item);
        }
    }
    if (st != SO_UNKNOWN && so_base_capped(s->base) && used < cap)   /* the baseline's bound */
        snprintf(out + used, cap - used, " [the window's newest %zu executions]", so_base_executions(s->base));
}

bool sgroups_onset(const rd_sgroups *s, const rd_history *h, const char *fp, rd_onset *out)
{
    for (size_t i = 0; s && fp && i < s->n; i++)
        if (strcmp(s->g[i].fp ? s->g[i].fp : "", fp) == 0) {
            onset_of(h, s->g, s->n, i, s->at - s->window_s, out);
            return true;
        }
    return false;
}
