/* The Redis source's key discovery: the bounded SCAN sweep, keys named by keyspace
 * notifications, and the chain on request. Each turns keys into a fetch batch
 * (redis_fetch.c). */
#include "redis_priv.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"

/* ---- SCAN ------------------------------------------------------------------------- */

static void on_scan(struct redisAsyncContext *ac, void *reply, void *priv)
{
    rs_src *s = priv;
    rs_reply_begin(s);
    const redisReply *r = reply;
    s->scan_inflight = false;
    if (!s->sweeping)
        goto out;
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_STRING ||
        r->element[1]->type != REDIS_REPLY_ARRAY) {
        s->sweeping = false;
        char msg[200] = "SCAN failed";
        if (r && r->type == REDIS_REPLY_ERROR)
            rs_error_text(s, "SCAN", r->str, msg, sizeof msg);
        rs_fail(s, msg);
        goto out;
    }
    snprintf(s->cursor, sizeof s->cursor, "%s", r->element[0]->str);
    s->cursor_done = strcmp(s->cursor, "0") == 0;
    const redisReply *keys = r->element[1];
    rs_batch *b = rs_batch_new(s, RS_BATCH_SWEEP, keys->elements);
    for (size_t i = 0; i < keys->elements; i++) {
        const redisReply *k = keys->element[i];
        size_t idlen;
        const char *id;
        if (k->type != REDIS_REPLY_STRING || !(id = rs_task_id(s, k->str, k->len, &idlen)))
            continue;
        (void)id;                    /* SCAN duplicates are rare and harmless */
        rs_batch_add(b, k->str, k->len);
    }
    s->sweep_keys += (unsigned)rs_batch_size(b);
    s->batches++;
    rs_sweep_continue(s);            /* overlap the next SCAN with this batch */
    rs_batch_run(b);
out:
    rs_reply_end(s);
}

void rs_sweep_continue(rs_src *s)
{
    if (!s->sweeping || s->scan_inflight || s->cursor_done || s->batches >= RS_SWEEP_INFLIGHT)
        return;
    char count[16];
    snprintf(count, sizeof count, "%d", RS_SCAN_COUNT);
    const char *argv[6] = { "SCAN", s->cursor, "MATCH", s->match, "COUNT", count };
    size_t lens[6] = { 4, strlen(s->cursor), 5, strlen(s->match), 5, strlen(count) };
    if (!rs_command(s, on_scan, s, 6, argv, lens)) {
        s->sweeping = false;
        return;
    }
    s->scan_inflight = true;
}

/* DBSIZE (the whole database: an upper bound, capped by the index) sizes the index once,
 * before the first SCAN's keys arrive: the index then does not grow during the sweep. */
static void on_dbsize(struct redisAsyncContext *ac, void *reply, void *priv)
{
    (void)ac;
    rs_src *s = priv;
    rs_reply_begin(s);
    const redisReply *r = reply;
    if (r && r->type == REDIS_REPLY_INTEGER && r->integer > 0)
        rix_reserve(s->ix, (size_t)r->integer);
    rs_reply_end(s);
}

void rs_sweep_start(rs_src *s)
{
    if (s->sweeping || !rs_ready(s))
        return;
    s->sweeping = true;
    s->resync_wanted = false;
    s->cursor_done = false;
    s->sweep_keys = 0;
    s->sweep_started = rs_now();
    snprintf(s->cursor, sizeof s->cursor, "0");
    rix_sweep_begin(s->ix);
    if (!s->sized) {
        s->sized = true;
        const char *argv[1] = { "DBSIZE" };
        size_t lens[1] = { 6 };
        rs_command(s, on_dbsize, s, 1, argv, lens);   /* no answer: the index grows */
    }
    rs_sweep_continue(s);
}

/* ---- keyspace notifications and chains --------------------------------------------- */

void rs_dirty_add(rs_src *s, const char *key, size_t len)
{
    rs_dirty *d = &s->dirty;
    if (d->overflow)
        return;
    if (d->n >= RS_DIRTY_CAP) {
        d->overflow = true;          /* too many: a full resync is cheaper */
        s->resync_wanted = true;
        return;
    }
    xgrow(&d->keys, &d->cap, d->n + 1, sizeof *d->keys);
    d->keys[d->n++] = xstrndup(key, len);
}

void rs_dirty_free(rs_dirty *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->keys[i]);
    free(d->keys);
    memset(d, 0, sizeof *d);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void rs_dirty_flush(rs_src *s)
{
    rs_dirty *d = &s->dirty;
    if (d->overflow) {
        rs_dirty_free(d);
        return;                      /* resync_wanted is set */
    }
    if (d->n == 0 || !rs_ready(s) || s->batches >= 2)
        return;
    qsort(d->keys, d->n, sizeof *d->keys, cmp_str);
    size_t take = d->n < RS_DIRTY_BATCH ? d->n : RS_DIRTY_BATCH;
    rs_batch *b = rs_batch_new(s, RS_BATCH_DIRTY, take);
    size_t i = 0;
    for (; i < d->n && rs_batch_size(b) < take; i++)
        if (!rs_batch_last_key(b) || strcmp(rs_batch_last_key(b), d->keys[i]) != 0)
            rs_batch_add(b, d->keys[i], strlen(d->keys[i]));
    for (size_t k = 0; k < i; k++)
        free(d->keys[k]);
    memmove(d->keys, d->keys + i, (d->n - i) * sizeof *d->keys);
    d->n -= i;
    s->batches++;
    rs_batch_run(b);
}

void rs_chain_fetch(rs_src *s)
{
    if (!s->chain_id || !s->chain_wanted || s->chain_busy || !rs_ready(s))
        return;
    s->chain_wanted = false;
    char *key = xasprintf("%s:%s", s->prefix, s->chain_id);
    rs_batch *b = rs_batch_new(s, RS_BATCH_CHAIN, 1);
    rs_batch_add(b, key, strlen(key));
    free(key);
    s->chain_busy = true;
    rs_batch_run(b);
}
