#include "groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "xalloc.h"

bool status_failed(const char *status)
{
    static const char *const failed[] = {"failed", "error", "timeout", "abandoned", "lost", "dead"};
    if (!status)
        return false;
    for (size_t i = 0; i < sizeof failed / sizeof *failed; i++)
        if (strcasecmp(status, failed[i]) == 0)
            return true;
    return false;
}

bool exec_failed(const rd_execution *e)
{
    return status_failed(e->status);
}

double exec_failed_at(const rd_execution *e)
{
    return e->finished_at > 0 ? e->finished_at : e->updated_at > 0 ? e->updated_at : e->created_at;
}

const char *trend_name(rd_trend t)
{
    static const char *const names[] = {"new", "rising", "steady", "falling", "quiet"};
    return (unsigned)t < sizeof names / sizeof *names ? names[t] : "?";
}

rd_trend trend_of(size_t recent, size_t before)
{
    if (!recent)
        return TREND_QUIET;
    if (!before)
        return TREND_NEW;
    if (recent > before)
        return TREND_RISING;
    if (recent * 2 < before)
        return TREND_FALLING;
    return TREND_STEADY;
}

static const char *fp_of(const rd_execution *e)
{
    return e->fingerprint ? e->fingerprint : "";
}

static void group_add_action(rd_group *g, const char *name, size_t count)
{
    name = name && *name ? name : "-";
    for (size_t i = 0; i < g->n_actions; i++)
        if (strcmp(g->actions[i].name, name) == 0) {
            g->actions[i].count += count;
            return;
        }
    g->actions = xrealloc(g->actions, (g->n_actions + 1) * sizeof *g->actions);
    g->actions[g->n_actions++] = (rd_action_count){name, count};
}

static void group_add(rd_group *g, const rd_execution *execs, size_t idx, int loops, double now,
                      double interval)
{
    const rd_execution *e = &execs[idx];
    double at = exec_failed_at(e);
    g->count++;
    g->eligible += e->elig.verdict == RD_ELIG_YES;
    g->loops += loops > 0;
    if (at > 0 && at > now - interval)
        g->recent++;
    else
        g->before++;
    if (at > 0 && (g->first_seen == 0 || at < g->first_seen))
        g->first_seen = at;
    if (at > g->last_seen) {
        g->last_seen = at;
        g->sample = e->error;
    }
    if (!g->sample)
        g->sample = e->error;
    group_add_action(g, e->name, 1);
    g->members = xrealloc(g->members, (g->n_members + 1) * sizeof *g->members);
    size_t j = g->n_members++;
    while (j > 0 && exec_failed_at(&execs[g->members[j - 1]]) < at) {   /* newest first */
        g->members[j] = g->members[j - 1];
        j--;
    }
    g->members[j] = idx;
}

static int action_cmp(const void *pa, const void *pb)
{
    const rd_action_count *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count < b->count ? 1 : -1;
    return strcmp(a->name, b->name);
}

static int group_cmp(const void *pa, const void *pb)
{
    const rd_group *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count < b->count ? 1 : -1;
    if (a->last_seen != b->last_seen)
        return a->last_seen < b->last_seen ? 1 : -1;
    return strcmp(a->fp, b->fp);
}

/* The group of fingerprint fp in g[0..*ng), added (zeroed) when there is none. */
static rd_group *group_slot(rd_group **g, size_t *ng, size_t *cap, const char *fp)
{
    size_t k = 0;
    while (k < *ng && strcmp((*g)[k].fp, fp) != 0)
        k++;
    if (k == *ng) {
        xgrow(g, cap, *ng + 1, sizeof **g);
        memset(&(*g)[*ng], 0, sizeof **g);
        (*g)[(*ng)++].fp = fp;
    }
    return &(*g)[k];
}

/* Actions most frequent first, the trend, and the groups in their order. */
static size_t groups_done(rd_group *g, size_t ng, rd_group **out)
{
    for (size_t k = 0; k < ng; k++) {
        qsort(g[k].actions, g[k].n_actions, sizeof *g[k].actions, action_cmp);
        g[k].trend = trend_of(g[k].recent, g[k].before);
    }
    if (ng > 1)
        qsort(g, ng, sizeof *g, group_cmp);
    *out = g;
    return ng;
}

size_t groups_build(const rd_execution *execs, size_t n, const int *loops, double now,
                    double interval, rd_group **out)
{
    rd_group *g = NULL;
    size_t ng = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        if (!exec_failed(&execs[i]))
            continue;
        group_add(group_slot(&g, &ng, &cap, fp_of(&execs[i])), execs, i, loops ? loops[i] : 0,
                  now, interval);
    }
    return groups_done(g, ng, out);
}

size_t groups_merge(const rd_execution *protos, const rd_group_tally *t, size_t n,
                    rd_group **out)
{
    rd_group *g = NULL;
    size_t ng = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        if (!t[i].count)
            continue;
        rd_group *k = group_slot(&g, &ng, &cap, fp_of(&protos[i]));
        size_t recent = t[i].recent < t[i].count ? t[i].recent : t[i].count;
        k->count += t[i].count;
        k->eligible += protos[i].elig.verdict == RD_ELIG_YES ? t[i].count : 0;
        k->recent += recent;
        k->before += t[i].count - recent;
        if (t[i].first_seen > 0 && (k->first_seen == 0 || t[i].first_seen < k->first_seen))
            k->first_seen = t[i].first_seen;
        if (!k->sample || t[i].last_seen > k->last_seen)
            k->sample = protos[i].error;
        if (t[i].last_seen > k->last_seen)
            k->last_seen = t[i].last_seen;
        group_add_action(k, protos[i].name, t[i].count);
    }
    return groups_done(g, ng, out);
}

void groups_free_one(rd_group *g)
{
    free(g->actions);
    free(g->members);
}

void groups_free(rd_group *g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        groups_free_one(&g[i]);
    free(g);
}

/* The journal names a Tasker step "task/step": either form names e. */
static bool names(const char *target, const char *id, const char *parent)
{
    if (!target || !id || !*id)
        return false;
    if (strcmp(target, id) == 0)
        return true;
    size_t pl = parent ? strlen(parent) : 0;
    return pl && strncmp(target, parent, pl) == 0 && target[pl] == '/' && strcmp(target + pl + 1, id) == 0;
}

int loop_count(const rd_execution *e, const rd_retry_record *recs, size_t n)
{
    if (!exec_failed(e) || !e->fingerprint || e->attempt <= 0)
        return 0;
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        const rd_retry_record *r = &recs[i];
        if (!r->fp || strcmp(r->fp, e->fingerprint) != 0 || r->attempt <= 0 || e->attempt <= r->attempt)
            continue;
        if (names(r->target, e->id, e->parent_id) || names(r->target, e->retry_of, e->parent_id) ||
            names(r->target, e->chain_root, e->parent_id))
            k++;
    }
    return k;
}
