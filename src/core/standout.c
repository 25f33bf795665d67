/* What stands out about an error group against its window (standout.h). */
#include "standout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "xalloc.h"
#include <stdio.h>

static const char *const dim_names[SO_NDIM] = {
    [SO_WORKER] = "worker", [SO_ACTION] = "action", [SO_QUEUE] = "queue",
    [SO_ATTEMPT] = "attempt", [SO_HOST] = "host", [SO_VERSION] = "version", [SO_TAG] = "tag",
};

const char *so_dim_name(so_dim d) { return d < SO_NDIM ? dim_names[d] : "?"; }

bool so_dim_parse(const char *name, so_dim *d)
{
    for (int i = 0; name && i < SO_NDIM; i++)
        if (strcmp(name, dim_names[i]) == 0) {
            *d = (so_dim)i;
            return true;
        }
    return false;
}

/* ---- counts ---- */

typedef struct so_cell {
    so_dim dim;
    char *value;
    size_t n;
} so_cell;

struct so_counts {
    so_cell *c;
    size_t n, cap;
    bool sorted;
};

so_counts *so_counts_new(void) { return xcalloc(1, sizeof(so_counts)); }

void so_counts_free(so_counts *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free(c->c[i].value);
    free(c->c);
    free(c);
}

void so_counts_add(so_counts *c, so_dim d, const char *value, size_t n)
{
    if (!value || !*value || !n || d >= SO_NDIM)
        return;
    xgrow(&c->c, &c->cap, c->n + 1, sizeof *c->c);
    c->c[c->n++] = (so_cell){ d, xstrdup(value), n };
    c->sorted = false;
}

static int cell_cmp(const void *pa, const void *pb)
{
    const so_cell *a = pa, *b = pb;
    if (a->dim != b->dim)
        return a->dim < b->dim ? -1 : 1;
    return strcmp(a->value, b->value);
}

void so_counts_finish(so_counts *c)
{
    if (c->n)
        qsort(c->c, c->n, sizeof *c->c, cell_cmp);
    size_t o = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (o && cell_cmp(&c->c[o - 1], &c->c[i]) == 0) {
            c->c[o - 1].n += c->c[i].n;
            free(c->c[i].value);
            continue;
        }
        c->c[o++] = c->c[i];
    }
    c->n = o;
    c->sorted = true;
}

size_t so_counts_get(const so_counts *c, so_dim d, const char *value)
{
    if (!c || !value)
        return 0;
    so_cell key = { d, (char *)(size_t)value, 0 };
    const so_cell *hit = c->n ? bsearch(&key, c->c, c->n, sizeof *c->c, cell_cmp) : NULL;
    return hit ? hit->n : 0;
}

void so_counts_each(const so_counts *c, void (*fn)(so_dim d, const char *value, size_t n, void *ud), void *ud)
{
    for (size_t i = 0; c && i < c->n; i++)
        fn(c->c[i].dim, c->c[i].value, c->c[i].n, ud);
}

/* ---- the window ---- */

typedef struct so_host {
    char *worker, *host;
} so_host;

struct so_base {
    so_counts *c;
    size_t total;
    bool capped;
    unsigned recorded;             /* bit per so_dim */
    so_host *hosts;
    size_t n_hosts, hosts_cap;
};

so_base *so_base_new(void)
{
    so_base *b = xcalloc(1, sizeof *b);
    b->c = so_counts_new();
    return b;
}

void so_base_free(so_base *b)
{
    if (!b)
        return;
    so_counts_free(b->c);
    for (size_t i = 0; i < b->n_hosts; i++) {
        free(b->hosts[i].worker);
        free(b->hosts[i].host);
    }
    free(b->hosts);
    free(b);
}

void so_base_recorded(so_base *b, so_dim d)
{
    if (d < SO_NDIM)
        b->recorded |= 1u << d;
}

void so_base_add(so_base *b, so_dim d, const char *value, size_t n)
{
    so_base_recorded(b, d);
    so_counts_add(b->c, d, value, n);
}

void so_base_host(so_base *b, const char *worker, const char *host)
{
    if (!worker || !*worker || !host || !*host)
        return;
    xgrow(&b->hosts, &b->hosts_cap, b->n_hosts + 1, sizeof *b->hosts);
    b->hosts[b->n_hosts++] = (so_host){ xstrdup(worker), xstrdup(host) };
    so_base_recorded(b, SO_HOST);
}

void so_base_total(so_base *b, size_t total, bool capped)
{
    b->total = total;
    b->capped = capped;
}

static int host_cmp(const void *pa, const void *pb)
{
    return strcmp(((const so_host *)pa)->worker, ((const so_host *)pb)->worker);
}

const char *so_base_host_of(const so_base *b, const char *worker)
{
    if (!b || !worker || !b->n_hosts)
        return NULL;
    so_host key = { (char *)(size_t)worker, NULL };
    const so_host *h = bsearch(&key, b->hosts, b->n_hosts, sizeof *b->hosts, host_cmp);
    return h ? h->host : NULL;
}

void so_base_finish(so_base *b)
{
    if (b->n_hosts)
        qsort(b->hosts, b->n_hosts, sizeof *b->hosts, host_cmp);
    so_counts_finish(b->c);
    /* the hosts' counts: their workers' (a worker without a host adds to none) */
    size_t n = b->c->n;
    for (size_t i = 0; i < n; i++) {
        const so_cell *w = &b->c->c[i];
        const char *h = w->dim == SO_WORKER ? so_base_host_of(b, w->value) : NULL;
        if (h)
            so_counts_add(b->c, SO_HOST, h, w->n);
    }
    so_counts_finish(b->c);
}

size_t so_base_executions(const so_base *b) { return b ? b->total : 0; }
bool so_base_capped(const so_base *b) { return b && b->capped; }
bool so_base_records(const so_base *b, so_dim d) { return b && d < SO_NDIM && (b->recorded >> d & 1u); }

/* ---- a group against it ---- */

static int so_rank(const void *pa, const void *pb)
{
    const rd_standout *a = pa, *b = pb;
    if (a->lift != b->lift)
        return a->lift > b->lift ? -1 : 1;
    if (a->n_group != b->n_group)
        return a->n_group > b->n_group ? -1 : 1;
    if (a->dim != b->dim)
        return a->dim < b->dim ? -1 : 1;
    return strcmp(a->value, b->value);
}

/* A host naming exactly the failures and executions of a listed worker says nothing new. */
static bool same_as_worker(const rd_standout *l, size_t n, const rd_standout *h)
{
    for (size_t i = 0; i < n; i++)
        if (l[i].dim == SO_WORKER && l[i].n_group == h->n_group && l[i].n_window == h->n_window)
            return true;
    return false;
}

so_state so_compute(const so_base *b, const so_counts *g, size_t members, rd_standout **out,
                    size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!b)
        return SO_UNKNOWN;
    /* the group against the window's other executions: an incident that is most of its
     * window still shows what sets it apart (against the whole window it could not) */
    size_t rest = b->total > members ? b->total - members : 0;
    if (rest < SO_MIN_WINDOW)
        return SO_FEW_WINDOW;
    if (members < SO_MIN_MEMBERS)
        return SO_FEW_MEMBERS;
    rd_standout *l = NULL;
    size_t k = 0, cap = 0;
    for (size_t i = 0; g && i < g->n; i++) {
        const so_cell *c = &g->c[i];
        if (c->n < SO_MIN_MEMBERS || (double)c->n < SO_MIN_SHARE * (double)members)
            continue;
        /* the group's failures are executions of the window: never fewer there (a
         * baseline read a moment apart, or capped, could say so) */
        size_t w = so_counts_get(b->c, c->dim, c->value);
        if (w < c->n)
            w = c->n;
        double in_g = (double)c->n / (double)members, in_w = (double)(w - c->n) / (double)rest;
        double lift = in_w > 0 ? in_g / in_w : INFINITY;   /* none of the others has it */
        if (lift < SO_MIN_LIFT)
            continue;
        xgrow(&l, &cap, k + 1, sizeof *l);
        l[k++] = (rd_standout){ c->dim, xstrdup(c->value), c->n, w, in_g, in_w, lift };
    }
    if (k)
        qsort(l, k, sizeof *l, so_rank);
    size_t o = 0;
    for (size_t i = 0; i < k; i++) {
        if (o >= SO_MAX || (l[i].dim == SO_HOST && same_as_worker(l, o, &l[i]))) {
            free(l[i].value);
            continue;
        }
        l[o++] = l[i];
    }
    *out = o ? l : (free(l), NULL);
    *n = o;
    return SO_LISTED;
}

void so_list_free(rd_standout *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(l[i].value);
    free(l);
}

/* "12.5", "2.5", "0.04", "90": a share in percent, as few digits as it needs */
static void pct(double share, char *out, size_t cap)
{
    double p = share * 100.0;
    if (p >= 10 || p == 0)
        snprintf(out, cap, "%.0f", p);
    else if (p >= 0.1)
        snprintf(out, cap, "%.1f", p);
    else
        snprintf(out, cap, "%.2f", p);
}

void so_item_text(const rd_standout *s, double window_s, bool first, char *out, size_t cap)
{
    char g[16], w[16], v[160], win[48] = "";
    pct(s->in_group, g, sizeof g);
    pct(s->in_window, w, sizeof w);
    char *clean = sanitize_str(s->value, 0);
    sanitize_fit(clean, 32, v, sizeof v, 0);
    free(clean);
    if (first) {
        long sec = (long)(window_s + 0.5);
        snprintf(win, sizeof win, " of the %s's other executions",
                 sec == 3600 ? "hour" : sec == 86400 ? "day" : "window");
    }
    const char *on = s->dim == SO_ACTION ? "" : s->dim == SO_WORKER || s->dim == SO_HOST ? "on " : "";
    const char *label = s->dim == SO_ACTION ? "" : so_dim_name(s->dim);
    snprintf(out, cap, "%s %% %s%s%s%s (%s %%%s)", g, on, label, *label ? " " : "", v, w, win);
}

void so_state_text(so_state st, const so_base *b, size_t members, char *out, size_t cap)
{
    switch (st) {
    case SO_LISTED: {
        /* what was compared: a dimension the store does not record cannot stand out */
        size_t used = (size_t)snprintf(out, cap, "nothing stands out: spread like its window (compared:");
        for (int d = 0; d < SO_NDIM && used < cap; d++)
            if (so_base_records(b, (so_dim)d))
                used += (size_t)snprintf(out + used, cap - used, " %s", so_dim_name((so_dim)d));
        if (used < cap)
            snprintf(out + used, cap - used, ")");
        break;
    }
    case SO_FEW_WINDOW:
        snprintf(out, cap, "too few other executions in the window to compare (%zu < %d)",
                 so_base_executions(b) > members ? so_base_executions(b) - members : 0, SO_MIN_WINDOW);
        break;
    case SO_FEW_MEMBERS:
        snprintf(out, cap, "too few failures to compare (%zu < %d)", members, SO_MIN_MEMBERS);
        break;
    case SO_UNKNOWN:
    default:
        snprintf(out, cap, "what stands out: not known (no baseline of the window read)");
        break;
    }
}
