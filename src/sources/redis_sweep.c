/*
 * The Redis source's sweep (redis_sweep.h): the bounded SCAN sweep, keys named by keyspace
 * notifications, and the chain on request. Each turns keys into a fetch batch
 * (redis_fetch.c); this file counts the batches and finishes sweeps.
 */
#include "redis_sweep.h"

#include <event2/event.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "redis_fetch.h"

enum {
    RS_SCAN_COUNT = 250,            /* SCAN COUNT hint per call: ~250 HGETALLs sent at once */
    RS_SWEEP_INFLIGHT = 8,          /* SCAN steps being fetched at once: ≤ ~2000 HGETALLs */
    RS_MAX_TASKS = 2000000,         /* index cap (~35 B a task); beyond it counts are marked ≈ */
    RS_DIRTY_CAP = 8192,            /* notified keys waiting; overflow → full resync */
    RS_DIRTY_BATCH = 500,
    RS_RESYNC_S = 30,               /* with notifications: the least resync period */
};

typedef struct rs_dirty {           /* keys named by keyspace notifications */
    char **keys;
    size_t n, cap;
    bool overflow;
} rs_dirty;

typedef struct rs_scan {            /* the SCAN walk of the sweep under way */
    char cursor[32];
    bool inflight, done;
    unsigned keys;                  /* keys handed to batches */
} rs_scan;

typedef struct rs_times {           /* the clock of sweeps (clock_wall) */
    double started, last, secs;     /* this one began; the last one ended, and took */
} rs_times;

struct rs_sweep {
    rs_fetch_env env;               /* conn, the index, prefix, model, cfg: the batches' */
    rs_sweep_cbs cbs;
    char *prefix, *match;
    bool debug;                     /* RD_REDIS_DEBUG: sweep figures on stderr */
    struct event *ev_done;          /* sweep_finish, out of the last reply's callback */

    bool sweeping, swept_once, resync_wanted;
    bool sized;                     /* DBSIZE sent ahead of the first sweep */
    bool publish_due;               /* sweep_finish's second step (the publish) is next */
    int batches;                    /* sweep and notified-key batches in flight */
    rs_scan scan;
    rs_times times;
    rs_dirty dirty;
};

static void sweep_continue(rs_sweep *sw);

/* Glob-escaped for SCAN MATCH / PSUBSCRIBE. */
char *rs_key_pattern(const char *prefix)
{
    char *esc = xmalloc(strlen(prefix) * 2 + 1), *o = esc;
    for (const char *p = prefix; *p; p++) {
        if (strchr("*?[]\\", *p))
            *o++ = '\\';
        *o++ = *p;
    }
    *o = '\0';
    char *pattern = xasprintf("%s:*", esc);
    free(esc);
    return pattern;
}

/* ---- finishing ------------------------------------------------------------------------ */

/* The end of a sweep runs from its own zero-delay event, not inside the read event of the
 * last reply, in two steps of one walk of the whole index each, so that a key waits behind
 * one walk at most: rix_sweep_end, then (the event again) the publish. */
static void sweep_finish(rs_sweep *sw)
{
    if (sw->publish_due) {
        sw->publish_due = false;
        sw->swept_once = true;
        sw->cbs.swept(sw->cbs.ud);
        return;
    }
    if (!sw->sweeping || !sw->scan.done || sw->batches > 0 || sw->scan.inflight)
        return;                      /* aborted, or another sweep since */
    sw->sweeping = false;
    rix *ix = sw->env.ix;
    size_t removed = rix_sweep_end(ix);
    double now = clock_wall();
    sw->times.secs = now - sw->times.started;
    sw->times.last = now;
    if (sw->debug)
        fprintf(stderr, "redis: sweep %u keys, %zu tasks, %zu removed, %.3f s, "
                "costliest fetch callback %.2f ms CPU\n", sw->scan.keys, rix_size(ix), removed,
                sw->times.secs, rs_conn_cb_max(sw->env.conn) * 1e3);
    model_source_ok(sw->env.model, "redis", now);
    sw->publish_due = true;
    event_active(sw->ev_done, EV_TIMEOUT, 0);
}

static void on_done(evutil_socket_t fd, short what, void *arg)
{
    sweep_finish(arg);
}

static void on_sweep_batch(const rs_batch *b, void *ud)
{
    rs_sweep *sw = ud;
    const char *err = rs_batch_error(b);
    sw->batches--;
    if (err || !sw->sweeping) {
        if (sw->sweeping)
            rs_conn_fail(sw->env.conn, err);
        sw->sweeping = false;
    } else if (sw->scan.done && sw->batches == 0 && !sw->scan.inflight) {
        event_active(sw->ev_done, EV_TIMEOUT, 0);
    } else {
        sweep_continue(sw);
    }
}

/* ---- SCAN ------------------------------------------------------------------------- */

static void on_scan(struct redisAsyncContext *ac, void *reply, void *priv)
{
    rs_sweep *sw = priv;
    rs_conn *conn = sw->env.conn;
    rs_conn_reply_begin(conn);
    const redisReply *r = reply;
    sw->scan.inflight = false;
    if (!sw->sweeping)
        goto out;
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_STRING ||
        r->element[1]->type != REDIS_REPLY_ARRAY) {
        sw->sweeping = false;
        char msg[200] = "SCAN failed";
        if (r && r->type == REDIS_REPLY_ERROR)
            rs_conn_error_text(conn, "SCAN", r->str, msg, sizeof msg);
        rs_conn_fail(conn, msg);
        goto out;
    }
    snprintf(sw->scan.cursor, sizeof sw->scan.cursor, "%s", r->element[0]->str);
    sw->scan.done = strcmp(sw->scan.cursor, "0") == 0;
    const redisReply *keys = r->element[1];
    rs_batch *b = rs_batch_new(&sw->env, RS_BATCH_SWEEP, keys->elements, on_sweep_batch, sw);
    for (size_t i = 0; i < keys->elements; i++) {
        const redisReply *k = keys->element[i];
        size_t idlen;                /* SCAN duplicates are rare and harmless */
        if (k->type == REDIS_REPLY_STRING && rs_task_id(sw->prefix, k->str, k->len, &idlen))
            rs_batch_add(b, k->str, k->len);
    }
    sw->scan.keys += (unsigned)rs_batch_size(b);
    sw->batches++;
    sweep_continue(sw);              /* overlap the next SCAN with this batch */
    rs_batch_run(b);
out:
    rs_conn_reply_end(conn);
}

static void sweep_continue(rs_sweep *sw)
{
    if (!sw->sweeping || sw->scan.inflight || sw->scan.done || sw->batches >= RS_SWEEP_INFLIGHT)
        return;
    char count[16];
    snprintf(count, sizeof count, "%d", RS_SCAN_COUNT);
    const char *cur = sw->scan.cursor;
    const char *argv[6] = { "SCAN", cur, "MATCH", sw->match, "COUNT", count };
    size_t lens[6] = { 4, strlen(cur), 5, strlen(sw->match), 5, strlen(count) };
    if (!rs_conn_command(sw->env.conn, on_scan, sw, 6, argv, lens)) {
        sw->sweeping = false;
        return;
    }
    sw->scan.inflight = true;
}

/* DBSIZE (the whole database: an upper bound, capped by the index) sizes the index once,
 * before the first SCAN's keys arrive: the index then does not grow during the sweep. */
static void on_dbsize(struct redisAsyncContext *ac, void *reply, void *priv)
{
    (void)ac;
    rs_sweep *sw = priv;
    rs_conn_reply_begin(sw->env.conn);
    const redisReply *r = reply;
    if (r && r->type == REDIS_REPLY_INTEGER && r->integer > 0)
        rix_reserve(sw->env.ix, (size_t)r->integer);
    rs_conn_reply_end(sw->env.conn);
}

void rs_sweep_start(rs_sweep *sw)
{
    if (sw->sweeping || !rs_conn_ready(sw->env.conn))
        return;
    sw->sweeping = true;
    sw->resync_wanted = false;
    sw->scan.done = false;
    sw->scan.keys = 0;
    sw->times.started = clock_wall();
    snprintf(sw->scan.cursor, sizeof sw->scan.cursor, "0");
    rix_sweep_begin(sw->env.ix);
    if (!sw->sized) {
        sw->sized = true;
        const char *argv[1] = { "DBSIZE" };
        size_t lens[1] = { 6 };
        rs_conn_command(sw->env.conn, on_dbsize, sw, 1, argv, lens);  /* no answer: grows */
    }
    sweep_continue(sw);
}

static bool resync_due(const rs_sweep *sw, bool notified, double now)
{
    if (!sw->swept_once || sw->resync_wanted)
        return true;
    /* with notifications the resync is a safety net: keep it under ~0.3 % duty */
    double every = notified ? fmax(RS_RESYNC_S, 300 * sw->times.secs)
                            : fmax(sw->env.cfg->poll_s, 10 * sw->times.secs);
    return now - sw->times.last >= every;
}

/* ---- keyspace notifications and chains --------------------------------------------- */

void rs_sweep_notified(rs_sweep *sw, const char *key, size_t len)
{
    rs_dirty *d = &sw->dirty;
    if (d->overflow)
        return;
    if (d->n >= RS_DIRTY_CAP) {
        d->overflow = true;          /* too many: a full resync is cheaper */
        sw->resync_wanted = true;
        return;
    }
    xgrow(&d->keys, &d->cap, d->n + 1, sizeof *d->keys);
    d->keys[d->n++] = xstrndup(key, len);
}

static void dirty_free(rs_dirty *d)
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

static void on_dirty_batch(const rs_batch *b, void *ud)
{
    rs_sweep *sw = ud;
    const char *err = rs_batch_error(b);
    sw->batches--;
    if (err)
        rs_conn_fail(sw->env.conn, err);
    else
        sw->cbs.changed(sw->cbs.ud);
}

static void dirty_flush(rs_sweep *sw)
{
    rs_dirty *d = &sw->dirty;
    if (d->overflow) {
        dirty_free(d);
        return;                      /* resync_wanted is set */
    }
    if (d->n == 0 || !rs_conn_ready(sw->env.conn) || sw->batches >= 2)
        return;
    qsort(d->keys, d->n, sizeof *d->keys, cmp_str);
    size_t take = d->n < RS_DIRTY_BATCH ? d->n : RS_DIRTY_BATCH;
    rs_batch *b = rs_batch_new(&sw->env, RS_BATCH_DIRTY, take, on_dirty_batch, sw);
    size_t i = 0;
    for (; i < d->n && rs_batch_size(b) < take; i++)
        if (!rs_batch_last_key(b) || strcmp(rs_batch_last_key(b), d->keys[i]) != 0)
            rs_batch_add(b, d->keys[i], strlen(d->keys[i]));
    for (size_t k = 0; k < i; k++)
        free(d->keys[k]);
    memmove(d->keys, d->keys + i, (d->n - i) * sizeof *d->keys);
    d->n -= i;
    sw->batches++;
    rs_batch_run(b);
}

void rs_sweep_step(rs_sweep *sw, bool notified)
{
    if (!sw->sweeping && resync_due(sw, notified, clock_wall()))
        rs_sweep_start(sw);
    else if (!sw->sweeping)
        dirty_flush(sw);
}

static void on_chain_batch(const rs_batch *b, void *ud)
{
    (void)b;
    rs_sweep *sw = ud;
    sw->cbs.chain_done(sw->cbs.ud);
}

void rs_sweep_chain(rs_sweep *sw, const char *id)
{
    char *key = xasprintf("%s:%s", sw->prefix, id);
    rs_batch *b = rs_batch_new(&sw->env, RS_BATCH_CHAIN, 1, on_chain_batch, sw);
    rs_batch_add(b, key, strlen(key));
    free(key);
    rs_batch_run(b);
}

/* ---- life ------------------------------------------------------------------------------ */

rs_sweep *rs_sweep_new(const rd_source_ctx *ctx, rs_conn *conn, const char *prefix,
                       const rs_sweep_cbs *cbs)
{
    rs_sweep *sw = xcalloc(1, sizeof *sw);
    sw->prefix = xstrdup(prefix);
    sw->match = rs_key_pattern(prefix);
    sw->env = (rs_fetch_env){ .conn = conn, .ix = rix_new(RS_MAX_TASKS), .prefix = sw->prefix,
                              .model = ctx->model, .cfg = ctx->cfg };
    sw->cbs = *cbs;
    sw->debug = getenv("RD_REDIS_DEBUG") != NULL;
    sw->ev_done = evtimer_new(ctx->base, on_done, sw);
    return sw;
}

void rs_sweep_free(rs_sweep *sw)
{
    event_free(sw->ev_done);
    rix_free(sw->env.ix);
    dirty_free(&sw->dirty);
    free(sw->prefix);
    free(sw->match);
    free(sw);
}

const rix *rs_sweep_index(const rs_sweep *sw) { return sw->env.ix; }
bool rs_sweep_done_once(const rs_sweep *sw) { return sw->swept_once; }
void rs_sweep_resync(rs_sweep *sw) { sw->resync_wanted = true; }

void rs_sweep_stop(rs_sweep *sw)
{
    sw->sweeping = sw->scan.inflight = false;
}
