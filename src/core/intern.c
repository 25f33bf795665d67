#include "intern.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

enum { INTERN_ALLOC_OVERHEAD = 16 };   /* what a malloc'd block costs beyond its size */

typedef struct ientry {
    char *s;                           /* NULL: free (its next free id in refs) */
    uint32_t len, refs, hash;
} ientry;

struct intern {
    ientry *e;                         /* [id - 1] */
    size_t n, cap;                     /* ids handed out (held or free) */
    size_t held;
    size_t text_bytes;                 /* held texts with their allowance */
    uint32_t free_head;                /* a free id, 0 none */
    uint32_t *slots;                   /* id, 0 empty; open addressing, linear probing */
    size_t nslots;                     /* power of two */
};

static uint32_t hash_of(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return (uint32_t)(h ^ (h >> 32));
}

intern *intern_new(void)
{
    intern *in = xcalloc(1, sizeof *in);
    in->nslots = 16;
    in->slots = xcalloc(in->nslots, sizeof *in->slots);
    return in;
}

void intern_free(intern *in)
{
    if (!in)
        return;
    for (size_t i = 0; i < in->n; i++)
        free(in->e[i].s);
    free(in->e);
    free(in->slots);
    free(in);
}

/* The slot holding s, or the empty slot where it would go. */
static size_t slot_of(const intern *in, const char *s, size_t len, uint32_t h)
{
    size_t mask = in->nslots - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint32_t id = in->slots[i];
        if (!id)
            return i;
        const ientry *e = &in->e[id - 1];
        if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0)
            return i;
    }
}

static void rehash(intern *in, size_t nslots)
{
    free(in->slots);
    in->nslots = nslots;
    in->slots = xcalloc(nslots, sizeof *in->slots);
    for (size_t k = 0; k < in->n; k++) {
        const ientry *e = &in->e[k];
        if (e->s)
            in->slots[slot_of(in, e->s, e->len, e->hash)] = (uint32_t)k + 1;
    }
}

uint32_t intern_find(const intern *in, const char *s, size_t len)
{
    return in->slots[slot_of(in, s, len, hash_of(s, len))];
}

uint32_t intern_add(intern *in, const char *s, size_t len)
{
    uint32_t h = hash_of(s, len);
    size_t i = slot_of(in, s, len, h);
    if (in->slots[i]) {
        in->e[in->slots[i] - 1].refs++;
        return in->slots[i];
    }
    uint32_t id = in->free_head;
    if (id) {
        in->free_head = in->e[id - 1].refs;
    } else {
        xgrow(&in->e, &in->cap, in->n + 1, sizeof *in->e);
        id = (uint32_t)++in->n;
    }
    ientry *e = &in->e[id - 1];
    e->s = xmalloc(len + 1);
    memcpy(e->s, s, len);
    e->s[len] = '\0';
    e->len = (uint32_t)len;
    e->refs = 1;
    e->hash = h;
    in->slots[i] = id;
    in->text_bytes += len + 1 + INTERN_ALLOC_OVERHEAD;
    if (++in->held * 4 > in->nslots * 3)
        rehash(in, in->nslots * 2);
    return id;
}

/* Linear-probing deletion with backward shift (no tombstones). */
static void slot_delete(intern *in, size_t i)
{
    size_t mask = in->nslots - 1, j = i;
    for (;;) {
        in->slots[i] = 0;
        for (;;) {
            j = (j + 1) & mask;
            if (!in->slots[j])
                return;
            size_t home = in->e[in->slots[j] - 1].hash & mask;
            bool stay = i <= j ? (i < home && home <= j) : (i < home || home <= j);
            if (!stay)
                break;
        }
        in->slots[i] = in->slots[j];
        i = j;
    }
}

void intern_drop(intern *in, uint32_t id)
{
    if (!id)
        return;
    ientry *e = &in->e[id - 1];
    if (--e->refs > 0)
        return;
    slot_delete(in, slot_of(in, e->s, e->len, e->hash));
    in->text_bytes -= e->len + 1 + INTERN_ALLOC_OVERHEAD;
    free(e->s);
    e->s = NULL;
    e->refs = in->free_head;
    in->free_head = id;
    in->held--;
}

const char *intern_str(const intern *in, uint32_t id) { return in->e[id - 1].s; }
size_t intern_len(const intern *in, uint32_t id) { return in->e[id - 1].len; }
uint32_t intern_refs(const intern *in, uint32_t id) { return in->e[id - 1].s ? in->e[id - 1].refs : 0; }
size_t intern_count(const intern *in) { return in->held; }

size_t intern_bytes(const intern *in)
{
    return sizeof *in + in->cap * sizeof *in->e + in->nslots * sizeof *in->slots +
           in->text_bytes;
}
