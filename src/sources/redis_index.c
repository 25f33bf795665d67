#include "redis_index.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fingerprint.h"
#include "../core/intern.h"
#include "../core/xalloc.h"
#include "redis_taskid.h"

enum {
    RIX_NAMES = 255,                /* interned statuses / codes, index 0 reserved */
    RIX_IDX_BITS = 22,              /* a hash slot: tag << RIX_IDX_BITS | (task index + 1) */
    RIX_MIN_SLOTS = 1024,
    RIX_DETAIL_HEAD = 3,            /* a detail: code, name, field count, then the error */
    RIX_CHUNK_BITS = 14,            /* the ids' arena in chunks of 16 KiB: an id's offset is
                                     * chunk << RIX_CHUNK_BITS | its offset in the chunk */
};
#define RIX_IDX_MASK ((1u << RIX_IDX_BITS) - 1)
#define RIX_CHUNK ((size_t)1 << RIX_CHUNK_BITS)

/* The compact ids back to back in chunks of RIX_CHUNK bytes (an id never spans two): the
 * arena grows a chunk at a time and is never copied, however many tasks a sweep brings. */
typedef struct rix_arena {
    uint8_t **chunk;
    size_t n, cap;                  /* chunks, room for their pointers */
    size_t used;                    /* bytes used in the last chunk */
} rix_arena;

enum { RIX_END_NONE, RIX_END_WALK, RIX_END_COMPACT, RIX_END_REHASH };

typedef struct rix_end {            /* a sweep's end under way, in slices (rix_sweep_end_step) */
    int phase;                      /* RIX_END_*: the walk, then the arena, then the slots */
    size_t k;                       /* the phase's next task (the walk goes down from n) */
    size_t removed, work;           /* tasks removed so far; touched by the last slice */
    rix_arena arena;                /* COMPACT: the new arena, holding tasks [0, k) */
    size_t alen;
    uint32_t *slots;                /* REHASH: the new slots, holding tasks [0, k) */
    size_t nslots;
} rix_end;

typedef struct rix_names {
    char *v[RIX_NAMES + 1];
    int n;                          /* used entries, from 1 */
} rix_names;

typedef struct rix_key {            /* an id in its compact form, and its hash */
    uint8_t enc[RTID_ENC_MAX];
    size_t len;
    uint64_t h;
} rix_key;

struct rix {
    rix_task *tasks;
    uint64_t *marks;                /* a bit per task: upserted or touched by this sweep */
    size_t n, cap, max;
    rix_arena arena;                /* compact ids (redis_taskid.h), append-only, compacted */
    size_t alen, agarbage;          /* bytes appended; of them, ids removed since */
    uint32_t *slots;                /* open addressing over [nslots], any size, 0 empty */
    size_t nslots;
    intern *details;                /* code, name, field count, error: see detail_add */
    uint32_t *detail_fp;            /* [detail id]: rix_hash_fp of its error's fingerprint */
    size_t fpcap;
    intern *prefixes;               /* the digit-free prefixes of ids */
    rix_names statuses, codes, names;
    bool overflow;
    uint64_t version;
    uint64_t layout;                /* rix_layout: bumped by every removal */
    size_t moved;                   /* bytes of tasks and slots copied by growth */
    rix_end end;
};

static void end_finish(rix *ix);

/* ---- the ids' arena ------------------------------------------------------------------ */

static const uint8_t *arena_at(const rix_arena *a, uint32_t off)
{
    return a->chunk[off >> RIX_CHUNK_BITS] + (off & (RIX_CHUNK - 1));
}

/* Appends len bytes (len <= RTID_ENC_MAX); returns their offset. */
static uint32_t arena_put(rix_arena *a, const uint8_t *p, size_t len)
{
    if (a->n == 0 || a->used + len > RIX_CHUNK) {
        xgrow(&a->chunk, &a->cap, a->n + 1, sizeof *a->chunk);
        a->chunk[a->n++] = xmalloc(RIX_CHUNK);
        a->used = 0;
    }
    uint32_t off = (uint32_t)((a->n - 1) << RIX_CHUNK_BITS | a->used);
    memcpy(a->chunk[a->n - 1] + a->used, p, len);
    a->used += len;
    return off;
}

static size_t arena_bytes(const rix_arena *a)
{
    return a->n * RIX_CHUNK + a->cap * sizeof *a->chunk;
}

static void arena_free(rix_arena *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->chunk[i]);
    free(a->chunk);
    *a = (rix_arena){ 0 };
}

static uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    h ^= h >> 33;                   /* spread every bit over the high half (the home slot) */
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
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
    ix->max = max_tasks < RIX_IDX_MASK ? max_tasks : RIX_IDX_MASK - 1;
    ix->nslots = RIX_MIN_SLOTS;
    ix->slots = xcalloc(ix->nslots, sizeof *ix->slots);
    ix->details = intern_new();
    ix->prefixes = intern_new();
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
    arena_free(&ix->end.arena);
    free(ix->end.slots);
    arena_free(&ix->arena);
    free(ix->tasks);
    free(ix->marks);
    free(ix->slots);
    free(ix->detail_fp);
    intern_free(ix->details);
    intern_free(ix->prefixes);
    names_free(&ix->statuses);
    names_free(&ix->codes);
    names_free(&ix->names);
    free(ix);
}

size_t rix_size(const rix *ix) { return ix->n; }
const rix_task *rix_at(const rix *ix, size_t i) { return &ix->tasks[i]; }
bool rix_overflow(const rix *ix) { return ix->overflow; }
uint64_t rix_version(const rix *ix) { return ix->version; }
uint64_t rix_layout(const rix *ix) { return ix->layout; }

/* Interned name index; the last slot collects everything beyond the table. */
static uint8_t intern_name(rix_names *nm, const char *s, uint8_t none)
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

static const unsigned char *detail_of(const rix *ix, const rix_task *t)
{
    return (const unsigned char *)intern_str(ix->details, t->detail);
}

const char *rix_code_name(const rix *ix, const rix_task *t)
{
    uint8_t code = detail_of(ix, t)[0];
    return code ? ix->codes.v[code] : NULL;
}

const char *rix_task_name(const rix *ix, const rix_task *t)
{
    uint8_t name = detail_of(ix, t)[1];
    return name ? ix->names.v[name] : NULL;
}

const char *rix_error(const rix *ix, const rix_task *t)
{
    return (const char *)detail_of(ix, t) + RIX_DETAIL_HEAD;
}

uint32_t rix_fp(const rix *ix, const rix_task *t) { return ix->detail_fp[t->detail]; }

/* ---- ids and the hash slots ------------------------------------------------------ */

/* While the arena is compacted in slices, tasks [0, end.k) are already in the new one. */
static const uint8_t *entry_of(const rix *ix, const rix_task *t)
{
    if (ix->end.phase == RIX_END_COMPACT && (size_t)(t - ix->tasks) < ix->end.k)
        return arena_at(&ix->end.arena, t->id);
    return arena_at(&ix->arena, t->id);
}

const uint8_t *rix_entry(const rix *ix, const rix_task *t) { return entry_of(ix, t); }

const char *rix_id(const rix *ix, const rix_task *t, rix_idbuf *buf)
{
    const uint8_t *e = entry_of(ix, t);
    uint32_t p = rtid_prefix(e);
    rtid_decode(e, p ? intern_str(ix->prefixes, p) : NULL, p ? intern_len(ix->prefixes, p) : 0,
                buf->s);
    return buf->s;
}

static void key_of_entry(const uint8_t *e, rix_key *k)
{
    k->len = rtid_enc_len(e);
    memcpy(k->enc, e, k->len);
    k->h = hash_bytes(k->enc, k->len);
}

static void key_make(const char *id, size_t idlen, const rtid_parts *p, uint32_t pid,
                     rix_key *k)
{
    k->len = rtid_encode(id, idlen, p, pid, k->enc);
    k->h = hash_bytes(k->enc, k->len);
}

/* The compact form of an id to look up; false when it cannot be in the index (unindexable,
 * or its prefix is not held). */
static bool key_find(const rix *ix, const char *id, size_t idlen, rix_key *k)
{
    rtid_parts p;
    if (!rtid_split(id, idlen, &p))
        return false;
    uint32_t pid = p.prefixed ? intern_find(ix->prefixes, id, p.plen) : 0;
    if (p.prefixed && !pid)
        return false;
    key_make(id, idlen, &p, pid, k);
    return true;
}

static size_t home_of(const rix *ix, uint64_t h)
{
    return (size_t)(((h >> 32) * (uint64_t)ix->nslots) >> 32);
}

static uint32_t tag_of(uint64_t h) { return (uint32_t)(h & (0xFFFFFFFFu >> RIX_IDX_BITS)); }
static size_t slot_next(const rix *ix, size_t i) { return i + 1 == ix->nslots ? 0 : i + 1; }

/* The slot of k, or the free slot where it would go (*found false). */
static size_t slot_find(const rix *ix, const rix_key *k, bool *found)
{
    uint32_t tag = tag_of(k->h);
    for (size_t i = home_of(ix, k->h);; i = slot_next(ix, i)) {
        uint32_t v = ix->slots[i];
        if (!v) {
            *found = false;
            return i;
        }
        if (v >> RIX_IDX_BITS != tag)
            continue;
        const uint8_t *e = entry_of(ix, &ix->tasks[(v & RIX_IDX_MASK) - 1]);
        if (rtid_enc_len(e) == k->len && memcmp(e, k->enc, k->len) == 0) {
            *found = true;
            return i;
        }
    }
}

static uint32_t slot_value(uint64_t h, size_t k)
{
    return tag_of(h) << RIX_IDX_BITS | (uint32_t)(k + 1);
}

/* Task k into a table being built (ids are distinct: the first free slot). */
static void slot_put(const rix *ix, uint32_t *slots, size_t nslots, size_t k)
{
    const uint8_t *e = entry_of(ix, &ix->tasks[k]);
    uint64_t h = hash_bytes(e, rtid_enc_len(e));
    size_t i = (size_t)(((h >> 32) * (uint64_t)nslots) >> 32);
    while (slots[i])
        i = i + 1 == nslots ? 0 : i + 1;
    slots[i] = slot_value(h, k);
}

static void rehash(rix *ix, size_t nslots)
{
    ix->moved += ix->n * sizeof *ix->slots;
    free(ix->slots);
    ix->nslots = nslots;
    ix->slots = xcalloc(nslots, sizeof *ix->slots);
    for (size_t k = 0; k < ix->n; k++)
        slot_put(ix, ix->slots, nslots, k);
}

/* Slots for n tasks at most 80 % full. */
static size_t slots_for(size_t n)
{
    size_t s = n + n / 4 + 64;
    return s < RIX_MIN_SLOTS ? RIX_MIN_SLOTS : s;
}

/* Linear-probing deletion with backward shift (no tombstones). */
static void slot_delete(rix *ix, size_t i)
{
    size_t j = i;
    for (;;) {
        ix->slots[i] = 0;
        for (;;) {
            j = slot_next(ix, j);
            if (!ix->slots[j])
                return;
            const uint8_t *e = entry_of(ix, &ix->tasks[(ix->slots[j] & RIX_IDX_MASK) - 1]);
            size_t home = home_of(ix, hash_bytes(e, rtid_enc_len(e)));
            /* move j back to i unless its home lies cyclically in (i, j] */
            bool stay = i <= j ? (i < home && home <= j) : (i < home || home <= j);
            if (!stay)
                break;
        }
        ix->slots[i] = ix->slots[j];
        i = j;
    }
}

const rix_task *rix_get(const rix *ix, const char *id, size_t idlen)
{
    rix_key k;
    bool found;
    if (!key_find(ix, id, idlen, &k))
        return NULL;
    size_t i = slot_find(ix, &k, &found);
    return found ? &ix->tasks[(ix->slots[i] & RIX_IDX_MASK) - 1] : NULL;
}

/* ---- memory ----------------------------------------------------------------------- */

static size_t marks_words(size_t cap) { return (cap + 63) / 64; }

size_t rix_memory(const rix *ix)
{
    return sizeof *ix + ix->cap * sizeof *ix->tasks + marks_words(ix->cap) * 8 +
           arena_bytes(&ix->arena) + ix->nslots * sizeof *ix->slots +
           ix->fpcap * sizeof *ix->detail_fp + intern_bytes(ix->details) +
           intern_bytes(ix->prefixes) + arena_bytes(&ix->end.arena) +
           ix->end.nslots * sizeof *ix->end.slots;
}

static void tasks_resize(rix *ix, size_t cap)
{
    size_t old = marks_words(ix->cap);
    if (cap > ix->cap)
        ix->moved += ix->n * sizeof *ix->tasks;
    ix->tasks = xrealloc(ix->tasks, cap * sizeof *ix->tasks);
    ix->marks = xrealloc(ix->marks, marks_words(cap) * 8);
    if (marks_words(cap) > old)
        memset(ix->marks + old, 0, (marks_words(cap) - old) * 8);
    ix->cap = cap;
}

static bool mark_get(const rix *ix, size_t k) { return ix->marks[k / 64] >> (k % 64) & 1; }

static void mark_set(rix *ix, size_t k, bool on)
{
    uint64_t bit = 1ull << (k % 64);
    ix->marks[k / 64] = on ? ix->marks[k / 64] | bit : ix->marks[k / 64] & ~bit;
}

/* Compaction: the live ids, in task order, into a new arena; between its slices
 * (rix_sweep_end_step) tasks [0, end.k) are in the new arena, the rest in the old. */
static void compact_begin(rix *ix)
{
    ix->end = (rix_end){ .phase = RIX_END_COMPACT, .removed = ix->end.removed,
                         .work = ix->end.work };
}

static size_t compact_slice(rix *ix, size_t budget)
{
    rix_end *e = &ix->end;
    size_t done = 0;
    for (; e->k < ix->n && done < budget; done++) {
        rix_task *t = &ix->tasks[e->k];
        const uint8_t *p = entry_of(ix, t);
        size_t len = rtid_enc_len(p);
        t->id = arena_put(&e->arena, p, len);
        e->alen += len;
        e->k++;
    }
    return done;
}

static void compact_done(rix *ix)
{
    arena_free(&ix->arena);
    ix->arena = ix->end.arena;
    ix->alen = ix->end.alen;
    ix->agarbage = 0;
    ix->end.arena = (rix_arena){ 0 };
}

/* ---- upsert and remove ------------------------------------------------------------- */

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

/* The interned detail of sum (one more reference); its fingerprint is hashed once, when the
 * text is new. */
static uint32_t detail_add(rix *ix, const rix_sum *sum)
{
    char key[RIX_DETAIL_HEAD + RIX_ERROR_CAP];
    size_t elen = err_len(sum->error);
    key[0] = (char)intern_name(&ix->codes, sum->code, 0);
    key[1] = (char)intern_name(&ix->names, sum->name, 0);
    key[2] = (char)(sum->nfields < 0 ? 0 : sum->nfields > 255 ? 255 : sum->nfields);
    if (elen)
        memcpy(key + RIX_DETAIL_HEAD, sum->error, elen);
    uint32_t d = intern_add(ix->details, key, RIX_DETAIL_HEAD + elen);
    if (intern_refs(ix->details, d) > 1)
        return d;
    if (d >= ix->fpcap) {            /* by an eighth, as the details' ids grow */
        size_t cap = ix->fpcap + ix->fpcap / 8 + 64;
        cap = cap > d ? cap : (size_t)d + 1;
        ix->detail_fp = xrealloc(ix->detail_fp, cap * sizeof *ix->detail_fp);
        ix->fpcap = cap;
    }
    ix->detail_fp[d] = 0;
    if (elen) {
        char fp[160];
        fingerprint_make(intern_str(ix->details, d) + RIX_DETAIL_HEAD, fp, sizeof fp);
        ix->detail_fp[d] = rix_hash_fp(fp);
    }
    return d;
}

/* Fills t's summary from sum (the detail with a reference of its own). */
static void fill(rix *ix, rix_task *t, const rix_sum *sum)
{
    t->dispatched_at = sum->dispatched_at;
    t->resolved_s = sum->resolved_at > 0 && sum->resolved_at < 4e9 ? (uint32_t)sum->resolved_at : 0;
    t->attempt = (uint16_t)(sum->attempt > 0 && sum->attempt < 65535 ? sum->attempt : 0);
    t->status = intern_name(&ix->statuses, sum->status, 0);
    t->flags = (uint8_t)sum->flags;
    t->detail = detail_add(ix, sum);
}

static bool same(const rix_task *a, const rix_task *b)
{
    return a->dispatched_at == b->dispatched_at && a->resolved_s == b->resolved_s &&
           a->attempt == b->attempt && a->status == b->status && a->detail == b->detail &&
           a->flags == b->flags;
}

static bool update(rix *ix, size_t k, const rix_sum *sum)
{
    rix_task *t = &ix->tasks[k], nt = *t;
    fill(ix, &nt, sum);
    intern_drop(ix->details, t->detail);
    bool changed = !same(t, &nt);
    *t = nt;
    mark_set(ix, k, true);
    if (changed)
        ix->version++;
    return changed;
}

static bool insert(rix *ix, const char *id, size_t idlen, const rtid_parts *p,
                   const rix_sum *sum)
{
    rix_key k;
    bool found;
    end_finish(ix);
    if (ix->n >= ix->max) {
        ix->overflow = true;
        return false;
    }
    key_make(id, idlen, p, p->prefixed ? intern_add(ix->prefixes, id, p->plen) : 0, &k);
    if (ix->n == ix->cap)
        tasks_resize(ix, ix->cap ? ix->cap + ix->cap / 2 : 1024);
    rix_task *t = &ix->tasks[ix->n];
    t->id = arena_put(&ix->arena, k.enc, k.len);
    ix->alen += k.len;
    fill(ix, t, sum);
    mark_set(ix, ix->n, true);
    ix->slots[slot_find(ix, &k, &found)] = slot_value(k.h, ix->n);
    ix->n++;
    if (ix->n * 5 > ix->nslots * 4)
        rehash(ix, ix->nslots + ix->nslots / 2);
    ix->version++;
    return true;
}

bool rix_upsert(rix *ix, const char *id, size_t idlen, const rix_sum *sum)
{
    rix_key k;
    bool found = false;
    rtid_parts p;
    if (!rtid_split(id, idlen, &p))
        return false;
    size_t i = key_find(ix, id, idlen, &k) ? slot_find(ix, &k, &found) : 0;
    if (found)
        return update(ix, (ix->slots[i] & RIX_IDX_MASK) - 1, sum);
    return insert(ix, id, idlen, &p, sum);
}

void rix_reserve(rix *ix, size_t n)
{
    end_finish(ix);
    if (n > ix->max)
        n = ix->max;
    if (slots_for(n) > ix->nslots)
        rehash(ix, slots_for(n));
    if (n > ix->cap)
        tasks_resize(ix, n);
}

/* Removes the task in slot i (task k): the last task moves into its place. */
static void remove_at(rix *ix, size_t i)
{
    size_t k = (ix->slots[i] & RIX_IDX_MASK) - 1, last = ix->n - 1;
    const uint8_t *e = entry_of(ix, &ix->tasks[k]);
    slot_delete(ix, i);
    ix->agarbage += rtid_enc_len(e);
    intern_drop(ix->prefixes, rtid_prefix(e));
    intern_drop(ix->details, ix->tasks[k].detail);
    if (k != last) {
        rix_key lk;
        bool found;
        key_of_entry(entry_of(ix, &ix->tasks[last]), &lk);
        size_t li = slot_find(ix, &lk, &found);
        ix->tasks[k] = ix->tasks[last];
        mark_set(ix, k, mark_get(ix, last));
        ix->slots[li] = slot_value(lk.h, k);
    }
    ix->n--;
    ix->version++;
    ix->layout++;
}

bool rix_remove(rix *ix, const char *id, size_t idlen)
{
    rix_key k;
    bool found;
    end_finish(ix);
    if (!key_find(ix, id, idlen, &k))
        return false;
    size_t i = slot_find(ix, &k, &found);
    if (found)
        remove_at(ix, i);
    return found;
}

void rix_sweep_begin(rix *ix)
{
    end_finish(ix);
    if (ix->marks)                     /* none before the first task */
        memset(ix->marks, 0, marks_words(ix->cap) * 8);
    ix->overflow = false;
}

void rix_touch(rix *ix, const char *id, size_t idlen)
{
    rix_key k;
    bool found;
    if (!key_find(ix, id, idlen, &k))
        return;
    size_t i = slot_find(ix, &k, &found);
    if (found)
        mark_set(ix, (ix->slots[i] & RIX_IDX_MASK) - 1, true);
}

/* ---- the end of a sweep, in slices ------------------------------------------------ */

/* Removes the unmarked tasks, from the last down (a removal moves the last task, already
 * walked, into the hole). */
static size_t walk_slice(rix *ix, size_t budget)
{
    rix_end *e = &ix->end;
    size_t done = 0;
    for (; e->k > 0 && done < budget; done++) {
        size_t k = --e->k;
        if (mark_get(ix, k))
            continue;
        rix_key key;
        bool found;
        key_of_entry(entry_of(ix, &ix->tasks[k]), &key);
        remove_at(ix, slot_find(ix, &key, &found));
        e->removed++;
    }
    return done;
}

static size_t rehash_slice(rix *ix, size_t budget)
{
    rix_end *e = &ix->end;
    size_t done = 0;
    for (; e->k < ix->n && done < budget; done++, e->k++)
        slot_put(ix, e->slots, e->nslots, e->k);
    return done;
}

/* The phase after a finished one: every array back to what the tasks need plus a little
 * room (the same sizes after every sweep over the same tasks, however much they churned). */
static void end_next(rix *ix)
{
    rix_end *e = &ix->end;
    if (e->phase == RIX_END_WALK && ix->agarbage > 0) {   /* the removed ids' bytes back */
        compact_begin(ix);
        return;
    }
    if (e->phase == RIX_END_COMPACT)
        compact_done(ix);
    if (e->phase == RIX_END_REHASH) {
        free(ix->slots);
        ix->slots = e->slots;
        ix->nslots = e->nslots;
        e->slots = NULL;
    } else {
        if (ix->cap > ix->n + ix->n / 16 + 64)
            tasks_resize(ix, ix->n + ix->n / 64 + 64);
        size_t slots = slots_for(ix->n + ix->n / 32);
        if (ix->nslots > slots + slots / 4) {
            e->slots = xcalloc(slots, sizeof *e->slots);
            e->nslots = slots;
            e->k = 0;
            e->phase = RIX_END_REHASH;
            return;
        }
    }
    *e = (rix_end){ .phase = RIX_END_NONE, .removed = e->removed, .work = e->work };
}

static bool phase_over(const rix *ix)
{
    return ix->end.phase == RIX_END_WALK ? ix->end.k == 0 : ix->end.k == ix->n;
}

bool rix_sweep_end_step(rix *ix, size_t budget, size_t *removed)
{
    rix_end *e = &ix->end;
    if (e->phase == RIX_END_NONE)
        *e = (rix_end){ .phase = RIX_END_WALK, .k = ix->n };
    e->work = 0;
    while (e->phase != RIX_END_NONE && e->work < budget) {
        size_t left = budget - e->work;
        e->work += e->phase == RIX_END_WALK      ? walk_slice(ix, left)
                   : e->phase == RIX_END_COMPACT ? compact_slice(ix, left)
                                                 : rehash_slice(ix, left);
        if (phase_over(ix))
            end_next(ix);
    }
    if (removed)
        *removed = e->removed;
    return e->phase == RIX_END_NONE;
}

size_t rix_sweep_end(rix *ix)
{
    size_t removed = 0;
    rix_sweep_end_step(ix, SIZE_MAX, &removed);
    return removed;
}

bool rix_sweep_ending(const rix *ix) { return ix->end.phase != RIX_END_NONE; }
size_t rix_moved(const rix *ix) { return ix->moved; }
size_t rix_sweep_end_work(const rix *ix) { return ix->end.work; }

/* A change the slices do not expect (a new task, a removal, a new sweep) first finishes the
 * end under way: the index is then exactly what one rix_sweep_end would have left. */
static void end_finish(rix *ix)
{
    if (ix->end.phase != RIX_END_NONE)
        rix_sweep_end_step(ix, SIZE_MAX, NULL);
}
