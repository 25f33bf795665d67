#include "intern.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

enum { TEXT_MIN = 256 };               /* the texts' first arena */
static const uint32_t NO_TEXT = UINT32_MAX;   /* a free entry's offset */

typedef struct ientry {
    uint32_t off;                      /* in the texts' arena; NO_TEXT: free (its next free
                                          id in refs) */
    uint32_t len, refs, hash;
} ientry;

/* The texts back to back (each NUL-terminated) in one arena, not a block each: a text of
 * 40 bytes costs 41, not 41 + malloc's 16 + an 8-byte pointer. A dropped text is garbage
 * until the arena would grow: then the held texts are copied into a new arena instead,
 * when garbage is a quarter of it. */
typedef struct itexts {
    char *buf;
    size_t used, cap, garbage;
} itexts;

struct intern {
    ientry *e;                         /* [id - 1] */
    size_t n, cap;                     /* ids handed out (held or free) */
    size_t held;
    itexts t;
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
    free(in->t.buf);
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
        if (e->hash == h && e->len == len && memcmp(in->t.buf + e->off, s, len) == 0)
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
        if (e->off != NO_TEXT)
            in->slots[slot_of(in, in->t.buf + e->off, e->len, e->hash)] = (uint32_t)k + 1;
    }
}

uint32_t intern_find(const intern *in, const char *s, size_t len)
{
    return in->slots[slot_of(in, s, len, hash_of(s, len))];
}

/* Room for `need` more bytes of text: the held texts copied into a new arena when a
 * quarter of this one is garbage, else the arena grown by an eighth (at least). */
static void texts_room(intern *in, size_t need)
{
    itexts *t = &in->t;
    if (t->used + need <= t->cap)
        return;
    if (t->garbage * 4 >= t->used && t->garbage > 0) {
        size_t live = t->used - t->garbage, cap = live + need + (live + need) / 8;
        char *buf = xmalloc(cap < TEXT_MIN ? TEXT_MIN : cap), *o = buf;
        for (size_t k = 0; k < in->n; k++) {
            ientry *e = &in->e[k];
            if (e->off == NO_TEXT)
                continue;
            memcpy(o, t->buf + e->off, e->len + 1);
            e->off = (uint32_t)(o - buf);
            o += e->len + 1;
        }
        free(t->buf);
        *t = (itexts){ .buf = buf, .used = (size_t)(o - buf), .cap = cap < TEXT_MIN ? TEXT_MIN : cap };
        return;
    }
    size_t cap = t->cap + t->cap / 8;
    cap = cap < t->used + need ? t->used + need : cap;
    cap = cap < TEXT_MIN ? TEXT_MIN : cap;
    t->buf = xrealloc(t->buf, cap);
    t->cap = cap;
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
        if (in->n == in->cap) {      /* by an eighth: a table of many texts has little room */
            in->cap += in->cap / 8 + 16;
            in->e = xrealloc(in->e, in->cap * sizeof *in->e);
        }
        id = (uint32_t)++in->n;
    }
    texts_room(in, len + 1);
    ientry *e = &in->e[id - 1];
    e->off = (uint32_t)in->t.used;
    memcpy(in->t.buf + e->off, s, len);
    in->t.buf[e->off + len] = '\0';
    in->t.used += len + 1;
    e->len = (uint32_t)len;
    e->refs = 1;
    e->hash = h;
    in->slots[i] = id;
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
    slot_delete(in, slot_of(in, in->t.buf + e->off, e->len, e->hash));
    in->t.garbage += e->len + 1;
    e->off = NO_TEXT;
    e->refs = in->free_head;
    in->free_head = id;
    in->held--;
}

const char *intern_str(const intern *in, uint32_t id) { return in->t.buf + in->e[id - 1].off; }
size_t intern_len(const intern *in, uint32_t id) { return in->e[id - 1].len; }
uint32_t intern_refs(const intern *in, uint32_t id)
{
    return in->e[id - 1].off != NO_TEXT ? in->e[id - 1].refs : 0;
}
size_t intern_count(const intern *in) { return in->held; }

size_t intern_bytes(const intern *in)
{
    return sizeof *in + in->cap * sizeof *in->e + in->nslots * sizeof *in->slots + in->t.cap;
}
