/*
 * Ordered selection over the Redis task index (redis_index.h): the newest n tasks that
 * match a predicate from a cursor, or the n just before it, newest first (dispatched_at
 * desc, then id desc), with a bounded heap: one pass over the index, n + 1 entries kept;
 * the pass may be fed in slices (rix_sel_*: the publish job of redis_view.c).
 * Reads the index through its accessors only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "redis_index.h"
#include "redis_taskid.h"

/* >0 when task a is newer than task b (dispatched_at desc, then id desc). */
static int cmp_tasks(const rix *ix, uint32_t a, uint32_t b)
{
    const rix_task *ta = rix_at(ix, a), *tb = rix_at(ix, b);
    if (ta->dispatched_at != tb->dispatched_at)
        return ta->dispatched_at > tb->dispatched_at ? 1 : -1;
    int q = rtid_quick_cmp(rix_entry(ix, ta), rix_entry(ix, tb));
    if (q != 2)
        return q;
    rix_idbuf ia, ib;
    return strcmp(rix_id(ix, ta, &ia), rix_id(ix, tb, &ib));
}

/* >0 when t is newer than the cursor's position. */
static int cmp_cursor(const rix *ix, const rix_task *t, const rix_cursor *c)
{
    if (t->dispatched_at != c->at)
        return t->dispatched_at > c->at ? 1 : -1;
    rix_idbuf id;
    return strcmp(rix_id(ix, t, &id), c->id);
}

void rix_cursor_of(const rix *ix, const rix_task *t, bool inclusive, rix_cursor *c)
{
    c->set = true;
    c->inclusive = inclusive;
    c->at = t->dispatched_at;
    rix_idbuf id;
    snprintf(c->id, sizeof c->id, "%s", rix_id(ix, t, &id));
}

/* Binary heap of dense indices; sign +1 keeps the newest n (root = oldest kept),
 * sign -1 keeps the oldest n (root = newest kept). */
typedef struct heap { const rix *ix; uint32_t *v; size_t n, cap; int sign; } heap;

static bool heap_above(const heap *h, uint32_t a, uint32_t b)
{
    return h->sign * cmp_tasks(h->ix, a, b) < 0;   /* a belongs nearer the root */
}

static void heap_sift_down(heap *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && heap_above(h, h->v[l], h->v[m])) m = l;
        if (r < h->n && heap_above(h, h->v[r], h->v[m])) m = r;
        if (m == i)
            return;
        uint32_t t = h->v[i]; h->v[i] = h->v[m]; h->v[m] = t;
        i = m;
    }
}

static void heap_offer(heap *h, uint32_t k)
{
    if (h->n < h->cap) {
        size_t i = h->n++;
        h->v[i] = k;
        while (i > 0 && heap_above(h, h->v[i], h->v[(i - 1) / 2])) {
            size_t p = (i - 1) / 2;
            uint32_t t = h->v[i]; h->v[i] = h->v[p]; h->v[p] = t;
            i = p;
        }
    } else if (heap_above(h, h->v[0], k)) {
        h->v[0] = k;
        heap_sift_down(h, 0);
    }
}

/* A full heap cannot take a task strictly on the far side of its root by time: checked
 * before the predicate, so a walk costs a compare for most tasks, whatever the filter. */
static bool heap_rejects(const heap *h, double at)
{
    if (h->n < h->cap)
        return false;
    double root = rix_at(h->ix, h->v[0])->dispatched_at;
    return h->sign > 0 ? at < root : at > root;
}

/* Empties the heap into v newest first (heap sort). */
static void heap_drain_newest_first(heap *h, uint32_t *v)
{
    size_t total = h->n;
    for (size_t i = 0; h->n > 0; i++) {
        uint32_t top = h->v[0];
        h->v[0] = h->v[--h->n];
        heap_sift_down(h, 0);
        v[h->sign > 0 ? total - 1 - i : i] = top;  /* +1 pops oldest first */
    }
}

struct rix_sel {                    /* a selection fed in slices */
    heap h;                         /* n + 1 kept: the one past the page says "more" */
    rix_pred pred;
    void *ud;
    rix_cursor from;                /* unset: from the newest */
    size_t n;
    bool before;                    /* the n just newer than from (rix_select_before) */
};

rix_sel *rix_sel_new(const rix *ix, rix_pred pred, void *ud, const rix_cursor *from, size_t n)
{
    rix_sel *s = xcalloc(1, sizeof *s);
    s->h = (heap){ ix, xmalloc((n + 1) * sizeof(uint32_t)), 0, n + 1, +1 };
    s->pred = pred;
    s->ud = ud;
    if (from)
        s->from = *from;
    s->n = n;
    return s;
}

rix_sel *rix_sel_new_before(const rix *ix, rix_pred pred, void *ud, const rix_cursor *c,
                            size_t n)
{
    rix_sel *s = rix_sel_new(ix, pred, ud, c, n);
    s->h.cap = n;
    s->h.sign = -1;
    s->before = true;
    return s;
}

void rix_sel_offer(rix_sel *s, size_t k)
{
    const rix *ix = s->h.ix;
    const rix_task *t = rix_at(ix, k);
    if (s->from.set) {
        int c = cmp_cursor(ix, t, &s->from);
        if (s->before ? c <= 0 : c > 0 || (c == 0 && !s->from.inclusive))
            return;
    }
    if (s->h.cap == 0)
        return;
    if (heap_rejects(&s->h, t->dispatched_at) || (s->pred && !s->pred(ix, t, s->ud)))
        return;
    heap_offer(&s->h, (uint32_t)k);
}

void rix_sel_free(rix_sel *s)
{
    if (!s)
        return;
    free(s->h.v);
    free(s);
}

size_t rix_sel_finish(rix_sel *s, uint32_t *out, bool *more)
{
    heap *h = &s->h;
    *more = h->n > s->n;
    size_t total = h->n;
    uint32_t *sorted = xmalloc((total + 1) * sizeof *sorted);
    heap_drain_newest_first(h, sorted);
    size_t got = total > s->n ? s->n : total;
    if (got)
        memcpy(out, sorted, got * sizeof *out);
    free(sorted);
    rix_sel_free(s);
    return got;
}

size_t rix_select(const rix *ix, rix_pred pred, void *ud, const rix_cursor *from,
                  size_t n, uint32_t *out, bool *more)
{
    rix_sel *s = rix_sel_new(ix, pred, ud, from, n);
    for (size_t k = 0, n_ix = rix_size(ix); k < n_ix; k++)
        rix_sel_offer(s, k);
    return rix_sel_finish(s, out, more);
}

size_t rix_select_before(const rix *ix, rix_pred pred, void *ud, const rix_cursor *c,
                         size_t n, uint32_t *out)
{
    rix_sel *s = rix_sel_new_before(ix, pred, ud, c, n);
    for (size_t k = 0, n_ix = rix_size(ix); k < n_ix; k++)
        rix_sel_offer(s, k);
    bool more;
    return rix_sel_finish(s, out, &more);
}
