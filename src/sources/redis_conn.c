/*
 * The Redis source's connections: the main one (name lookup → TLS bridge → connect →
 * AUTH → SELECT / CONFIG GET / INFO → ready; on failure: stale, then reconnect with
 * backoff 1 s → 30 s) and the keyspace-notification subscription (a second connection,
 * PSUBSCRIBEd, retried with its own backoff).
 *
 * hiredis 0.14 has no timeouts and resolves names synchronously, so this file keeps
 * its own deadlines (connect + TLS + AUTH 3 s; 5 s without any reply while commands are
 * pending → redisAsyncFree, stale, reconnect with backoff), resolves host names with
 * io/resolve.h (evdns) before connecting, and never frees a context from inside one of
 * its callbacks (a teardown requested there is deferred to the loop: rs_drop_deferred).
 * Credentials and TLS (redis_secure.c) come first: secret references are resolved before
 * the first connect, AUTH is the first command of each connection, and a rediss:// store
 * is reached through a TLS bridge's unix socket.
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

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/resolve.h"

enum { RS_REPLY_TIMEOUT = 5 };
static const char SRC_NAME[] = "redis";

/* ---- state -------------------------------------------------------------------------- */

/* Requests that cannot be served while disconnected are answered with the error,
 * so a one-shot reader (snapshot) does not wait for them. */
void rs_answer_pending(rs_src *s, const char *msg)
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
    char w[120], named[200], msg[256];
    rs_where(s, w, sizeof w);
    rs_redact(s, why ? why : "error", named, sizeof named);
    snprintf(msg, sizeof msg, "redis %.80s: %.160s", w, named);
    snprintf(s->fail_why, sizeof s->fail_why, "%.150s", named);
    if (s->state != RC_READY && !s->setup_error && rs_urls_more(s))
        return;                      /* the next URL of the list is tried at once */
    model_source_fail(s->base.ctx.model, SRC_NAME, msg, rs_now());
    s->settled = true;
    if (s->state != RC_READY)
        rs_answer_pending(s, msg);
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
    s->replies++;                    /* progress, read by on_watch: no clock per reply */
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
    double next = rs_urls_next(s);      /* a list of URLs: the next one at once */
    struct timeval tv = clock_tv(next >= 0 ? next : s->backoff);
    evtimer_add(s->ev_retry, &tv);
    if (next < 0)
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
        rs_notify_note(s);
    }
    if (s->notify_on && s->sub_state == RC_NONE && !evtimer_pending(s->ev_sub_retry, NULL))
        rs_sub_start(s);
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

/* INFO's redis_version, for `redrive check` (an ACL user may not run INFO), and the
 * replication role and lag (redis_replica.c). */
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
    if (r && r->type == REDIS_REPLY_STRING)
        rs_replica_info(s, r->str);
    rs_reply_end(s);
}

/* Connected (and authenticated): the first commands. Inside a callback bracket. */
static void conn_ready(rs_src *s)
{
    s->state = RC_READY;
    rs_urls_connected(s);
    char db[16];
    snprintf(db, sizeof db, "%d", s->url.db);
    const char *sel[2] = { "SELECT", db };
    if (s->url.db != 0)
        rs_command(s, on_select, s, 2, sel, NULL);
    const char *cfg[3] = { "CONFIG", "GET", "notify-keyspace-events" };
    rs_command(s, on_config, s, 3, cfg, NULL);
    const char *info[1] = { "INFO" };     /* default sections: server and replication */
    rs_command(s, on_info, s, 1, info, NULL);
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

/* RD_REDIS_DEBUG: the adapter's read event, timed. One read event runs every reply
 * complete in what was read (hiredis calls them all from redisAsyncHandleRead): that, not
 * a single reply callback, is how long the loop is held. */
static void on_read_timed(evutil_socket_t fd, short what, void *arg)
{
    redisLibeventEvents *e = arg;
    rs_src *s = e->context->data;    /* outlives the context, which the read may free */
    double t0 = clock_cpu();
    redisAsyncHandleRead(e->context);
    double dt = clock_cpu() - t0;
    if (dt > s->cb_max)
        s->cb_max = dt;
}

static bool attach(rs_src *s, redisAsyncContext *ac, bool main, char *err, size_t cap)
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
    if (main) {                      /* replies to the sweep: the caps, timing */
        rs_reply_hook(s, ac->c.reader);
    }
    if (main && s->debug) {
        redisLibeventEvents *e = ac->ev.data;
        event_del(e->rev);
        event_assign(e->rev, s->evb, ac->c.fd, EV_READ, on_read_timed, e);
        event_add(e->rev, NULL);
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
    if (!attach(s, ac, true, err, sizeof err)) {
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
        rs_answer_pending(s, s->unusable_why);
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

void rs_sub_start(rs_src *s)
{
    if (s->freeing || s->sub || !s->notify_on || (s->url.needs_dns && !s->ip[0]) ||
        (s->url.tls && !s->tls))
        return;
    char err[200];
    redisAsyncContext *ac = open_ctx(s);
    if (!attach(s, ac, false, err, sizeof err)) {
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
    if (s->replies != s->replies_seen) {
        s->replies_seen = s->replies;
        s->progress_at = now;
    }
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
    rs_sub_start(arg);
}

/* The deferred teardown rs_drop asked for inside a callback, once outside all of them. */
void rs_drop_deferred(rs_src *s)
{
    if (s->drop_pending && s->in_cb == 0) {
        s->drop_pending = false;
        do_drop(s, s->drop_why);
    }
}

void rs_conn_events(rs_src *s)
{
    s->ev_watch = evtimer_new(s->evb, on_watch, s);
    s->ev_retry = evtimer_new(s->evb, on_retry, s);
    s->ev_sub_retry = evtimer_new(s->evb, on_sub_retry, s);
}
