/*
 * The Redis source's sweep (redis_sweep.h): the bounded SCAN sweep, keys named by keyspace
 * notifications, and the chain on request. Each turns keys into a fetch batch
 * (redis_fetch.c); this file counts the batches and finishes sweeps.
 */
#include "redis_sweep.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/pace.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"
#include "redis_cost.h"
#include "redis_fetch.h"
#include "redis_keyq.h"

enum {
    /* SCAN runs ahead of the fetches: its keys wait in a queue (redis_keyq.h), a new SCAN
     * is sent while fewer than RS_SCAN_AHEAD steps of keys wait, and the fetches are sent
     * from the queue in batches of RS_FETCH_BATCH keys whenever fewer than
     * RS_FETCH_INFLIGHT wait at the server. A SCAN reply queues behind the fetches sent
     * before it; the fetches never wait for it, so the server is not idle while the
     * client reads the replies before it. */
    RS_SCAN_COUNT_FAST = 1000,      /* SCAN COUNT hint, unbudgeted */
    RS_SCAN_COUNT_PACED = 250,      /* ... budgeted: smaller flights, a smoother pace */
    RS_SCAN_AHEAD = 2,              /* SCAN steps of keys that may wait in the queue */
    RS_FETCH_BATCH = 125,           /* keys a batch (HLEN, HGETALL), sent when there is room for all */
    RS_FETCH_INFLIGHT = 1500,       /* keys at the server (HLEN, HGETALL: ~5 ms of its CPU) */
    RS_FETCH_SEND_MAX = 250,        /* keys (HLENs) formatted in one callback (~0.1-0.3 ms) */
    RS_MAX_TASKS = 2000000,         /* index cap (~35 B a task); beyond it counts are marked ≈ */
    RS_DIRTY_CAP = 8192,            /* notified keys waiting; overflow → full resync */
    RS_DIRTY_BATCH = 500,
    RS_RESYNC_S = 30,               /* with notifications: the least resync period */
    RS_END_SLICE = 16384,           /* tasks a slice of a sweep's end (~0.2-0.5 ms) */
    RS_PARTIAL_TASKS_S = 100000,    /* a partial publish at most every N/this seconds */
};

static const double RS_READ_EVERY_S = 0.1;     /* the server's figures, while sweeping */
static const double RS_PROGRESS_EVERY_S = 0.25;   /* the first sweep's progress, to the model */
static const double RS_PARTIAL_EVERY_S = 1.0;  /* ... and its partial index, published */
static const double RS_PACE_BURST_S = 0.04;    /* wall time the server may spend ahead of
                                                  the budget: 10 ms of CPU at 25 % */

typedef struct rs_budget {          /* sweep_budget: the sweep paced to a share of a core */
    rd_pace pace;                   /* on clock_mono */
    rs_cost *cost;
    rd_event *ev_pace;          /* the next flight, when the budget allows it */
    double credit;                  /* overcharged so far (s), taken off the next charges */
    double read_at;                 /* the last reading of the server's figures */
    unsigned held;                  /* flights held back this sweep */
} rs_budget;

typedef struct rs_progress_st {     /* the first sweep's progress */
    long dbsize;                    /* DBSIZE, -1 unknown */
    double frac;                    /* share of the keyspace SCAN has walked */
    double shown_at, partial_at;    /* clock_mono of the last progress / partial publish */
} rs_progress_st;

typedef struct rs_dirty {           /* keys named by keyspace notifications */
    char **keys;
    size_t n, cap;
    bool overflow;
} rs_dirty;

typedef struct rs_scan {            /* the SCAN walk of the sweep under way */
    char cursor[32];
    bool inflight, done;
    unsigned seen;                  /* keys SCAN returned */
    unsigned keys;                  /* keys handed to batches */
    unsigned fetched;               /* ... whose batch is done */
    rs_keyq *ahead;                 /* seen, not yet handed to a batch */
} rs_scan;

typedef struct rs_times {           /* the clock of sweeps (clock_wall) */
    double started, last, secs;     /* this one began; the last one ended, and took */
} rs_times;

struct rs_sweep {
    rs_fetch_env env;               /* conn, the index, prefix, model, cfg: the batches' */
    rs_sweep_cbs cbs;
    char *prefix, *match;
    bool debug;                     /* RD_REDIS_DEBUG: sweep figures on stderr */
    rd_event *ev_done;          /* sweep_finish, out of the last reply's callback */
    rd_event *ev_progress;      /* progress_show, out of the SCAN reply's read event */

    bool sweeping, swept_once, resync_wanted;
    bool sized;                     /* DBSIZE sent ahead of the first sweep */
    bool ending;                    /* the index's end of the sweep, in slices, under way */
    bool publish_due;               /* sweep_finish's last step (the publish) is next */
    int batches;                    /* sweep and notified-key batches in flight */
    rs_scan scan;
    rs_times times;
    rs_dirty dirty;
    rs_budget budget;
    rs_progress_st prog;
};

static void sweep_continue(rs_sweep *sw);
static unsigned scan_count(const rs_sweep *sw);

/* ---- the budget ------------------------------------------------------------------------ */

/* Server CPU spent (estimated, or a measured correction), less any credit. */
static void charge(rs_sweep *sw, double cost)
{
    rs_budget *bu = &sw->budget;
    double off = bu->credit < cost ? bu->credit : cost;
    bu->credit -= off;
    pace_spent(&bu->pace, clock_mono(), cost - off);
}

static void on_cost(double correction, void *ud)
{
    rs_sweep *sw = ud;
    if (correction >= 0)
        charge(sw, correction);
    else
        sw->budget.credit -= correction;     /* overcharged: the next flights pay less */
}

static void read_cost_if_due(rs_sweep *sw)
{
    double now = clock_mono();
    if (now - sw->budget.read_at < RS_READ_EVERY_S)
        return;
    sw->budget.read_at = now;
    charge(sw, rs_cost_read(sw->budget.cost));
}

/* Whether the next flight may start now; if not, it starts when the budget allows. */
static bool budget_allows(rs_sweep *sw)
{
    rs_budget *bu = &sw->budget;
    double now = clock_mono(), at = pace_next(&bu->pace, now);
    if (at <= now)
        return true;
    if (!loop_timer_pending(bu->ev_pace)) {
        loop_timer_in(bu->ev_pace, at - now);
        bu->held++;
    }
    return false;
}

static void on_pace(int fd, short what, void *arg)
{
    sweep_continue(arg);
}

/* ---- the first sweep's progress ---------------------------------------------------------- */

/* The share of the keyspace a SCAN cursor has walked: its bits reversed are the buckets
 * visited, over 2^64 whatever the table's size. */
static double cursor_frac(const char *cursor)
{
    unsigned long long v = strtoull(cursor, NULL, 10), r = 0;
    for (int i = 0; i < 64; i++, v >>= 1)
        r = (r << 1) | (v & 1);
    return (double)r / 18446744073709551616.0;
}

static void progress_show(rs_sweep *sw, bool force)
{
    rs_progress_st *pr = &sw->prog;
    double now = clock_mono();
    if (sw->swept_once || (!force && now - pr->shown_at < RS_PROGRESS_EVERY_S))
        return;
    pr->shown_at = now;
    double share = sw->budget.pace.started >= 0 ? pace_share_used(&sw->budget.pace, now) : -1;
    long total = pr->dbsize;
    if (pr->frac >= 0.02) {          /* keys so far over the keyspace walked: a sample */
        long sample = (long)((double)sw->scan.seen / pr->frac);
        total = total >= 0 && total < sample ? total : sample;
    }
    if (sw->scan.done)
        total = (long)sw->scan.keys;
    rd_progress p = { .active = true, .done = (long)sw->scan.fetched, .total = total,
                      .share = share };
    model_source_progress(sw->env.model, "redis", &p);
    if (now - pr->partial_at >= rs_partial_every(rix_size(sw->env.ix))) {
        pr->partial_at = now;
        sw->cbs.partial(sw->cbs.ud);     /* tells the model's watchers too */
    } else {
        sw->cbs.progress(sw->cbs.ud);
    }
}

/* The progress (and the partial publish, which walks the whole index read so far) in a loop
 * iteration of its own after the next wait for I/O, never inside a read event: a read event
 * then costs what its replies cost, and a key waits behind one or the other. */
static void progress_later(rs_sweep *sw)
{
    if (!sw->swept_once && !loop_timer_pending(sw->ev_progress))
        loop_timer_in(sw->ev_progress, 0);
}

static void on_progress(int fd, short what, void *arg)
{
    rs_sweep *sw = arg;
    if (sw->sweeping)
        progress_show(sw, false);
}

double rs_partial_every(size_t n)
{
    return fmax(RS_PARTIAL_EVERY_S, (double)n / RS_PARTIAL_TASKS_S);
}

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

/* The next step of the sweep's end after the loop's next wait for I/O (a zero timeout, not
 * event_active, which would run it in the same iteration), so that keys come first. */
static void finish_later(rs_sweep *sw)
{
    loop_timer_in(sw->ev_done, 0);
}

/* One slice of the index's end (rix_sweep_end_step); after the last, the figures. */
static void end_slice(rs_sweep *sw)
{
    rix *ix = sw->env.ix;
    size_t removed;
    if (!rix_sweep_end_step(ix, RS_END_SLICE, &removed)) {
        finish_later(sw);
        return;
    }
    sw->ending = false;
    double now = clock_wall();
    sw->times.secs = now - sw->times.started;
    sw->times.last = now;
    if (sw->debug)
        fprintf(stderr, "redis: sweep %u keys, %zu tasks, %zu removed, %.4f s, "
                "costliest fetch callback %.2f ms CPU (%.2f unpreempted), budget %.2f, "
                "share %.3f, %u flights held back\n", sw->scan.keys, rix_size(ix), removed,
                sw->times.secs, rs_conn_cb_max(sw->env.conn, false) * 1e3,
                rs_conn_cb_max(sw->env.conn, true) * 1e3, sw->budget.pace.share,
                pace_share_used(&sw->budget.pace, clock_mono()), sw->budget.held);
    model_source_progress(sw->env.model, "redis", NULL);
    model_source_ok(sw->env.model, "redis", now);
    sw->publish_due = true;
    finish_later(sw);
}

/* The end of a sweep runs from its own event, not inside the read event of the last reply,
 * in steps with the loop free between them: the index's end in slices of RS_END_SLICE
 * tasks (the walk over the index, the arena's compaction, the slots' rehash), then the
 * publish. A key waits behind one slice or the publish at most. */
static void sweep_finish(rs_sweep *sw)
{
    if (sw->publish_due) {
        sw->publish_due = false;
        sw->swept_once = true;
        sw->cbs.swept(sw->cbs.ud);
        return;
    }
    if (sw->ending) {
        end_slice(sw);
        return;
    }
    if (!sw->sweeping || !sw->scan.done || sw->batches > 0 || sw->scan.inflight ||
        rs_keyq_len(sw->scan.ahead) > 0)
        return;                      /* aborted, or another sweep since */
    sw->sweeping = false;
    sw->ending = true;
    end_slice(sw);
}

static void on_done(int fd, short what, void *arg)
{
    sweep_finish(arg);
}

static void on_sweep_batch(const rs_batch *b, void *ud)
{
    rs_sweep *sw = ud;
    const char *err = rs_batch_error(b);
    sw->batches--;
    sw->scan.fetched += (unsigned)rs_batch_size(b);
    if (err || !sw->sweeping) {
        if (sw->sweeping)
            rs_conn_fail(sw->env.conn, err);
        sw->sweeping = false;
    } else if (sw->scan.done && sw->batches == 0 && !sw->scan.inflight &&
               rs_keyq_len(sw->scan.ahead) == 0) {
        finish_later(sw);            /* not in this read event's loop iteration */
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
    sw->prog.frac = sw->scan.done ? 1 : cursor_frac(sw->scan.cursor);
    const redisReply *keys = r->element[1];
    unsigned n = 0;
    for (size_t i = 0; i < keys->elements; i++) {
        const redisReply *k = keys->element[i];
        size_t idlen;                /* SCAN duplicates are rare and harmless */
        if (k->type == REDIS_REPLY_STRING && rs_task_id(sw->prefix, k->str, k->len, &idlen)) {
            rs_keyq_push(sw->scan.ahead, k->str, k->len);
            n++;
        }
    }
    sw->scan.seen += n;
    charge(sw, rs_cost_send(sw->budget.cost, RS_CMD_HLEN, n));      /* committed: a key's */
    charge(sw, rs_cost_send(sw->budget.cost, RS_CMD_HGETALL, n));   /* HLEN, then HGETALL */
    sweep_continue(sw);
    if (sw->scan.done && sw->batches == 0 && rs_keyq_len(sw->scan.ahead) == 0)
        finish_later(sw);            /* the last step was empty */
    read_cost_if_due(sw);
    progress_later(sw);
out:
    rs_conn_reply_end(conn);
}

static unsigned scan_count(const rs_sweep *sw)
{
    return sw->budget.pace.share > 0 ? RS_SCAN_COUNT_PACED : RS_SCAN_COUNT_FAST;
}

/* Fetches from the keys read ahead while a batch more fits RS_FETCH_INFLIGHT at the
 * server (at most RS_FETCH_SEND_MAX from one callback). */
static void fetch_ahead(rs_sweep *sw)
{
    unsigned sent = 0;
    while (sw->sweeping && sw->scan.keys - sw->scan.fetched + RS_FETCH_BATCH <= RS_FETCH_INFLIGHT &&
           sent < RS_FETCH_SEND_MAX && rs_keyq_len(sw->scan.ahead) > 0) {
        size_t n = rs_keyq_len(sw->scan.ahead), len;
        n = n < RS_FETCH_BATCH ? n : RS_FETCH_BATCH;
        rs_batch *b = rs_batch_new(&sw->env, RS_BATCH_SWEEP, n, on_sweep_batch, sw);
        for (size_t i = 0; i < n; i++) {
            const char *key = rs_keyq_pop(sw->scan.ahead, &len);
            rs_batch_add(b, key, len);
        }
        sw->scan.keys += (unsigned)n;
        sent += (unsigned)n;
        sw->batches++;
        rs_batch_run(b);
    }
}

static void sweep_continue(rs_sweep *sw)
{
    fetch_ahead(sw);
    if (!sw->sweeping || sw->scan.inflight || sw->scan.done ||
        rs_keyq_len(sw->scan.ahead) >= RS_SCAN_AHEAD * scan_count(sw) || !budget_allows(sw))
        return;
    char count[16];
    snprintf(count, sizeof count, "%u", scan_count(sw));
    const char *cur = sw->scan.cursor;
    const char *argv[6] = { "SCAN", cur, "MATCH", sw->match, "COUNT", count };
    size_t lens[6] = { 4, strlen(cur), 5, strlen(sw->match), 5, strlen(count) };
    if (!rs_conn_command(sw->env.conn, on_scan, sw, 6, argv, lens)) {
        sw->sweeping = false;
        return;
    }
    sw->scan.inflight = true;
    charge(sw, rs_cost_send(sw->budget.cost, RS_CMD_SCAN, 1));
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
    if (r && r->type == REDIS_REPLY_INTEGER)
        sw->prog.dbsize = (long)r->integer;
    rs_conn_reply_end(sw->env.conn);
}

void rs_sweep_start(rs_sweep *sw)
{
    if (sw->sweeping || sw->ending || !rs_conn_ready(sw->env.conn))
        return;
    sw->sweeping = true;
    sw->resync_wanted = false;
    sw->scan.done = false;
    sw->scan.seen = sw->scan.keys = sw->scan.fetched = 0;
    rs_keyq_clear(sw->scan.ahead);
    sw->times.started = clock_wall();
    snprintf(sw->scan.cursor, sizeof sw->scan.cursor, "0");
    double share = sw->env.cfg->alakai.sweep_budget;
    pace_init(&sw->budget.pace, share, share * RS_PACE_BURST_S);
    sw->budget.held = 0;
    sw->budget.credit = 0;
    sw->budget.read_at = clock_mono();
    charge(sw, rs_cost_read(sw->budget.cost));     /* the baseline */
    sw->prog.frac = 0;
    sw->prog.shown_at = clock_mono();   /* the first progress after RS_PROGRESS_EVERY_S, */
    sw->prog.partial_at = sw->prog.shown_at - RS_PARTIAL_EVERY_S;   /* published with it */
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
    if (sw->ending)
        return;                      /* notified keys wait for the end's last slice */
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
    sw->ev_done = loop_timer_new(ctx->base, on_done, sw);
    sw->ev_progress = loop_timer_new(ctx->base, on_progress, sw);
    sw->budget.cost = rs_cost_new(conn, on_cost, sw);
    sw->budget.ev_pace = loop_timer_new(ctx->base, on_pace, sw);
    pace_init(&sw->budget.pace, 0, 0);
    sw->prog.dbsize = -1;
    sw->scan.ahead = rs_keyq_new();
    return sw;
}

void rs_sweep_free(rs_sweep *sw)
{
    loop_event_free(sw->ev_done);
    loop_event_free(sw->ev_progress);
    loop_event_free(sw->budget.ev_pace);
    rs_cost_free(sw->budget.cost);
    rix_free(sw->env.ix);
    rs_keyq_free(sw->scan.ahead);
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
    if (sw->ending)                  /* the index complete; the figures and publish dropped */
        rix_sweep_end(sw->env.ix);
    sw->ending = false;
    sw->sweeping = sw->scan.inflight = false;
    rs_keyq_clear(sw->scan.ahead);
    loop_timer_stop(sw->budget.ev_pace);
    loop_timer_stop(sw->ev_progress);
    rs_cost_forget(sw->budget.cost);
}

unsigned rs_sweep_held(const rs_sweep *sw) { return sw->budget.held; }
