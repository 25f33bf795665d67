/* The targets of open batches, for a new selection to leave out (batchopen.h). */
#include "batchopen.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/intern.h"
#include "../core/xalloc.h"
#include "batchrec.h"

typedef struct open_batch {
    char id[17];
    size_t hits;
} open_batch;

struct rd_batchopen {
    intern *set;              /* the id of each open target (unique in its system) */
    uint32_t *owner;          /* by intern id: index into batches */
    size_t cap_owner;
    open_batch *b;
    size_t nb, left_out;
};

static void add_target(rd_batchopen *o, size_t bi, const rd_target *t)
{
    size_t len = strlen(t->id);
    if (!intern_find(o->set, t->id, len)) {
        uint32_t id = intern_add(o->set, t->id, len);
        xgrow(&o->owner, &o->cap_owner, (size_t)id + 1, sizeof *o->owner);
        o->owner[id] = (uint32_t)bi;
    }
}

/* b's items not done (never sent, or unknown) into the set; false with why. */
static bool load_one(rd_batchopen *o, const char *journal, const rd_batch_info *b, char *why,
                     size_t whycap)
{
    unsigned char *st = NULL;
    rd_bitem_key *keys = NULL;
    size_t nkeys = 0;
    if (!batchrec_states(journal, b, &st, &keys, &nkeys, why, whycap)) {
        free(st);
        free(keys);
        return false;
    }
    rd_batchrd *rd = batchrd_open(b->path, why, whycap);
    if (rd) {
        size_t bi = o->nb++;
        o->b = xrealloc(o->b, o->nb * sizeof *o->b);
        o->b[bi] = (open_batch){0};
        memcpy(o->b[bi].id, b->id, sizeof o->b[bi].id);
        size_t item;
        rd_target t;
        while (batchrd_next(rd, &item, &t))
            if (item < b->total && (st[item] == BITEM_NONE || st[item] == BITEM_UNKNOWN))
                add_target(o, bi, &t);
        batchrd_close(rd);
    }
    free(st);
    free(keys);
    return rd != NULL;
}

rd_batchopen *batchopen_load(const char *journal, const char *system, const char *except,
                             char *why, size_t whycap)
{
    rd_batchopen *o = xcalloc(1, sizeof *o);
    o->set = intern_new();
    if (whycap)
        why[0] = 0;
    rd_batch_info *v = NULL;
    size_t n = 0;
    char w[400];
    if (!batchrec_list(journal, &v, &n, w, sizeof w) && !n) {
        snprintf(why, whycap, "%s", w);
        return o;
    }
    for (size_t i = 0; i < n; i++) {
        const rd_batch_info *b = &v[i];
        if (b->damaged || !b->system || strcmp(b->system, system) != 0 ||
            (except && !strcmp(b->id, except)) || !batch_info_open(b))
            continue;
        if (!load_one(o, journal, b, w, sizeof w))
            snprintf(why, whycap, "%s", w);
    }
    batch_infos_free(v, n);
    return o;
}

const char *batchopen_take(rd_batchopen *o, const char *id, const char *parent)
{
    (void)parent;             /* an id is unique in its system (a Tasker step's uuid too) */
    if (!o || !o->nb || !id)
        return NULL;
    uint32_t k = intern_find(o->set, id, strlen(id));
    if (!k)
        return NULL;
    open_batch *b = &o->b[o->owner[k]];
    b->hits++;
    o->left_out++;
    return b->id;
}

size_t batchopen_left_out(const rd_batchopen *o) { return o ? o->left_out : 0; }
size_t batchopen_items(const rd_batchopen *o) { return o ? intern_count(o->set) : 0; }

bool batchopen_hit(const rd_batchopen *o, size_t k, const char **id, size_t *n)
{
    for (size_t i = 0; o && i < o->nb; i++)
        if (o->b[i].hits && k-- == 0) {
            *id = o->b[i].id;
            *n = o->b[i].hits;
            return true;
        }
    return false;
}

void batchopen_line(const char *id, size_t n, char *out, size_t cap)
{
    snprintf(out, cap, "%zu of these %s in open batch %s: left out", n, n == 1 ? "is" : "are", id);
}

void batchopen_free(rd_batchopen *o)
{
    if (!o)
        return;
    intern_free(o->set);
    free(o->owner);
    free(o->b);
    free(o);
}
