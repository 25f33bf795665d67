/* A batch record run part by part (batchrun.h). */
#include "batchrun.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "actions_priv.h"

/* One part: the targets it owns (copied from the record) and their item numbers. */
typedef struct part {
    rd_target t[BATCHRUN_PART];
    size_t items[BATCHRUN_PART];
    const char *keys[BATCHRUN_PART];
    char keybuf[BATCHRUN_PART][33];
    size_t n;
} part;

struct rd_batchrun {
    rd_actor *a;
    rd_batch_info info;
    rd_batchrun_opts o;
    rd_batchrun_cbs cbs;
    void *ud;
    rd_batchrd *rd;
    unsigned char *st;          /* each item's state when the run began (batchrec.h) */
    rd_bitem_key *keys;
    size_t nkeys;
    size_t todo, finished, ok, held;
    rd_batch *cur;
    part p;
    double started, last_send;
    bool aborted, done;
    char why[256];
};

static void part_clear(part *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free((char *)(uintptr_t)p->t[i].id);
        free((char *)(uintptr_t)p->t[i].parent);
        free((char *)(uintptr_t)p->t[i].fp);
    }
    p->n = 0;
}

static const char *key_of(const rd_batchrun *r, size_t item)
{
    for (size_t k = 0; k < r->nkeys; k++)
        if (r->keys[k].item == item)
            return r->keys[k].key;
    return NULL;
}

/* Whether this run sends the item. */
static bool wanted(const rd_batchrun *r, size_t item)
{
    if (item >= r->info.total)
        return false;
    return r->o.resend_unknown ? r->st[item] == BITEM_UNKNOWN : r->st[item] == BITEM_NONE;
}

/* The next part from the record: false when nothing is left. */
static bool part_load(rd_batchrun *r)
{
    part *p = &r->p;
    part_clear(p);
    size_t item;
    rd_target t;
    while (p->n < BATCHRUN_PART && batchrd_next(r->rd, &item, &t)) {
        if (!wanted(r, item))
            continue;
        const char *key = r->st[item] == BITEM_UNKNOWN ? key_of(r, item) : NULL;
        p->t[p->n] = (rd_target){.id = xstrdup(t.id), .parent = xstrdup(t.parent),
                                 .fp = xstrdup(t.fp), .attempt = t.attempt,
                                 .override_ = t.override_};
        p->items[p->n] = item;
        snprintf(p->keybuf[p->n], 33, "%s", key ? key : "");
        p->keys[p->n] = p->keybuf[p->n];
        p->n++;
    }
    return p->n > 0;
}

static void run_done(rd_batchrun *r)
{
    if (r->done)
        return;
    r->done = true;
    if (r->cbs.on_done)
        r->cbs.on_done(r, r->ud);
}

static void on_part_item(rd_batch *b, size_t i, const rd_result *res, void *ud)
{
    rd_batchrun *r = ud;
    (void)b;
    if (res->code == RD_RES_ABORTED)
        return;               /* not sent: left for a resume */
    r->finished++;
    r->ok += res->code == RD_RES_OK;
    if (r->cbs.on_item)
        r->cbs.on_item(r, r->p.items[i], res, r->ud);
}

static bool part_start(rd_batchrun *r);

static void on_part_done(rd_batch *b, void *ud)
{
    rd_batchrun *r = ud;
    r->last_send = batch_last_send(b);
    batch_free(b);
    r->cur = NULL;
    if (r->aborted || !part_start(r))
        run_done(r);
}

/* Sends the next part; false when there is none or it was refused. */
static bool part_start(rd_batchrun *r)
{
    if (!part_load(r)) {
        if (batchrd_damage(r->rd)[0])   /* changed since it was checked */
            snprintf(r->why, sizeof r->why, "batch record %s is damaged: %s", r->info.path,
                     batchrd_damage(r->rd));
        return false;
    }
    rd_batch_opts bo = {.id = r->info.id, .items = r->p.items, .rate = r->o.rate,
                        .last_send = r->last_send, .keys = r->p.keys};
    rd_batch_cbs cbs = {.on_item = on_part_item, .on_done = on_part_done};
    rd_action kind;
    if (!action_from_name(r->info.action, &kind)) {
        snprintf(r->why, sizeof r->why, "unknown action in the batch record");
        return false;
    }
    r->cur = actor_run_batch_opts(r->a, kind, r->p.t, r->p.n, r->info.reason, &bo, &cbs, r,
                                  r->why, sizeof r->why);
    return r->cur != NULL;
}

rd_batchrun *batchrun_start(rd_actor *a, const rd_batch_info *b, const rd_batchrun_opts *o,
                            const rd_batchrun_cbs *cbs, void *ud, char *why, size_t whycap)
{
    if (b->damaged) {
        snprintf(why, whycap, "%s", b->damaged);
        return NULL;
    }
    if (b->abandoned) {
        snprintf(why, whycap, "batch %s was abandoned", b->id);
        return NULL;
    }
    if (!batchrec_check_items(b, why, whycap))
        return NULL;          /* nothing is sent from a record read only in part */
    rd_batchrun *r = xcalloc(1, sizeof *r);
    r->a = a;
    r->info = (rd_batch_info){.total = b->total};
    memcpy(r->info.id, b->id, sizeof r->info.id);
    r->info.action = xstrdup(b->action);
    r->info.reason = xstrdup(b->reason);
    r->info.path = xstrdup(b->path);
    if (o)
        r->o = *o;
    if (cbs)
        r->cbs = *cbs;
    r->ud = ud;
    if (!batchrec_states(actor_journal_path(a), b, &r->st, &r->keys, &r->nkeys, why, whycap) ||
        !(r->rd = batchrd_open(b->path, why, whycap))) {
        batchrun_free(r);
        return NULL;
    }
    for (size_t i = 0; i < b->total; i++) {
        r->todo += wanted(r, i);
        r->held += r->st[i] == BITEM_UNKNOWN && !r->o.resend_unknown;
    }
    r->started = clock_mono();
    if (r->todo && !part_start(r)) {
        snprintf(why, whycap, "%s", r->why[0] ? r->why : "nothing to send");
        batchrun_free(r);
        return NULL;
    }
    if (!r->todo)
        snprintf(why, whycap, "nothing left to send");
    return r->todo ? r : (batchrun_free(r), NULL);
}

size_t batchrun_todo(const rd_batchrun *r) { return r->todo; }
size_t batchrun_finished(const rd_batchrun *r) { return r->finished; }
size_t batchrun_ok(const rd_batchrun *r) { return r->ok; }
size_t batchrun_held(const rd_batchrun *r) { return r->held; }
const char *batchrun_why(const rd_batchrun *r) { return r->why; }

double batchrun_eta(const rd_batchrun *r)
{
    size_t left = r->todo > r->finished ? r->todo - r->finished : 0;
    if (r->finished > 0)
        return (clock_mono() - r->started) / (double)r->finished * (double)left;
    const rd_system_cfg *c = actor_cfg(r->a);
    double rate = r->o.rate > 0 ? r->o.rate : c->rate_limit > 0 ? c->rate_limit : 5;
    return (double)left / rate;
}

void batchrun_abort(rd_batchrun *r)
{
    if (!r || r->aborted)
        return;
    r->aborted = true;
    if (r->cur)
        batch_abort(r->cur);
    else
        run_done(r);
}

void batchrun_free(rd_batchrun *r)
{
    if (!r)
        return;
    if (r->cur) {
        rd_batch *b = r->cur;
        r->cur = NULL;
        batch_free(b);        /* what is in flight is journaled as unknown */
    }
    part_clear(&r->p);
    batchrd_close(r->rd);
    free(r->st);
    free(r->keys);
    batch_info_clear(&r->info);
    free(r);
}
