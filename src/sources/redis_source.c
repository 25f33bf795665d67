/*
 * The Redis store source (Alakai): one hash per task at {prefix}:{taskId}, one JSON
 * record per attempt field. hiredis 0.14 async on the libevent loop.
 *
 * hiredis 0.14 has no timeouts and resolves names synchronously, so this file keeps
 * its own deadlines (connect + TLS + AUTH 3 s; 5 s without any reply while commands are
 * pending → redisAsyncFree, stale, reconnect with backoff 1 s → 30 s), resolves host
 * names with io/resolve.h (evdns) before connecting, and never frees a context from
 * inside one of its callbacks (a teardown requested there is deferred to the loop).
 * Credentials and TLS (redis_secure.c) come first: secret references are resolved before
 * the first connect, AUTH is the first command of each connection, and a rediss:// store
 * is reached through a TLS bridge's unix socket.
 *
 * Freshness: a full SCAN sweep on connect; keyspace notifications (when the server has
 * K plus hash events enabled) refetch changed keys; a full resync anyway, every
 * max(30 s, 300 × last sweep time) (a safety net: notifications are fire-and-forget; a
 * dropped subscription or reconnect resyncs at once). Without notifications the sweep
 * repeats every max(poll, 10 × last sweep time), so sweeping stays below ~10 % duty.
 */
#include "redis_priv.h"

#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fingerprint.h"
#include "../core/retry.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/resolve.h"
#include "../io/secret.h"

enum { RS_REPLY_TIMEOUT = 5, RS_RESYNC_S = 30 };
static const char SRC_NAME[] = "redis";

/* The redis_* files' wall clock (model timestamps, ages). */
double rs_now(void)
{
    return clock_wall();
}

static void sub_start(rs_src *s);

static const char *where(const rs_src *s, char *buf, size_t cap)
{
    if (s->url.path[0])
        snprintf(buf, cap, "%s", s->url.path);
    else if (s->url.host[0])
        snprintf(buf, cap, "%s:%d", s->url.name[0] ? s->url.name : s->url.host, s->url.port);
    else
        snprintf(buf, cap, "store");
    return buf;
}

/* ---- state -------------------------------------------------------------------------- */

/* Requests that cannot be served while disconnected are answered with the error,
 * so a one-shot reader (snapshot) does not wait for them. */
static void answer_pending(rs_src *s, const char *msg)
{
    if (s->chain_wanted && !s->chain_busy) {
        rd_execution *e = xcalloc(1, sizeof *e);
        e->id = xstrdup(s->chain_id);
        e->status = xstrdup("unknown");
        e->error = xstrdup(msg);
        e->attempt = e->max_attempts = -1;
        model_set_chain(s->base.ctx.model, s->chain_id, e, 1);
        s->chain_wanted = false;
    }
    if (s->dlq_wanted && !s->swept_once)
        s->dlq_sent = true;          /* nothing to show: the source state says why */
}

void rs_fail(rs_src *s, const char *why)
{
    if (s->freeing)
        return;
    char w[300], msg[256];
    snprintf(msg, sizeof msg, "redis %.80s: %.160s", where(s, w, sizeof w), why ? why : "error");
    model_source_fail(s->base.ctx.model, SRC_NAME, msg, rs_now());
    s->settled = true;
    if (s->state != RC_READY)
        answer_pending(s, msg);
    if (s->base.ctx.on_change)
        s->base.ctx.on_change(s->base.ctx.ud);
}

bool rs_ready(const rs_src *s)
{
    return s->ac && s->state == RC_READY &&
           !(s->ac->c.flags & (REDIS_DISCONNECTING | REDIS_FREEING));
}

static void watch_arm(rs_src *s)
{
    if (!evtimer_pending(s->ev_watch, NULL)) {
        struct timeval tv = clock_tv(0.5);
        evtimer_add(s->ev_watch, &tv);
    }
}

bool rs_command(rs_src *s, void (*cb)(struct redisAsyncContext *, void *, void *),
                void *priv, int argc, const char **argv, const size_t *argvlen)
{
    if (!rs_ready(s) || s->drop_pending)
        return false;
    if (redisAsyncCommandArgv(s->ac, cb, priv, argc, argv, argvlen) != REDIS_OK)
        return false;
    if (s->pending++ == 0)
        s->progress_at = clock_mono();
    watch_arm(s);
    return true;
}

void rs_reply_begin(rs_src *s)
{
    s->in_cb++;
    if (s->pending > 0)
        s->pending--;
    s->progress_at = clock_mono();
}

void rs_reply_end(rs_src *s)
{
    if (--s->in_cb == 0 && s->drop_pending)
        event_active(s->ev_kick, EV_TIMEOUT, 0);
}

void rs_kick(rs_src *s)
{
    if (!evtimer_pending(s->ev_kick, NULL)) {
        struct timeval tv = clock_tv(0.05);
        evtimer_add(s->ev_kick, &tv);
    }
}

static void schedule_retry(rs_src *s)
{
    if (s->freeing || s->setup_error || evtimer_pending(s->ev_retry, NULL))
        return;
    struct timeval tv = clock_tv(s->backoff);
    evtimer_add(s->ev_retry, &tv);
    s->backoff = fmin(s->backoff * 2, 30);
}

static void do_drop(rs_src *s, const char *why)
{
    redisAsyncContext *ac = s->ac;
    s->ac = NULL;                    /* callbacks fired by the free see "gone" */
    s->state = RC_NONE;
    s->pending = 0;
    s->sweeping = s->scan_inflight = false;
    if (ac)
        redisAsyncFree(ac);
    s->batches = 0;
    rs_fail(s, why);
    schedule_retry(s);
}

void rs_drop(rs_src *s, const char *why)
{
    if (s->in_cb > 0) {              /* never free a context inside its own callback */
        s->drop_pending = true;
        snprintf(s->drop_why, sizeof s->drop_why, "%s", why);
        event_active(s->ev_kick, EV_TIMEOUT, 0);
        return;
    }
    do_drop(s, why);
}

/* ---- connection callbacks ------------------------------------------------------------ */

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    rs_src *s = ac->data;
    if (s->ac != ac)                 /* we freed it ourselves */
        return;
    s->ac = NULL;
    s->state = RC_NONE;
    s->pending = 0;
    s->sweeping = s->scan_inflight = false;
    s->batches = 0;
    rs_fail(s, rs_conn_error(s, status == REDIS_OK ? "connection closed" : ac->errstr));
    schedule_retry(s);
}

static void on_config(redisAsyncContext *ac, void *reply, void *priv)
{
    rs_src *s = priv;
    rs_reply_begin(s);
    const redisReply *r = reply;
    s->notify_on = false;
    if (r)
        s->backoff = 1;              /* the server answered: connecting works */
    if (r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOAUTH", 6) == 0) {
        char msg[200];
        rs_error_text(s, "CONFIG", r->str, msg, sizeof msg);
        rs_drop(s, msg);
    }
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->type == REDIS_REPLY_STRING) {
        const char *flags = r->element[1]->str;
        s->notify_on = strchr(flags, 'K') && (strchr(flags, 'h') || strchr(flags, 'A'));
        model_source_fact(s->base.ctx.model, SRC_NAME, RD_FACT_KEYSPACE, s->notify_on);
    }
    if (s->notify_on && s->sub_state == RC_NONE && !evtimer_pending(s->ev_sub_retry, NULL))
        sub_start(s);
    rs_reply_end(s);
}

static void on_select(redisAsyncContext *ac, void *reply, void *priv)
{
    rs_src *s = priv;
    rs_reply_begin(s);
    const redisReply *r = reply;
    if (r && r->type == REDIS_REPLY_ERROR) {
        char msg[200], cmd[24];
        snprintf(cmd, sizeof cmd, "SELECT %d", s->url.db);
        rs_error_text(s, cmd, r->str, msg, sizeof msg);
        rs_drop(s, msg);
    }
    rs_reply_end(s);
}

/* INFO server's redis_version, for `redrive check` (an ACL user may not run INFO). */
static void on_info(redisAsyncContext *ac, void *reply, void *priv)
{
    (void)ac;
    rs_src *s = priv;
    rs_reply_begin(s);
    const redisReply *r = reply;
    const char *v = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, "redis_version:") : NULL;
    char ver[48] = "";
    if (v) {
        v += strlen("redis_version:");
        snprintf(ver, sizeof ver, "%.*s", (int)strcspn(v, "\r\n"), v);
    }
    if (r)
        model_source_version(s->base.ctx.model, SRC_NAME, ver[0] ? ver : NULL);
    rs_reply_end(s);
}

/* Connected (and authenticated): the first commands. Inside a callback bracket. */
static void conn_ready(rs_src *s)
{
    s->state = RC_READY;
    char db[16];
    snprintf(db, sizeof db, "%d", s->url.db);
    const char *sel[2] = { "SELECT", db };
    if (s->url.db != 0)
        rs_command(s, on_select, s, 2, sel, NULL);
    const char *cfg[3] = { "CONFIG", "GET", "notify-keyspace-events" };
    rs_command(s, on_config, s, 3, cfg, NULL);
    const char *info[2] = { "INFO", "server" };
    rs_command(s, on_info, s, 2, info, NULL);
    rs_sweep_start(s);
    rs_chain_fetch(s);
}

static void on_auth(redisAsyncContext *ac, void *reply, void *priv)
{
    rs_src *s = priv;
    rs_reply_begin(s);
    const redisReply *r = reply;
    if (!r || s->ac != ac) {
        /* freed or disconnected: on_disconnect says why */
    } else if (r->type == REDIS_REPLY_ERROR) {
        char msg[200];
        rs_error_text(s, "AUTH", r->str, msg, sizeof msg);
        s->auth_failed = true;       /* resolve the secrets again before retrying */
        rs_drop(s, msg);
    } else {
        s->backoff = 1;
        conn_ready(s);
    }
    rs_reply_end(s);
}

static void on_connect(const redisAsyncContext *cac, int status)
{
    rs_src *s = cac->data;
    if (s->ac != cac)
        return;
    if (status != REDIS_OK) {        /* hiredis frees the context after this */
        char msg[300];
        snprintf(msg, sizeof msg, "connect: %.150s", cac->errstr);
        s->ac = NULL;
        s->state = RC_NONE;
        s->pending = 0;
        rs_fail(s, rs_conn_error(s, msg));
        schedule_retry(s);
        return;
    }
    s->in_cb++;
    if (rs_auth_send(s, s->ac, on_auth)) {   /* AUTH before anything else */
        s->state = RC_AUTH;
        s->pending++;
        s->progress_at = clock_mono();
    } else {
        conn_ready(s);
    }
    rs_reply_end(s);
}

static bool attach(rs_src *s, redisAsyncContext *ac, char *err, size_t cap)
{
    if (!ac || ac->err) {
        snprintf(err, cap, "connect: %s", ac ? ac->errstr : "out of memory");
        if (ac)
            redisAsyncFree(ac);
        return false;
    }
    ac->data = s;
    if (redisLibeventAttach(ac, s->evb) != REDIS_OK) {
        snprintf(err, cap, "cannot attach to the event loop");
        redisAsyncFree(ac);
        return false;
    }
    return true;
}

static redisAsyncContext *open_ctx(rs_src *s)
{
    rs_bridge_clear_error(s);
    if (s->url.tls)
        return redisAsyncConnectUnix(rs_bridge_path(s));
    if (s->url.path[0])
        return redisAsyncConnectUnix(s->url.path);
    return redisAsyncConnect(s->url.needs_dns ? s->ip : s->url.host, s->url.port);
}

static void conn_open(rs_src *s)
{
    char err[300];
    if (s->url.tls && !rs_bridge_ready(s, err, sizeof err)) {
        rs_secret_failed(s, err, true);
        return;
    }
    redisAsyncContext *ac = open_ctx(s);
    if (!attach(s, ac, err, sizeof err)) {
        rs_fail(s, err);
        schedule_retry(s);
        return;
    }
    s->ac = ac;
    s->state = RC_CONNECTING;
    s->pending = 0;
    s->drop_pending = false;
    s->progress_at = clock_mono();
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    watch_arm(s);
}

/* ---- name resolution (io/resolve.h: never a blocking getaddrinfo on the loop) --------- */

static void on_resolved(const char *ip, const char *why, void *ud)
{
    rs_src *s = ud;
    s->dns_req = NULL;               /* answered: the handle is gone */
    s->state = RC_NONE;
    if (!ip) {
        rs_fail(s, why);
        schedule_retry(s);
        return;
    }
    snprintf(s->ip, sizeof s->ip, "%s", ip);
    conn_open(s);
}

void rs_secret_failed(rs_src *s, const char *why, bool setup)
{
    s->state = RC_NONE;
    s->setup_error = setup;
    rs_fail(s, why);
    schedule_retry(s);
}

void rs_conn_start(rs_src *s)
{
    if (s->freeing || s->ac || s->state != RC_NONE)
        return;
    if (s->unusable) {
        model_source_fail(s->base.ctx.model, SRC_NAME, s->unusable_why, rs_now());
        s->settled = true;
        answer_pending(s, s->unusable_why);
        return;
    }
    if (!rs_secure_ready(s))
        return;                      /* rs_conn_start again once resolved */
    if (!s->url.needs_dns) {
        conn_open(s);
        return;
    }
    if (!s->dns)
        s->dns = resolve_new(s->evb);
    s->state = RC_RESOLVING;
    s->progress_at = clock_mono();
    watch_arm(s);
    s->dns_req = resolve_start(s->dns, s->url.host, on_resolved, s);
}

/* ---- keyspace notifications (second connection, subscribed) -------------------------- */

static void sub_drop(rs_src *s, bool retry);

void rs_sub_close(rs_src *s)
{
    sub_drop(s, false);
}

static void sub_drop(rs_src *s, bool retry)
{
    redisAsyncContext *sub = s->sub;
    s->sub = NULL;
    s->sub_state = RC_NONE;
    if (sub)
        redisAsyncFree(sub);
    s->resync_wanted = true;         /* events were lost meanwhile */
    if (retry && !s->freeing && !evtimer_pending(s->ev_sub_retry, NULL)) {
        struct timeval tv = clock_tv(s->sub_backoff);
        evtimer_add(s->ev_sub_retry, &tv);
        s->sub_backoff = fmin(s->sub_backoff * 2, 30);
    }
}

static void on_pmessage(redisAsyncContext *ac, void *reply, void *priv)
{
    rs_src *s = priv;
    const redisReply *r = reply;
    if (!r || s->sub != ac || r->type != REDIS_REPLY_ARRAY || r->elements < 3)
        return;
    const redisReply *kind = r->element[0];
    if (kind->type != REDIS_REPLY_STRING)
        return;
    if (strcmp(kind->str, "psubscribe") == 0) {
        s->sub_state = RC_READY;
        s->sub_backoff = 1;
        if (s->sub_ever)             /* changes while unsubscribed were missed */
            s->resync_wanted = true;
        s->sub_ever = true;
        rs_kick(s);
        return;
    }
    if (strcmp(kind->str, "pmessage") != 0 || r->elements < 4 ||
        r->element[2]->type != REDIS_REPLY_STRING)
        return;
    const char *ch = r->element[2]->str, *key = strstr(ch, "__:");
    if (!key)
        return;
    key += 3;
    rs_dirty_add(s, key, r->element[2]->len - (size_t)(key - ch));
    rs_kick(s);
}

static void on_sub_disconnect(const redisAsyncContext *ac, int status)
{
    rs_src *s = ac->data;
    if (s->sub != ac)
        return;
    s->sub = NULL;                   /* hiredis frees it */
    sub_drop(s, true);
}

/* Keyspace events of our prefix in our database (known once the URL is). */
static bool sub_subscribe(rs_src *s, redisAsyncContext *ac)
{
    char *channel = xasprintf("__keyspace@%d__:%s", s->url.db, s->match);
    bool ok = redisAsyncCommand(ac, on_pmessage, s, "PSUBSCRIBE %s", channel) == REDIS_OK;
    free(channel);
    return ok;
}

/* An AUTH refused here leaves the subscription unconfirmed: the watchdog drops it and
 * it is retried with backoff (the main connection reports the error). */
static void on_sub_auth(redisAsyncContext *ac, void *reply, void *priv)
{
    rs_src *s = priv;
    const redisReply *r = reply;
    if (!r || s->sub != ac || r->type == REDIS_REPLY_ERROR)
        return;
    sub_subscribe(s, ac);
}

static void on_sub_connect(const redisAsyncContext *cac, int status)
{
    rs_src *s = cac->data;
    if (s->sub != cac)
        return;
    if (status != REDIS_OK) {
        s->sub = NULL;
        sub_drop(s, true);
        return;
    }
    redisAsyncContext *ac = s->sub;
    if (rs_auth_send(s, ac, on_sub_auth))
        return;                      /* PSUBSCRIBE once authenticated */
    if (!sub_subscribe(s, ac))
        s->sub_state = RC_NONE;      /* the watchdog drops it */
}

static void sub_start(rs_src *s)
{
    if (s->freeing || s->sub || !s->notify_on || (s->url.needs_dns && !s->ip[0]) ||
        (s->url.tls && !s->tls))
        return;
    char err[200];
    redisAsyncContext *ac = open_ctx(s);
    if (!attach(s, ac, err, sizeof err)) {
        sub_drop(s, true);
        return;
    }
    s->sub = ac;
    s->sub_state = RC_CONNECTING;
    s->sub_started = clock_mono();
    redisAsyncSetConnectCallback(ac, on_sub_connect);
    redisAsyncSetDisconnectCallback(ac, on_sub_disconnect);
    watch_arm(s);
}

/* ---- timers ---------------------------------------------------------------------------- */

static void on_watch(evutil_socket_t fd, short what, void *arg)
{
    rs_src *s = arg;
    double now = clock_mono();
    char msg[120];
    bool connecting = s->state == RC_CONNECTING || s->state == RC_RESOLVING ||
                      s->state == RC_AUTH;
    if (connecting && now - s->progress_at > RS_CONNECT_TIMEOUT) {
        if (s->state == RC_RESOLVING) {
            resolve_cancel(s->dns_req);
            s->dns_req = NULL;
            s->state = RC_NONE;
            rs_fail(s, "name resolution timed out");
            schedule_retry(s);
        } else {
            snprintf(msg, sizeof msg, "%s timed out after %d s",
                     s->state == RC_AUTH ? "AUTH" : "connect", RS_CONNECT_TIMEOUT);
            do_drop(s, rs_conn_error(s, msg));
        }
    } else if (s->state == RC_READY && s->pending > 0 &&
               now - s->progress_at > RS_REPLY_TIMEOUT) {
        snprintf(msg, sizeof msg, "no reply within %d s", RS_REPLY_TIMEOUT);
        do_drop(s, rs_conn_error(s, msg));
    }
    if (s->sub && s->sub_state != RC_READY && now - s->sub_started > RS_CONNECT_TIMEOUT)
        sub_drop(s, true);
    bool busy = connecting || (s->state == RC_READY && s->pending > 0) ||
                (s->sub && s->sub_state != RC_READY);
    if (busy)
        watch_arm(s);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    rs_conn_start(arg);
}

static void on_sub_retry(evutil_socket_t fd, short what, void *arg)
{
    sub_start(arg);
}

static void on_ping(redisAsyncContext *ac, void *reply, void *priv)
{
    rs_src *s = priv;
    rs_reply_begin(s);
    if (reply && ((const redisReply *)reply)->type != REDIS_REPLY_ERROR && s->swept_once)
        model_source_ok(s->base.ctx.model, SRC_NAME, rs_now());
    rs_reply_end(s);
}

static bool resync_due(const rs_src *s, double now)
{
    if (!s->swept_once || s->resync_wanted)
        return true;
    /* with notifications the resync is a safety net: keep it under ~0.3 % duty */
    double every = s->notify_on && s->sub_state == RC_READY
        ? fmax(RS_RESYNC_S, 300 * s->sweep_secs)
        : fmax(s->base.ctx.cfg->poll_s, 10 * s->sweep_secs);
    return now - s->sweep_last >= every;
}

/* Periodic and deferred work: what is due now, bounded. */
static void step(rs_src *s, bool poll)
{
    if (s->drop_pending && s->in_cb == 0) {
        s->drop_pending = false;
        do_drop(s, s->drop_why);
    }
    if (!rs_ready(s))
        return;
    if (!s->sweeping && resync_due(s, rs_now()))
        rs_sweep_start(s);
    else if (!s->sweeping)
        rs_dirty_flush(s);
    if (poll && s->pending == 0) {
        const char *ping[1] = { "PING" };
        rs_command(s, on_ping, s, 1, ping, NULL);
    }
    if (s->notify_on && !s->sub && !evtimer_pending(s->ev_sub_retry, NULL))
        sub_start(s);
    rs_publish(s, false);
}

static void on_kick(evutil_socket_t fd, short what, void *arg)
{
    step(arg, false);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    step(arg, true);
}

/* ---- ops ---------------------------------------------------------------------------------- */

static rs_src *impl(const rd_source *src) { return src->impl; }

static void op_start(rd_source *src)
{
    rs_src *s = impl(src);
    model_source(s->base.ctx.model, SRC_NAME);
    struct timeval tv = clock_tv(s->base.ctx.cfg->poll_s > 0.2 ? s->base.ctx.cfg->poll_s : 2);
    evtimer_add(s->ev_tick, &tv);
    event_active(s->ev_retry, EV_TIMEOUT, 0);   /* from the loop: even an immediate
                                                   failure reaches a waiting caller */
}

static void op_refresh(rd_source *src)
{
    rs_src *s = impl(src);
    if (s->state == RC_NONE && !s->ac) {
        evtimer_del(s->ev_retry);    /* the operator asked: try now */
        s->backoff = 1;
        s->setup_error = false;
        rs_conn_start(s);
        return;
    }
    if (!s->notify_on || s->sub_state != RC_READY)
        s->resync_wanted = true;
    step(s, false);
}

static void filter_copy(rd_exec_filter *dst, const rd_exec_filter *f)
{
    free(dst->status);
    free(dst->text);
    free(dst->fingerprint);
    dst->status = f ? xstrdup(f->status) : NULL;
    dst->text = f ? xstrdup(f->text) : NULL;
    dst->fingerprint = f ? xstrdup(f->fingerprint) : NULL;
}

static void op_set_filter(rd_source *src, const rd_exec_filter *f)
{
    rs_src *s = impl(src);
    filter_copy(&s->filter, f);
    s->filter_fp = rix_hash_fp(s->filter.fingerprint);
    s->page_from.set = false;
    s->view_dirty = true;
    rs_publish(s, true);
}

static void op_page(rd_source *src, int dir)
{
    rs_src *s = impl(src);
    const rd_model *m = s->base.ctx.model;
    const rix_task *t;
    if (dir == 0 || m->execs.n == 0) {
        s->page_from.set = false;
    } else if (dir > 0) {
        const rd_execution *last = &m->execs.items[m->execs.n - 1];
        if (!m->execs_more || !(t = rix_get(s->ix, last->id, strlen(last->id))))
            return;
        rix_cursor_of(s->ix, t, false, &s->page_from);
    } else {
        const rd_execution *first = &m->execs.items[0];
        if (!(t = rix_get(s->ix, first->id, strlen(first->id))))
            return;
        rix_cursor c;
        rix_cursor_of(s->ix, t, false, &c);
        size_t n = m->execs.n;
        uint32_t *idx = xmalloc((n ? n : 1) * sizeof *idx);
        rs_publish_prev(s, &c, n, idx);
        free(idx);
    }
    s->view_dirty = true;
    rs_publish(s, true);
}

static void op_jump(rd_source *src, const char *id)
{
    rs_src *s = impl(src);
    const rix_task *t = id ? rix_get(s->ix, id, strlen(id)) : NULL;
    if (t)
        rix_cursor_of(s->ix, t, true, &s->page_from);
    s->view_dirty = true;
    rs_publish(s, true);
}

static void op_chain(rd_source *src, const char *id)
{
    rs_src *s = impl(src);
    if (!id || !*id)
        return;
    free(s->chain_id);
    s->chain_id = xstrdup(id);
    s->chain_wanted = true;
    if (s->state == RC_READY)
        rs_chain_fetch(s);
    else if (s->settled && s->state == RC_NONE)
        answer_pending(s, "redis: not connected");
}

static void op_peek_dlq(rd_source *src, bool more)
{
    rs_src *s = impl(src);
    s->dlq_pages = more && s->dlq_wanted ? s->dlq_pages + 1 : 1;
    s->dlq_wanted = true;
    s->dlq_sent = false;
    if (s->swept_once)
        rs_publish(s, true);
    else if (s->settled && s->state == RC_NONE)
        answer_pending(s, "redis: not connected");
}

static bool op_settled(const rd_source *src)
{
    return impl(src)->settled;
}

static bool op_idle(const rd_source *src)
{
    const rs_src *s = impl(src);
    return !s->chain_wanted && !s->chain_busy && !(s->dlq_wanted && !s->dlq_sent);
}

static void op_free(rd_source *src)
{
    rs_src *s = impl(src);
    s->freeing = true;
    resolve_cancel(s->dns_req);
    s->dns_req = NULL;
    if (s->ac) {
        redisAsyncContext *ac = s->ac;
        s->ac = NULL;
        redisAsyncFree(ac);
    }
    if (s->sub) {
        redisAsyncContext *sub = s->sub;
        s->sub = NULL;
        redisAsyncFree(sub);
    }
    rs_secure_free(s);               /* the bridge after the contexts */
    resolve_free(s->dns);
    event_free(s->ev_tick);
    event_free(s->ev_watch);
    event_free(s->ev_retry);
    event_free(s->ev_sub_retry);
    event_free(s->ev_kick);
    rix_free(s->ix);
    rs_dirty_free(&s->dirty);
    filter_copy(&s->filter, NULL);
    free(s->chain_id);
    free(s->prefix);
    free(s->match);
    free(s);
}

static const rd_source_ops redis_ops = {
    .kind = "redis",
    .start = op_start,
    .refresh = op_refresh,
    .set_filter = op_set_filter,
    .page = op_page,
    .jump = op_jump,
    .chain = op_chain,
    .peek_dlq = op_peek_dlq,
    .settled = op_settled,
    .idle = op_idle,
    .free = op_free,
};

/* Glob-escape the prefix for SCAN MATCH / PSUBSCRIBE. */
static char *glob_escape(const char *s)
{
    char *out = xmalloc(strlen(s) * 2 + 1), *o = out;
    for (; *s; s++) {
        if (strchr("*?[]\\", *s))
            *o++ = '\\';
        *o++ = *s;
    }
    *o = '\0';
    return out;
}

rd_source *redis_source_new(const rd_source_ctx *ctx)
{
    if (!ctx || !ctx->cfg || !ctx->cfg->store)   /* a bad URL is reported when started */
        return NULL;
    rs_src *s = xcalloc(1, sizeof *s);
    s->base.ops = &redis_ops;
    s->base.ctx = *ctx;
    s->base.impl = s;
    s->evb = ctx->base;
    s->backoff = s->sub_backoff = 1;
    s->prefix = xstrdup(ctx->cfg->prefix && *ctx->cfg->prefix ? ctx->cfg->prefix
                                                               : "alakai-executions");
    char *esc = glob_escape(s->prefix);
    s->match = xasprintf("%s:*", esc);
    free(esc);
    char err[256] = "";
    bool ok = true;
    s->store_is_ref = secret_is_ref(ctx->cfg->store);   /* resolved when starting */
    if (!s->store_is_ref)
        s->url_ready = ok = redis_url_parse(ctx->cfg->store, &s->url, err, sizeof err);
    s->ix = rix_new(RS_MAX_TASKS);
    s->ev_tick = event_new(s->evb, -1, EV_PERSIST, on_tick, s);
    s->ev_watch = evtimer_new(s->evb, on_watch, s);
    s->ev_retry = evtimer_new(s->evb, on_retry, s);
    s->ev_sub_retry = evtimer_new(s->evb, on_sub_retry, s);
    s->ev_kick = evtimer_new(s->evb, on_kick, s);
    if (!ok) {                       /* reported at start; never connects */
        s->unusable = true;
        snprintf(s->unusable_why, sizeof s->unusable_why, "%s", err);
    }
    return &s->base;
}
