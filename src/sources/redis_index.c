#include "redis_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fingerprint.h"
#include "../core/xalloc.h"

enum { RIX_NAMES = 255 };          /* interned statuses / codes, index 0 reserved */

typedef struct rix_names {
    char *v[RIX_NAMES + 1];
    int n;                          /* used entries, from 1 */
} rix_names;

struct rix {
    rix_task *tasks;
    char *arena;                    /* task strings, append-only, compacted when sparse */
    size_t alen, acap, agarbage;
    size_t n, cap, max;
    uint32_t *slots;                /* dense index + 1, 0 = empty */
    uint16_t *tags;                 /* [nslots]: the top bits of each slot's id hash, so a
                                     * probe compares an id only when they match */
    size_t nslots;                  /* power of two */
    rix_names statuses, codes, names;
    uint8_t mark;
    bool overflow;
    uint64_t version;
};

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h ^ (h >> 29);
}

uint32_t rix_hash_fp(const char *fingerprint)
{
    if (!fingerprint || !*fingerprint)
        return 0;
    uint32_t h = (uint32_t)hash_bytes(fingerprint, strlen(fingerprint));
    return h ? h : 1;
}

rix *rix_new(size_t max_tasks)
{
    rix *ix = xcalloc(1, sizeof *ix);
    ix->max = max_tasks;
    ix->nslots = 1024;
    ix->slots = xcalloc(ix->nslots, sizeof *ix->slots);
    ix->tags = xcalloc(ix->nslots, sizeof *ix->tags);
    ix->statuses.n = ix->codes.n = ix->names.n = 1;
    ix->statuses.v[0] = xstrdup("unknown");
    ix->codes.v[0] = NULL;
    return ix;
}

static void names_free(rix_names *nm)
{
    for (int i = 0; i < nm->n; i++)
        free(nm->v[i]);
}

void rix_free(rix *ix)
{
    if (!ix)
        return;
    free(ix->arena);
    free(ix->tasks);
    free(ix->slots);
    free(ix->tags);
    names_free(&ix->statuses);
    names_free(&ix->codes);
    names_free(&ix->names);
    free(ix);
}

size_t rix_size(const rix *ix) { return ix->n; }
const rix_task *rix_at(const rix *ix, size_t i) { return &ix->tasks[i]; }
bool rix_overflow(const rix *ix) { return ix->overflow; }
uint64_t rix_version(const rix *ix) { return ix->version; }

/* Interned name index; the last slot collects everything beyond the table. */
static uint8_t intern(rix_names *nm, const char *s, uint8_t none)
{
    if (!s || !*s)
        return none;
    for (int i = 1; i < nm->n; i++)
        if (strcmp(nm->v[i], s) == 0)
            return (uint8_t)i;
    if (nm->n == RIX_NAMES)
        return RIX_NAMES - 1;       /* table full: share the last entry ("other") */
    nm->v[nm->n] = xstrndup(s, 47);
    if (nm->n == RIX_NAMES - 1) {
        free(nm->v[nm->n]);
        nm->v[nm->n] = xstrdup("other");
    }
    return (uint8_t)nm->n++;
}

int rix_status_id(const rix *ix, const char *status)
{
    for (int i = 0; i < ix->statuses.n; i++)
        if (strcmp(ix->statuses.v[i], status) == 0)
            return i;
    return -1;
}

const char *rix_status_name(const rix *ix, const rix_task *t)
{
    return ix->statuses.v[t->status];
}

const char *rix_code_name(const rix *ix, const rix_task *t)
{
    return t->code ? ix->codes.v[t->code] : NULL;
}

const char *rix_task_name(const rix *ix, const rix_task *t)
{
    return t->name ? ix->names.v[t->name] : NULL;
}

static uint16_t tag_of(uint64_t h)
{
    return (uint16_t)(h >> 48);
}

/* The slot of id, or the free slot where it would go (*found false); *tag: its tag. */
static size_t slot_find(const rix *ix, const char *id, size_t idlen, bool *found, uint16_t *tag)
{
    uint64_t h = hash_bytes(id, idlen);
    size_t mask = ix->nslots - 1, i = (size_t)h & mask;
    *tag = tag_of(h);
    for (;; i = (i + 1) & mask) {
        uint32_t v = ix->slots[i];
        if (!v) {
            *found = false;
            return i;
        }
        if (ix->tags[i] != *tag)
            continue;
        const char *tid = ix->arena + ix->tasks[v - 1].str;
        if (strncmp(tid, id, idlen) == 0 && tid[idlen] == '\0') {
            *found = true;
            return i;
        }
    }
}

static void rehash(rix *ix, size_t nslots)
{
    free(ix->slots);
    free(ix->tags);
    ix->nslots = nslots;
    ix->slots = xcalloc(nslots, sizeof *ix->slots);
    ix->tags = xcalloc(nslots, sizeof *ix->tags);
    size_t mask = nslots - 1;
    for (size_t k = 0; k < ix->n; k++) {    /* ids are distinct: the first free slot */
        const char *id = ix->arena + ix->tasks[k].str;
        uint64_t h = hash_bytes(id, strlen(id));
        size_t i = (size_t)h & mask;
        while (ix->slots[i])
            i = (i + 1) & mask;
        ix->slots[i] = (uint32_t)k + 1;
        ix->tags[i] = tag_of(h);
    }
}

const rix_task *rix_get(const rix *ix, const char *id, size_t idlen)
{
    bool found;
    uint16_t tag;
    size_t i = slot_find(ix, id, idlen, &found, &tag);
    return found ? &ix->tasks[ix->slots[i] - 1] : NULL;
}

const char *rix_id(const rix *ix, const rix_task *t) { return ix->arena + t->str; }
const char *rix_error(const rix *ix, const rix_task *t)
{
    return ix->arena + t->str + t->err_off;
}

size_t rix_memory(const rix *ix)
{
    return ix->acap + ix->cap * sizeof *ix->tasks +
           ix->nslots * (sizeof *ix->slots + sizeof *ix->tags);
}

static size_t str_len(const rix *ix, const rix_task *t)
{
    return t->err_off + strlen(rix_error(ix, t)) + 1;
}

/* Rewrites the arena without the garbage (O(n); amortised by the 50 % rule). */
static void arena_compact(rix *ix)
{
    size_t live = ix->alen - ix->agarbage;
    char *na = xmalloc(live + 1024);
    size_t off = 0;
    for (size_t k = 0; k < ix->n; k++) {
        rix_task *t = &ix->tasks[k];
        size_t len = str_len(ix, t);
        memcpy(na + off, ix->arena + t->str, len);
        t->str = (uint32_t)off;
        off += len;
    }
    free(ix->arena);
    ix->arena = na;
    ix->alen = off;
    ix->acap = live + 1024;
    ix->agarbage = 0;
}

static uint32_t arena_add(rix *ix, const char *id, size_t idlen, const char *err, size_t elen)
{
    size_t need = idlen + elen + 2;
    if (ix->alen + need > ix->acap) {
        if (ix->agarbage > ix->alen / 2)
            arena_compact(ix);
        if (ix->alen + need > ix->acap) {
            size_t cap = ix->acap ? ix->acap + ix->acap / 2 : 64 << 10;
            while (cap < ix->alen + need)
                cap += cap / 2;
            ix->arena = xrealloc(ix->arena, cap);
            ix->acap = cap;
        }
    }
    char *p = ix->arena + ix->alen;
    memcpy(p, id, idlen);
    p[idlen] = '\0';
    if (elen)
        memcpy(p + idlen + 1, err, elen);
    p[idlen + 1 + elen] = '\0';
    uint32_t off = (uint32_t)ix->alen;
    ix->alen += need;
    return off;
}

static size_t err_len(const char *err)
{
    size_t elen = err ? strlen(err) : 0;
    if (elen >= RIX_ERROR_CAP) {
        elen = RIX_ERROR_CAP - 1;
        while (elen > 0 && ((unsigned char)err[elen] & 0xC0) == 0x80)
            elen--;
    }
    return elen;
}

/* Fills t from sum; the strings are stored unless `keep` (an equal string is there). */
static void fill(rix *ix, rix_task *t, const char *id, size_t idlen, const rix_sum *sum,
                 bool keep)
{
    size_t elen = err_len(sum->error);
    if (!keep) {
        t->str = arena_add(ix, id, idlen, sum->error, elen);
        t->err_off = (uint16_t)(idlen + 1);
    }
    t->dispatched_at = sum->dispatched_at;
    t->resolved_s = sum->resolved_at > 0 && sum->resolved_at < 4e9 ? (uint32_t)sum->resolved_at : 0;
    if (elen) {
        char fp[160];
        fingerprint_make(rix_error(ix, t), fp, sizeof fp);
        t->fp = rix_hash_fp(fp);
    } else {
        t->fp = 0;
    }
    t->attempt = (uint16_t)(sum->attempt > 0 && sum->attempt < 65535 ? sum->attempt : 0);
    t->nfields = (uint8_t)(sum->nfields < 0 ? 0 : sum->nfields > 255 ? 255 : sum->nfields);
    t->status = intern(&ix->statuses, sum->status, 0);
    t->code = intern(&ix->codes, sum->code, 0);
    t->name = intern(&ix->names, sum->name, 0);
    t->flags = (uint8_t)sum->flags;
    t->mark = ix->mark;
}

static bool same_error(const rix *ix, const rix_task *t, const char *err)
{
    size_t elen = err_len(err);
    const char *old = rix_error(ix, t);
    return strlen(old) == elen && (elen == 0 || memcmp(old, err, elen) == 0);
}

static bool same(const rix_task *a, const rix_task *b)
{
    return a->dispatched_at == b->dispatched_at && a->resolved_s == b->resolved_s &&
           a->attempt == b->attempt && a->nfields == b->nfields && a->status == b->status &&
           a->code == b->code && a->name == b->name && a->flags == b->flags;
}

bool rix_upsert(rix *ix, const char *id, size_t idlen, const rix_sum *sum)
{
    if (idlen == 0 || idlen > 255)
        return false;
    bool found;
    uint16_t tag;
    size_t i = slot_find(ix, id, idlen, &found, &tag);
    if (found) {
        rix_task *t = &ix->tasks[ix->slots[i] - 1];
        rix_task nt = *t;
        bool keep = same_error(ix, t, sum->error);
        if (!keep)
            ix->agarbage += str_len(ix, t);
        fill(ix, &nt, id, idlen, sum, keep);
        bool changed = !keep || !same(t, &nt);
        *t = nt;
        if (changed)
            ix->version++;
        return changed;
    }
    if (ix->n >= ix->max) {
        ix->overflow = true;
        return false;
    }
    xgrow(&ix->tasks, &ix->cap, ix->n + 1, sizeof *ix->tasks);
    fill(ix, &ix->tasks[ix->n], id, idlen, sum, false);
    ix->slots[i] = (uint32_t)++ix->n;
    ix->tags[i] = tag;
    if (ix->n * 5 > ix->nslots * 4)
        rehash(ix, ix->nslots * 2);
    ix->version++;
    return true;
}

void rix_reserve(rix *ix, size_t n)
{
    if (n > ix->max)
        n = ix->max;
    size_t nslots = ix->nslots;
    while (n * 5 > nslots * 4)
        nslots *= 2;
    if (nslots > ix->nslots)
        rehash(ix, nslots);
}

/* Linear-probing deletion with backward shift (no tombstones). */
static void slot_delete(rix *ix, size_t i)
{
    size_t mask = ix->nslots - 1, j = i;
    for (;;) {
        ix->slots[i] = 0;
        for (;;) {
            j = (j + 1) & mask;
            if (!ix->slots[j])
                return;
            const char *id = ix->arena + ix->tasks[ix->slots[j] - 1].str;
            size_t home = (size_t)hash_bytes(id, strlen(id)) & mask;
            /* move j back to i unless its home lies cyclically in (i, j] */
            bool stay = i <= j ? (i < home && home <= j) : (i < home || home <= j);
            if (!stay)
                break;
        }
        ix->slots[i] = ix->slots[j];
        ix->tags[i] = ix->tags[j];
        i = j;
    }
}

bool rix_remove(rix *ix, const char *id, size_t idlen)
{
    bool found;
    uint16_t tag;
    size_t i = slot_find(ix, id, idlen, &found, &tag);
    if (!found)
        return false;
    size_t k = ix->slots[i] - 1;
    slot_delete(ix, i);
    ix->agarbage += str_len(ix, &ix->tasks[k]);
    size_t last = ix->n - 1;
    if (k != last) {
        const char *lid = ix->arena + ix->tasks[last].str;
        size_t li = slot_find(ix, lid, strlen(lid), &found, &tag);
        ix->tasks[k] = ix->tasks[last];
        ix->slots[li] = (uint32_t)k + 1;
    }
    ix->n--;
    ix->version++;
    return true;
}

void rix_sweep_begin(rix *ix)
{
    ix->mark++;
    ix->overflow = false;
}

void rix_touch(rix *ix, const char *id, size_t idlen)
{
    bool found;
    uint16_t tag;
    size_t i = slot_find(ix, id, idlen, &found, &tag);
    if (found)
        ix->tasks[ix->slots[i] - 1].mark = ix->mark;
}

size_t rix_sweep_end(rix *ix)
{
    size_t removed = 0;
    for (size_t k = ix->n; k-- > 0;) {
        if (ix->tasks[k].mark == ix->mark)
            continue;
        char id[256];
        snprintf(id, sizeof id, "%s", ix->arena + ix->tasks[k].str);
        rix_remove(ix, id, strlen(id));
        removed++;
    }
    return removed;
}

/* ---- ordered selection ---------------------------------------------------------- */

/* >0 when a is newer than b (dispatched_at desc, then id desc). */
static int cmp_key(double at_a, const char *id_a, double at_b, const char *id_b)
{
    if (at_a != at_b)
        return at_a > at_b ? 1 : -1;
    return strcmp(id_a, id_b);
}

static int cmp_tasks(const rix *ix, uint32_t a, uint32_t b)
{
    const rix_task *ta = &ix->tasks[a], *tb = &ix->tasks[b];
    return cmp_key(ta->dispatched_at, ix->arena + ta->str, tb->dispatched_at,
                   ix->arena + tb->str);
}

void rix_cursor_of(const rix *ix, const rix_task *t, bool inclusive, rix_cursor *c)
{
    c->set = true;
    c->inclusive = inclusive;
    c->at = t->dispatched_at;
    const char *id = rix_id(ix, t);
    size_t n = strlen(id);
    if (n >= sizeof c->id)
        n = sizeof c->id - 1;
    memcpy(c->id, id, n);
    c->id[n] = '\0';
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
    double root = h->ix->tasks[h->v[0]].dispatched_at;
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

size_t rix_select(const rix *ix, rix_pred pred, void *ud, const rix_cursor *from,
                  size_t n, uint32_t *out, bool *more)
{
    heap h = { ix, xmalloc((n + 1) * sizeof(uint32_t)), 0, n + 1, +1 };
    for (size_t k = 0; k < ix->n; k++) {
        const rix_task *t = &ix->tasks[k];
        if (from && from->set) {
            int c = cmp_key(t->dispatched_at, rix_id(ix, t), from->at, from->id);
            if (c > 0 || (c == 0 && !from->inclusive))
                continue;
        }
        if (heap_rejects(&h, t->dispatched_at) || (pred && !pred(ix, t, ud)))
            continue;
        heap_offer(&h, (uint32_t)k);
    }
    *more = h.n > n;
    size_t total = h.n;
    uint32_t *sorted = xmalloc((total + 1) * sizeof *sorted);
    heap_drain_newest_first(&h, sorted);
    size_t got = total > n ? n : total;
    memcpy(out, sorted, got * sizeof *out);
    free(sorted);
    free(h.v);
    return got;
}

size_t rix_select_before(const rix *ix, rix_pred pred, void *ud, const rix_cursor *c,
                         size_t n, uint32_t *out)
{
    if (n == 0)
        return 0;
    heap h = { ix, xmalloc(n * sizeof(uint32_t)), 0, n, -1 };
    for (size_t k = 0; k < ix->n; k++) {
        const rix_task *t = &ix->tasks[k];
        if (c && c->set && cmp_key(t->dispatched_at, rix_id(ix, t), c->at, c->id) <= 0)
            continue;
        if (heap_rejects(&h, t->dispatched_at) || (pred && !pred(ix, t, ud)))
            continue;
        heap_offer(&h, (uint32_t)k);
    }
    size_t got = h.n;
    heap_drain_newest_first(&h, out);
    free(h.v);
    return got;
}
