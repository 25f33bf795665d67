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
#include "redis_conn_priv.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/secret.h"

enum { RS_REPL_EVERY_S = 10, RS_PING_PERIOD_S = 10 };
static const char SRC_NAME[] = "redis";

static bool parse_item(const rs_conn *c, size_t i, bool secret, rd_redis_url *out, char *err,
                       size_t cap)
{
    return redis_url_parse_item(c->urls.text, i, secret, out, err, cap);
}

bool rs_urls_set(rs_conn *c, const char *text, bool secret, char *err, size_t cap)
{
    if (!redis_url_check_list(text, secret, err, cap))
        return false;
    const char *st[REDIS_URL_LIST_MAX];
    size_t ln[REDIS_URL_LIST_MAX];
    size_t n = redis_url_split(text, st, ln, REDIS_URL_LIST_MAX);
    rs_urls_free(c);
    c->urls.text = xstrdup(text ? text : "");
    c->urls.n = n ? n : 1;
    if (c->urls.i >= c->urls.n)
        c->urls.i = 0;
    redis_url_clear(&c->url);
    return parse_item(c, c->urls.i, secret, &c->url, err, cap);
}

void rs_urls_free(rs_conn *c)
{
    secret_free(c->urls.text);
    c->urls.text = NULL;
}

void rs_where(const rs_conn *c, char *out, size_t cap)
{
    const rd_redis_url *u = &c->url;
    if (c->sec.store_is_ref && c->urls.n > 1)      /* the reference named, no part of it */
        snprintf(out, cap, "URL %zu of %.60s", c->urls.i + 1, c->cfg->store.url);
    else if (c->sec.store_is_ref)
        snprintf(out, cap, "%.80s", c->cfg->store.url);
    else if (u->path[0])
        snprintf(out, cap, "%.90s", u->path);
    else if (u->host[0])
        snprintf(out, cap, "%s%.80s%s:%d", strchr(u->name, ':') ? "[" : "", u->name,
                 strchr(u->name, ':') ? "]" : "", u->port);
    else
        snprintf(out, cap, "store");
}

double rs_urls_next(rs_conn *c)
{
    if (c->urls.ok[0]) {                     /* the connection that answered is gone */
        snprintf(c->urls.lost, sizeof c->urls.lost, "%s", c->urls.ok);
        snprintf(c->urls.why, sizeof c->urls.why, "%.119s", c->urls.fail_why);
        c->urls.ok[0] = '\0';
    }
    if (c->urls.n < 2 || !c->urls.text)
        return -1;
    c->urls.i = (c->urls.i + 1) % c->urls.n;
    char err[256];
    rd_redis_url u;
    if (!parse_item(c, c->urls.i, c->sec.store_is_ref, &u, err, sizeof err))
        return -1;                          /* checked when set: cannot happen */
    redis_url_clear(&c->url);
    c->url = u;
    c->ip[0] = '\0';
    if (c->sec.store_is_ref && !c->cfg->store.password)
        c->sec.creds_ready = false;             /* this URL's own credentials */
    model_source_replica(c->model, SRC_NAME, NULL, NULL, -1);
    return ++c->urls.tries < c->urls.n ? 0 : (c->urls.tries = 0, -1);
}

bool rs_urls_more(const rs_conn *c)
{
    return c->urls.n > 1 && c->urls.tries + 1 < c->urls.n;
}

void rs_urls_connected(rs_conn *c)
{
    c->urls.tries = 0;
    rs_where(c, c->urls.ok, sizeof c->urls.ok);
    c->urls.is_replica = false;
    c->urls.repl_at = 0;
    if (c->urls.lost[0] && strcmp(c->urls.lost, c->urls.ok) != 0) {
        char *what = xasprintf("from %s (%s) to %s", c->urls.lost, c->urls.why, c->urls.ok);
        model_source_failover(c->model, SRC_NAME, what, clock_wall());
        free(what);
    }
    c->urls.lost[0] = '\0';
    model_source_replica(c->model, SRC_NAME, c->urls.n > 1 ? c->urls.ok : NULL,
                         c->urls.n > 1 ? "primary" : NULL, -1);
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

void rs_replica_info(rs_conn *c, const char *info)
{
    char role[16], link[16] = "", io[24] = "", down[24] = "";
    if (!info || !info_get(info, "role", role, sizeof role))
        return;
    c->urls.repl_at = clock_mono();
    c->urls.is_replica = strcmp(role, "slave") == 0;
    model_source_fact(c->model, SRC_NAME, RD_FACT_REPLICA, c->urls.is_replica);
    double lag = -1;
    if (c->urls.is_replica) {
        info_get(info, "master_link_status", link, sizeof link);
        info_get(info, "master_last_io_seconds_ago", io, sizeof io);
        info_get(info, "master_link_down_since_seconds", down, sizeof down);
        double v_io = io[0] ? atof(io) : -1, v_down = down[0] ? atof(down) : -1;
        if (strcmp(link, "up") == 0 && v_io >= 0)
            lag = v_io <= RS_PING_PERIOD_S ? 0 : v_io;
        else if (v_down >= 0)
            lag = v_down;
    }
    bool multi = c->urls.n > 1;
    model_source_replica(c->model, SRC_NAME, multi ? c->urls.ok : NULL,
                         c->urls.is_replica ? "replica" : multi ? "primary" : NULL, lag);
}

bool rs_replica_poll_due(rs_conn *c)
{
    if (!(c->urls.is_replica || c->urls.n > 1) || clock_mono() - c->urls.repl_at < RS_REPL_EVERY_S)
        return false;
    c->urls.repl_at = clock_mono();
    return true;
}

void rs_notify_note(rs_conn *c)
{
    char at[100];
    rs_where(c, at, sizeof at);
    char *note = xasprintf("keyspace notifications off on %s (notify-keyspace-events needs K "
                           "and h or A; each replica has its own): changes show at the next "
                           "sweep", at);           /* cut to the note's size by the model */
    const char *v[1] = { note };
    model_source_notes(c->model, SRC_NAME, v, c->notify_on ? 0 : 1);
    free(note);
}
