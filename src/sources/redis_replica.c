/*
 * Reading Alakai's store from a Redis replica (docs/sources.md "Reading from standbys").
 *
 * The store may list several URLs, tried in order: `store = redis://replica:6380,
 * redis://primary:6379`. A failed connection moves to the next URL at once while some URL
 * has not been tried since the last success; after a whole round the usual backoff applies.
 * The connection stays where it answered (back on the first URL only when that one fails).
 * Moving to another URL after a connection was lost is a failover: the model says from where,
 * why and to where. Keyspace notifications are a per-server setting: each server of the list
 * is checked on connect (CONFIG GET) and the source notes when they are off.
 *
 * Role and lag come from INFO: the one sent on connect, then `INFO replication` in place of
 * the poll's PING every RS_REPL_EVERY_S (so the command count does not grow). Lag: 0 while the
 * replica's link is up and its primary was heard from within the primary's ping period
 * (repl-ping-replica-period, 10 s by default); otherwise the seconds since it last was.
 */
#include "redis_priv.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/redact.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/secret.h"

enum { RS_REPL_EVERY_S = 10, RS_PING_PERIOD_S = 10 };
static const char SRC_NAME[] = "redis";

static bool parse_item(const rs_src *s, size_t i, bool secret, rd_redis_url *out, char *err,
                       size_t cap)
{
    return redis_url_parse_item(s->urls, i, secret, out, err, cap);
}

bool rs_urls_set(rs_src *s, const char *text, bool secret, char *err, size_t cap)
{
    if (!redis_url_check_list(text, secret, err, cap))
        return false;
    const char *st[REDIS_URL_LIST_MAX];
    size_t ln[REDIS_URL_LIST_MAX];
    size_t n = redis_url_split(text, st, ln, REDIS_URL_LIST_MAX);
    rs_urls_free(s);
    s->urls = xstrdup(text ? text : "");
    s->n_urls = n ? n : 1;
    if (s->url_i >= s->n_urls)
        s->url_i = 0;
    redis_url_clear(&s->url);
    return parse_item(s, s->url_i, secret, &s->url, err, cap);
}

void rs_urls_free(rs_src *s)
{
    secret_free(s->urls);
    s->urls = NULL;
}

void rs_redact(const rs_src *s, const char *msg, char *out, size_t cap)
{
    if (s->store_is_ref && s->store_value)
        redact_ref(msg, s->store_value, s->base.ctx.cfg->store.url, out, cap);
    else
        snprintf(out, cap, "%s", msg ? msg : "");
}

void rs_where(const rs_src *s, char *out, size_t cap)
{
    const rd_redis_url *u = &s->url;
    if (s->store_is_ref && s->n_urls > 1)      /* the reference named, no part of it */
        snprintf(out, cap, "URL %zu of %.60s", s->url_i + 1, s->base.ctx.cfg->store.url);
    else if (s->store_is_ref)
        snprintf(out, cap, "%.80s", s->base.ctx.cfg->store.url);
    else if (u->path[0])
        snprintf(out, cap, "%.90s", u->path);
    else if (u->host[0])
        snprintf(out, cap, "%s%.80s%s:%d", strchr(u->name, ':') ? "[" : "", u->name,
                 strchr(u->name, ':') ? "]" : "", u->port);
    else
        snprintf(out, cap, "store");
}

double rs_urls_next(rs_src *s)
{
    if (s->url_ok[0]) {                     /* the connection that answered is gone */
        snprintf(s->url_lost, sizeof s->url_lost, "%s", s->url_ok);
        snprintf(s->url_why, sizeof s->url_why, "%.119s", s->fail_why);
        s->url_ok[0] = '\0';
    }
    if (s->n_urls < 2 || !s->urls)
        return -1;
    s->url_i = (s->url_i + 1) % s->n_urls;
    char err[256];
    rd_redis_url u;
    if (!parse_item(s, s->url_i, s->store_is_ref, &u, err, sizeof err))
        return -1;                          /* checked when set: cannot happen */
    redis_url_clear(&s->url);
    s->url = u;
    s->ip[0] = '\0';
    if (s->store_is_ref && !s->base.ctx.cfg->store.password)
        s->creds_ready = false;             /* this URL's own credentials */
    rs_sub_close(s);                        /* the subscription follows the connection */
    model_source_replica(s->base.ctx.model, SRC_NAME, NULL, NULL, -1);
    return ++s->url_tries < s->n_urls ? 0 : (s->url_tries = 0, -1);
}

bool rs_urls_more(const rs_src *s)
{
    return s->n_urls > 1 && s->url_tries + 1 < s->n_urls;
}

void rs_urls_connected(rs_src *s)
{
    s->url_tries = 0;
    rs_where(s, s->url_ok, sizeof s->url_ok);
    s->is_replica = false;
    s->repl_at = 0;
    if (s->url_lost[0] && strcmp(s->url_lost, s->url_ok) != 0) {
        char *what = xasprintf("from %s (%s) to %s", s->url_lost, s->url_why, s->url_ok);
        model_source_failover(s->base.ctx.model, SRC_NAME, what, rs_now());
        free(what);
    }
    s->url_lost[0] = '\0';
    model_source_replica(s->base.ctx.model, SRC_NAME, s->n_urls > 1 ? s->url_ok : NULL,
                         s->n_urls > 1 ? "primary" : NULL, -1);
}

/* The value of "key:" in INFO text, copied (at most cap-1 bytes); false when absent. */
static bool info_get(const char *info, const char *key, char *out, size_t cap)
{
    size_t kl = strlen(key);
    for (const char *p = info; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, key, kl) == 0 && p[kl] == ':') {
            snprintf(out, cap, "%.*s", (int)strcspn(p + kl + 1, "\r\n"), p + kl + 1);
            return true;
        }
    }
    return false;
}

void rs_replica_info(rs_src *s, const char *info)
{
    char role[16], link[16] = "", io[24] = "", down[24] = "";
    if (!info || !info_get(info, "role", role, sizeof role))
        return;
    s->repl_at = clock_mono();
    s->is_replica = strcmp(role, "slave") == 0;
    double lag = -1;
    if (s->is_replica) {
        info_get(info, "master_link_status", link, sizeof link);
        info_get(info, "master_last_io_seconds_ago", io, sizeof io);
        info_get(info, "master_link_down_since_seconds", down, sizeof down);
        double v_io = io[0] ? atof(io) : -1, v_down = down[0] ? atof(down) : -1;
        if (strcmp(link, "up") == 0 && v_io >= 0)
            lag = v_io <= RS_PING_PERIOD_S ? 0 : v_io;
        else if (v_down >= 0)
            lag = v_down;
    }
    bool multi = s->n_urls > 1;
    model_source_replica(s->base.ctx.model, SRC_NAME, multi ? s->url_ok : NULL,
                         s->is_replica ? "replica" : multi ? "primary" : NULL, lag);
}

static void on_repl(redisAsyncContext *ac, void *reply, void *priv)
{
    (void)ac;
    rs_src *s = priv;
    rs_reply_begin(s);
    const redisReply *r = reply;
    if (r && r->type == REDIS_REPLY_STRING) {
        rs_replica_info(s, r->str);
        if (s->swept_once)            /* the poll's answer, as PING's */
            model_source_ok(s->base.ctx.model, SRC_NAME, rs_now());
    }
    rs_reply_end(s);
}

bool rs_replica_poll(rs_src *s)
{
    if (!(s->is_replica || s->n_urls > 1) || clock_mono() - s->repl_at < RS_REPL_EVERY_S)
        return false;
    s->repl_at = clock_mono();
    const char *argv[2] = { "INFO", "replication" };
    return rs_command(s, on_repl, s, 2, argv, NULL);
}

void rs_notify_note(rs_src *s)
{
    char at[100];
    rs_where(s, at, sizeof at);
    char *note = xasprintf("keyspace notifications off on %s (notify-keyspace-events needs K "
                           "and h or A; each replica has its own): changes show at the next "
                           "sweep", at);           /* cut to the note's size by the model */
    const char *v[1] = { note };
    model_source_notes(s->base.ctx.model, SRC_NAME, v, s->notify_on ? 0 : 1);
    free(note);
}
