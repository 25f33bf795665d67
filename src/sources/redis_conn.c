/*
 * The Redis source's connections (redis_conn.h): the main one (name lookup → TLS bridge →
 * connect → AUTH → SELECT / CONFIG GET / INFO → ready; on failure: stale, then reconnect
 * with backoff 1 s → 30 s) and the keyspace-notification subscription (a second
 * connection, PSUBSCRIBEd, retried with its own backoff).
 *
 * hiredis 0.14 has no timeouts and resolves names synchronously, so this file keeps
 * its own deadlines (connect + TLS + AUTH 3 s; 5 s without any reply while commands are
 * pending → redisAsyncFree, stale, reconnect with backoff), resolves host names with
 * io/resolve.h (evdns) before connecting, and never frees a context from inside one of
 * its callbacks (a teardown requested there is deferred to the loop: ev_drop).
 * Credentials and TLS (redis_secure.c) come first: secret references are resolved before
 * the first connect, AUTH is the first command of each connection, and a rediss:// store
 * is reached through a TLS bridge's unix socket.
 */
#include "redis_conn.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/resolve.h"
#include "../io/secret.h"
#include "../io/loop.h"
#include "redis_conn_priv.h"

enum { RS_REPLY_TIMEOUT = 5 };
static const char SRC_NAME[] = "redis";

/* ---- state -------------------------------------------------------------------------- */

static void sub_start(rs_conn *c);

void rs_conn_fail(rs_conn *c, const char *why)
{
    if (c->freeing)
        return;
    char w[120], named[200], msg[256];
    rs_where(c, w, sizeof w);
    rs_redact(c, why ? why : "error", named, sizeof named);
    snprintf(msg, sizeof msg, "redis %.80s: %.160s", w, named);
    snprintf(c->urls.fail_why, sizeof c->urls.fail_why, "%.150s", named);
    if (c->state != RC_READY && !c->setup_error && rs_urls_more(c))
        return;                      /* the next URL of the list is tried at once */
    c->cbs.failed(msg, c->state == RC_READY, c->cbs.ud);
}

bool rs_conn_ready(const rs_conn *c)
{
    return c->ac && c->state == RC_READY && !c->drop_pending &&
           !(c->ac->c.flags & (REDIS_DISCONNECTING | REDIS_FREEING));
}

static void watch_arm(rs_conn *c)
{
    if (!loop_timer_pending(c->ev_watch)) {
        loop_timer_in(c->ev_watch, 0.5);
    }
}

bool rs_conn_command(rs_conn *c, rs_reply_fn *cb, void *priv, int argc, const char **argv,
                     const size_t *argvlen)
{
    if (!rs_conn_ready(c))
        return false;
    if (redisAsyncCommandArgv(c->ac, cb, priv, argc, argv, argvlen) != REDIS_OK)
        return false;
    if (c->pending++ == 0)
        c->progress_at = clock_mono();
    watch_arm(c);
    return true;
}

void rs_conn_reply_begin(rs_conn *c)
{
    c->in_cb++;
    if (c->pending > 0)
        c->pending--;
    c->replies++;                    /* progress, read by on_watch: no clock per reply */
}

void rs_conn_reply_end(rs_conn *c)
{
    if (--c->in_cb == 0 && c->drop_pending)
        loop_soon(c->ev_drop);
}

static void schedule_retry(rs_conn *c)
{
    if (c->freeing || c->setup_error || loop_timer_pending(c->ev_retry))
        return;
    size_t url_was = c->urls.i;
    double next = rs_urls_next(c);      /* a list of URLs: the next one at once */
    if (c->urls.i != url_was)
        rs_sub_close(c);                /* the subscription follows the connection */
    loop_timer_in(c->ev_retry, next >= 0 ? next : c->backoff);
    if (next < 0)
        c->backoff = fmin(c->backoff * 2, 30);
}

/* Down (why): the context freed if there is one, the failure shown, a retry planned. */
static void conn_down(rs_conn *c, const char *why)
{
    redisAsyncContext *ac = c->ac;
    c->ac = NULL;                    /* callbacks fired by the free see "gone" */
    c->state = RC_NONE;
    c->pending = 0;
    c->cbs.lost(c->cbs.ud);          /* before the free: its replies come back NULL */
    if (ac)
        redisAsyncFree(ac);
    rs_conn_fail(c, why);
    schedule_retry(c);
}

static void conn_drop(rs_conn *c, const char *why)
{
    if (c->in_cb > 0) {              /* never free a context inside its own callback */
        c->drop_pending = true;
        snprintf(c->drop_why, sizeof c->drop_why, "%.159s", why);
        loop_soon(c->ev_drop);
        return;
    }
    conn_down(c, why);
}

/* ---- connection callbacks ------------------------------------------------------------ */

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    rs_conn *c = ac->data;
    if (c->ac != ac)                 /* we freed it ourselves */
        return;
    c->ac = NULL;                    /* hiredis frees it */
    conn_down(c, rs_bridge_error(c, status == REDIS_OK ? "connection closed" : ac->errstr));
}

static void on_config(redisAsyncContext *ac, void *reply, void *priv)
{
    rs_conn *c = priv;
    rs_conn_reply_begin(c);
    const redisReply *r = reply;
    c->notify_on = false;
    if (r)
        c->backoff = 1;              /* the server answered: connecting works */
    if (r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOAUTH", 6) == 0) {
        char msg[200];
        rs_conn_error_text(c, "CONFIG", r->str, msg, sizeof msg);
        conn_drop(c, msg);
    }
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->type == REDIS_REPLY_STRING) {
        const char *flags = r->element[1]->str;
        c->notify_on = strchr(flags, 'K') && (strchr(flags, 'h') || strchr(flags, 'A'));
        model_source_fact(c->model, SRC_NAME, RD_FACT_KEYSPACE, c->notify_on);
        rs_notify_note(c);
    }
    if (c->notify_on && c->sub_state == RC_NONE && !loop_timer_pending(c->ev_sub_retry))
        sub_start(c);
    rs_conn_reply_end(c);
}

static void on_select(redisAsyncContext *ac, void *reply, void *priv)
{
    rs_conn *c = priv;
    rs_conn_reply_begin(c);
    const redisReply *r = reply;
    if (r && r->type == REDIS_REPLY_ERROR) {
        char msg[200], cmd[24];
        snprintf(cmd, sizeof cmd, "SELECT %d", c->url.db);
        rs_conn_error_text(c, cmd, r->str, msg, sizeof msg);
        conn_drop(c, msg);
    }
    rs_conn_reply_end(c);
}

/* INFO's redis_version, for `redrive check` (an ACL user may not run INFO), and the
 * replication role and lag (redis_replica.c). */
static void on_info(redisAsyncContext *ac, void *reply, void *priv)
{
    (void)ac;
    rs_conn *c = priv;
    rs_conn_reply_begin(c);
    const redisReply *r = reply;
    const char *v = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, "redis_version:") : NULL;
    char ver[48] = "";
    if (v) {
        v += strlen("redis_version:");
        snprintf(ver, sizeof ver, "%.*s", (int)strcspn(v, "\r\n"), v);
    }
    if (r)
        model_source_version(c->model, SRC_NAME, ver[0] ? ver : NULL);
    if (r && r->type == REDIS_REPLY_STRING)
        rs_replica_info(c, r->str);
    rs_conn_reply_end(c);
}

/* Connected (and authenticated): the first commands. Inside a callback bracket. */
static void conn_ready(rs_conn *c)
{
    c->state = RC_READY;
    rs_urls_connected(c);
    char db[16];
    snprintf(db, sizeof db, "%d", c->url.db);
    const char *sel[2] = { "SELECT", db };
    if (c->url.db != 0)
        rs_conn_command(c, on_select, c, 2, sel, NULL);
    const char *cfg[3] = { "CONFIG", "GET", "notify-keyspace-events" };
    rs_conn_command(c, on_config, c, 3, cfg, NULL);
    const char *info[1] = { "INFO" };     /* default sections: server and replication */
    rs_conn_command(c, on_info, c, 1, info, NULL);
    c->cbs.ready(c->cbs.ud);
}

static void on_auth(redisAsyncContext *ac, void *reply, void *priv)
{
    rs_conn *c = priv;
    rs_conn_reply_begin(c);
    const redisReply *r = reply;
    if (!r || c->ac != ac) {
        /* freed or disconnected: on_disconnect says why */
    } else if (r->type == REDIS_REPLY_ERROR) {
        char msg[200];
        rs_conn_error_text(c, "AUTH", r->str, msg, sizeof msg);
        c->sec.auth_failed = true;       /* resolve the secrets again before retrying */
        conn_drop(c, msg);
    } else {
        c->backoff = 1;
        conn_ready(c);
    }
    rs_conn_reply_end(c);
}

static void on_connect(const redisAsyncContext *cac, int status)
{
    rs_conn *c = cac->data;
    if (c->ac != cac)
        return;
    if (status != REDIS_OK) {        /* hiredis frees the context after this */
        char msg[300];
        snprintf(msg, sizeof msg, "connect: %.150s", cac->errstr);
        c->ac = NULL;
        conn_down(c, rs_bridge_error(c, msg));
        return;
    }
    c->in_cb++;
    if (rs_auth_send(c, c->ac, on_auth)) {   /* AUTH before anything else */
        c->state = RC_AUTH;
        c->pending++;
        c->progress_at = clock_mono();
    } else {
        conn_ready(c);
    }
    rs_conn_reply_end(c);
}

/* Involuntary context switches of this thread so far (-1 unknown). */
static long preempted(void)
{
#ifdef RUSAGE_THREAD
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) == 0)
        return ru.ru_nivcsw;
#endif
    return -1;
}

/* RD_REDIS_DEBUG: the adapter's read event, timed. One read event runs every reply
 * complete in what was read (hiredis calls them all from redisAsyncHandleRead): that, not
 * a single reply callback, is how long the loop is held. Its thread CPU is also kept apart
 * for the events the scheduler did not preempt: on a shared virtual machine a preempted
 * event can read milliseconds of thread CPU for microseconds of work. */
static void on_read_timed(redisAsyncContext *ac)
{
    rs_conn *c = ac->data;            /* outlives the context, which the read may free */
    long p0 = preempted();
    double t0 = clock_cpu();
    redisAsyncHandleRead(ac);
    double dt = clock_cpu() - t0;
    if (dt > c->cb_max)
        c->cb_max = dt;
    if (preempted() == p0 && dt > c->cb_max_run)
        c->cb_max_run = dt;
}

static bool attach(rs_conn *c, redisAsyncContext *ac, bool main, char *err, size_t cap)
{
    if (!ac || ac->err) {
        snprintf(err, cap, "connect: %s", ac ? ac->errstr : "out of memory");
        if (ac)
            redisAsyncFree(ac);
        return false;
    }
    ac->data = c;
    if (loop_redis_attach(ac, c->evb) != 0) {
        snprintf(err, cap, "cannot attach to the event loop");
        redisAsyncFree(ac);
        return false;
    }
    if (main) {                      /* replies to the sweep: the caps, timing */
        rs_reply_hook(&c->reader, ac->c.reader);
    }
    if (main && c->debug)
        loop_redis_read_hook(ac, c->evb, on_read_timed);
    return true;
}

static redisAsyncContext *open_ctx(rs_conn *c)
{
    rs_bridge_clear_error(c);
    if (c->url.tls)
        return redisAsyncConnectUnix(rs_bridge_path(c));
    if (c->url.path[0])
        return redisAsyncConnectUnix(c->url.path);
    return redisAsyncConnect(c->url.needs_dns ? c->ip : c->url.host, c->url.port);
}

static void secret_failed(rs_conn *c, const char *why, bool setup);

static void conn_open(rs_conn *c)
{
    char err[300];
    if (c->url.tls && !rs_bridge_current(c))
        rs_sub_close(c);             /* contexts before their bridge */
    if (c->url.tls && !rs_bridge_ready(c, err, sizeof err)) {
        secret_failed(c, err, true);
        return;
    }
    redisAsyncContext *ac = open_ctx(c);
    if (!attach(c, ac, true, err, sizeof err)) {
        conn_down(c, err);
        return;
    }
    c->ac = ac;
    c->state = RC_CONNECTING;
    c->pending = 0;
    c->drop_pending = false;
    c->progress_at = clock_mono();
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    watch_arm(c);
}

/* ---- name resolution (io/resolve.h: never a blocking getaddrinfo on the loop) --------- */

static void on_resolved(const char *ip, const char *why, void *ud)
{
    rs_conn *c = ud;
    c->dns_req = NULL;               /* answered: the handle is gone */
    c->state = RC_NONE;
    if (!ip) {
        conn_down(c, why);
        return;
    }
    snprintf(c->ip, sizeof c->ip, "%s", ip);
    conn_open(c);
}

static void secret_failed(rs_conn *c, const char *why, bool setup)
{
    c->setup_error = setup;
    conn_down(c, why);
}

/* redis_secure.c resolved the references (why NULL: connect now) or could not. */
static void on_secure_resolved(rs_conn *c, const char *why, bool setup)
{
    if (why)
        secret_failed(c, why, setup);
    else
        rs_conn_start(c);
}

void rs_conn_start(rs_conn *c)
{
    if (c->freeing || c->ac || c->state != RC_NONE)
        return;
    if (c->unusable) {
        c->cbs.failed(c->unusable_why, false, c->cbs.ud);
        return;
    }
    if (!rs_secure_ready(c))
        return;                      /* rs_conn_start again once resolved */
    if (!c->url.needs_dns) {
        conn_open(c);
        return;
    }
    if (!c->dns)
        c->dns = resolve_new(c->evb);
    c->state = RC_RESOLVING;
    c->progress_at = clock_mono();
    watch_arm(c);
    c->dns_req = resolve_start(c->dns, c->url.host, on_resolved, c);
}

/* ---- keyspace notifications (second connection, subscribed) -------------------------- */

static void sub_drop(rs_conn *c, bool retry);

void rs_sub_close(rs_conn *c)
{
    sub_drop(c, false);
}

static void sub_drop(rs_conn *c, bool retry)
{
    redisAsyncContext *sub = c->sub;
    c->sub = NULL;
    c->sub_state = RC_NONE;
    if (sub)
        redisAsyncFree(sub);
    c->cbs.missed(c->cbs.ud);        /* events were lost meanwhile */
    if (retry && !c->freeing && !loop_timer_pending(c->ev_sub_retry)) {
        loop_timer_in(c->ev_sub_retry, c->sub_backoff);
        c->sub_backoff = fmin(c->sub_backoff * 2, 30);
    }
}

static void on_pmessage(redisAsyncContext *ac, void *reply, void *priv)
{
    rs_conn *c = priv;
    const redisReply *r = reply;
    if (!r || c->sub != ac || r->type != REDIS_REPLY_ARRAY || r->elements < 3)
        return;
    const redisReply *kind = r->element[0];
    if (kind->type != REDIS_REPLY_STRING)
        return;
    if (strcmp(kind->str, "psubscribe") == 0) {
        c->sub_state = RC_READY;
        c->sub_backoff = 1;
        if (c->sub_ever)             /* changes while unsubscribed were missed */
            c->cbs.missed(c->cbs.ud);
        c->sub_ever = true;
        c->cbs.notified(NULL, 0, c->cbs.ud);
        return;
    }
    if (strcmp(kind->str, "pmessage") != 0 || r->elements < 4 ||
        r->element[2]->type != REDIS_REPLY_STRING)
        return;
    const char *ch = r->element[2]->str, *key = strstr(ch, "__:");
    if (!key)
        return;
    key += 3;
    c->cbs.notified(key, r->element[2]->len - (size_t)(key - ch), c->cbs.ud);
}

static void on_sub_disconnect(const redisAsyncContext *ac, int status)
{
    rs_conn *c = ac->data;
    if (c->sub != ac)
        return;
    c->sub = NULL;                   /* hiredis frees it */
    sub_drop(c, true);
}

/* Keyspace events of our prefix in our database (known once the URL is). */
static bool sub_subscribe(rs_conn *c, redisAsyncContext *ac)
{
    char *channel = xasprintf("__keyspace@%d__:%s", c->url.db, c->match);
    bool ok = redisAsyncCommand(ac, on_pmessage, c, "PSUBSCRIBE %s", channel) == REDIS_OK;
    free(channel);
    return ok;
}

/* An AUTH refused here leaves the subscription unconfirmed: the watchdog drops it and
 * it is retried with backoff (the main connection reports the error). */
static void on_sub_auth(redisAsyncContext *ac, void *reply, void *priv)
{
    rs_conn *c = priv;
    const redisReply *r = reply;
    if (!r || c->sub != ac || r->type == REDIS_REPLY_ERROR)
        return;
    sub_subscribe(c, ac);
}

static void on_sub_connect(const redisAsyncContext *cac, int status)
{
    rs_conn *c = cac->data;
    if (c->sub != cac)
        return;
    if (status != REDIS_OK) {
        c->sub = NULL;
        sub_drop(c, true);
        return;
    }
    redisAsyncContext *ac = c->sub;
    if (rs_auth_send(c, ac, on_sub_auth))
        return;                      /* PSUBSCRIBE once authenticated */
    if (!sub_subscribe(c, ac))
        c->sub_state = RC_NONE;      /* the watchdog drops it */
}

static void sub_start(rs_conn *c)
{
    if (c->freeing || c->sub || !c->notify_on || (c->url.needs_dns && !c->ip[0]) ||
        (c->url.tls && !c->sec.tls))
        return;
    char err[200];
    redisAsyncContext *ac = open_ctx(c);
    if (!attach(c, ac, false, err, sizeof err)) {
        sub_drop(c, true);
        return;
    }
    c->sub = ac;
    c->sub_state = RC_CONNECTING;
    c->sub_started = clock_mono();
    redisAsyncSetConnectCallback(ac, on_sub_connect);
    redisAsyncSetDisconnectCallback(ac, on_sub_disconnect);
    watch_arm(c);
}

/* ---- timers ---------------------------------------------------------------------------- */

static void on_watch(int fd, short what, void *arg)
{
    rs_conn *c = arg;
    double now = clock_mono();
    char msg[120];
    if (c->replies != c->replies_seen) {
        c->replies_seen = c->replies;
        c->progress_at = now;
    }
    bool connecting = c->state == RC_CONNECTING || c->state == RC_RESOLVING ||
                      c->state == RC_AUTH;
    if (connecting && now - c->progress_at > RS_CONNECT_TIMEOUT) {
        if (c->state == RC_RESOLVING) {
            resolve_cancel(c->dns_req);
            c->dns_req = NULL;
            conn_down(c, "name resolution timed out");
        } else {
            snprintf(msg, sizeof msg, "%s timed out after %d s",
                     c->state == RC_AUTH ? "AUTH" : "connect", RS_CONNECT_TIMEOUT);
            conn_down(c, rs_bridge_error(c, msg));
        }
    } else if (c->state == RC_READY && c->pending > 0 &&
               now - c->progress_at > RS_REPLY_TIMEOUT) {
        snprintf(msg, sizeof msg, "no reply within %d s", RS_REPLY_TIMEOUT);
        conn_down(c, rs_bridge_error(c, msg));
    }
    if (c->sub && c->sub_state != RC_READY && now - c->sub_started > RS_CONNECT_TIMEOUT)
        sub_drop(c, true);
    bool busy = connecting || (c->state == RC_READY && c->pending > 0) ||
                (c->sub && c->sub_state != RC_READY);
    if (busy)
        watch_arm(c);
}

static void on_retry(int fd, short what, void *arg)
{
    rs_conn_start(arg);
}

static void on_sub_retry(int fd, short what, void *arg)
{
    sub_start(arg);
}

/* The deferred teardown conn_drop asked for inside a callback, once outside all of them. */
static void on_drop(int fd, short what, void *arg)
{
    rs_conn *c = arg;
    if (c->drop_pending && c->in_cb == 0) {
        c->drop_pending = false;
        conn_down(c, c->drop_why);
    }
}

/* ---- the connection's life and its periodic work ------------------------------------------ */

rs_conn *rs_conn_new(const rd_source_ctx *ctx, const char *match, const rs_conn_cbs *cbs)
{
    rs_conn *c = xcalloc(1, sizeof *c);
    c->evb = ctx->base;
    c->model = ctx->model;
    c->cfg = ctx->cfg;
    c->cbs = *cbs;
    c->match = xstrdup(match);
    c->backoff = c->sub_backoff = 1;
    c->debug = getenv("RD_REDIS_DEBUG") != NULL;
    char err[256] = "";
    c->sec.resolved = on_secure_resolved;
    c->sec.store_is_ref = secret_is_ref(c->cfg->store.url);   /* resolved when starting */
    if (!c->sec.store_is_ref &&
        !(c->sec.url_ready = rs_urls_set(c, c->cfg->store.url, false, err, sizeof err))) {
        c->unusable = true;          /* reported at start; never connects */
        snprintf(c->unusable_why, sizeof c->unusable_why, "%s", err);
    }
    c->ev_watch = loop_timer_new(c->evb, on_watch, c);
    c->ev_retry = loop_timer_new(c->evb, on_retry, c);
    c->ev_sub_retry = loop_timer_new(c->evb, on_sub_retry, c);
    c->ev_drop = loop_timer_new(c->evb, on_drop, c);
    return c;
}

static void ctx_free(redisAsyncContext **slot)
{
    redisAsyncContext *ac = *slot;
    *slot = NULL;                    /* callbacks fired by the free see "gone" */
    if (ac)
        redisAsyncFree(ac);
}

void rs_conn_free(rs_conn *c)
{
    c->freeing = true;
    resolve_cancel(c->dns_req);
    c->dns_req = NULL;
    ctx_free(&c->ac);
    ctx_free(&c->sub);
    rs_secure_free(c);               /* the bridge after the contexts */
    resolve_free(c->dns);
    loop_event_free(c->ev_watch);
    loop_event_free(c->ev_retry);
    loop_event_free(c->ev_sub_retry);
    loop_event_free(c->ev_drop);
    free(c->match);
    free(c);
}

void rs_conn_start_soon(rs_conn *c)
{
    loop_soon(c->ev_retry);
}

bool rs_conn_retry_now(rs_conn *c)
{
    if (c->state != RC_NONE || c->ac)
        return false;
    loop_timer_stop(c->ev_retry);        /* the operator asked: try now */
    c->backoff = 1;
    c->setup_error = false;
    rs_conn_start(c);
    return true;
}

bool rs_conn_down(const rs_conn *c)
{
    return c->state == RC_NONE;
}

bool rs_conn_notified(const rs_conn *c)
{
    return c->notify_on && c->sub_state == RC_READY;
}

double rs_conn_cb_max(const rs_conn *c, bool unpreempted)
{
    return unpreempted ? c->cb_max_run : c->cb_max;
}

static void on_ping(redisAsyncContext *ac, void *reply, void *priv)
{
    (void)ac;
    rs_conn *c = priv;
    rs_conn_reply_begin(c);
    if (reply && ((const redisReply *)reply)->type != REDIS_REPLY_ERROR)
        c->cbs.answered(c->cbs.ud);
    rs_conn_reply_end(c);
}

static void on_repl(redisAsyncContext *ac, void *reply, void *priv)
{
    (void)ac;
    rs_conn *c = priv;
    rs_conn_reply_begin(c);
    const redisReply *r = reply;
    if (r && r->type == REDIS_REPLY_STRING) {
        rs_replica_info(c, r->str);
        c->cbs.answered(c->cbs.ud);   /* the poll's answer, as PING's */
    }
    rs_conn_reply_end(c);
}

/* The poll's PING is an INFO replication now and then (same command count) when the
 * server is a replica or the store lists several URLs (redis_replica.c). */
void rs_conn_poll(rs_conn *c, bool ping)
{
    if (ping && c->pending == 0) {
        if (rs_replica_poll_due(c)) {
            const char *argv[2] = { "INFO", "replication" };
            rs_conn_command(c, on_repl, c, 2, argv, NULL);
        } else {
            const char *argv[1] = { "PING" };
            rs_conn_command(c, on_ping, c, 1, argv, NULL);
        }
    }
    if (c->notify_on && !c->sub && !loop_timer_pending(c->ev_sub_retry))
        sub_start(c);
}
