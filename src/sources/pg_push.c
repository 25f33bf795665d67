/*
 * Push for the PostgreSQL source (pg_push.h): the channels, the LISTEN state and why push
 * is off, the coalescing of notifications into refreshes, and the silence check.
 */
#include "pg_push.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/textutil.h"
#include "../core/xalloc.h"

typedef enum {
    P_NONE,                       /* the store does not notify (no `listen`) */
    P_CONFIG,                     /* push = false */
    P_LISTENING,                  /* LISTEN sent, not answered yet */
    P_ON,
    P_STANDBY, P_POOLER, P_SILENT, P_FAILED,
    P_BUSY,                       /* UNLISTENed: notifications came too fast; polling */
} push_state;

struct pg_push {
    bool enabled;
    double min_interval_s;
    push_state state;
    char *chan[PG_PUSH_MAX_CHANNELS];
    size_t n_chan;
    char *sql[PG_PUSH_MAX_CHANNELS];
    size_t answered;
    bool due;                     /* the LISTEN statements go in the next batch */
    bool pooled;                  /* sticky: a pooler hands out other sessions */
    const char *refresh;          /* the profile's listen_refresh (borrowed) */
    bool covers_execs;            /* it names the executions (or is unset) */
    char text[160];
    char why[120];                /* P_FAILED: the server's message */
    /* coalescing: the interval between push refreshes doubles while notifications keep
     * coming (up to PG_PUSH_BUSY_FACTOR x min_interval_s) and is back to min_interval_s
     * after a quiet interval */
    bool pending;
    double interval_s;
    double last_fire, last_notify;
    /* silence: polls that saw the data move with no notification around them */
    double prev_poll_at, silent_since;
    unsigned silent_polls;
    /* busy: the notification rate over windows of PG_PUSH_RATE_WINDOW_S */
    double window_at, busy_rate, relisten_at, relisten_s;
    unsigned long window_n;
    unsigned busy_windows;
    bool unlisten_due;
    unsigned long notifications, refreshes;
};

pg_push *pg_push_new(bool enabled, double min_interval_s)
{
    pg_push *p = xcalloc(1, sizeof *p);
    p->enabled = enabled;
    p->min_interval_s = min_interval_s >= 0 ? min_interval_s : 0.25;
    p->interval_s = p->min_interval_s;
    p->last_fire = -1e18;          /* never: the first notification refreshes at once */
    p->relisten_s = PG_PUSH_RELISTEN_S;
    return p;
}

static void channels_free(pg_push *p)
{
    for (size_t i = 0; i < p->n_chan; i++) {
        free(p->chan[i]);
        free(p->sql[i]);
    }
    p->n_chan = 0;
}

void pg_push_free(pg_push *p)
{
    if (!p)
        return;
    channels_free(p);
    free(p);
}

void pg_push_reconnect(pg_push *p)
{
    p->due = false;
    p->unlisten_due = false;
    p->answered = 0;
    p->pending = false;
    if (p->state == P_LISTENING || p->state == P_ON || p->state == P_STANDBY ||
        p->state == P_FAILED || p->state == P_BUSY)
        p->state = P_NONE;        /* decided again once the new connection is set up */
}

/* A channel name as the profile writes it: letters, digits, '_' and '.' (pgmq's
 * "pgmq_message_ready.ns"); quoted as an identifier in the statement. */
static bool channel_ok(const char *s, size_t n)
{
    if (n == 0 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.'))
            return false;
    }
    return true;
}

static bool requirement_met(const rd_profile *prof, const char *extensions)
{
    const char *ext = profile_get(prof, "requires_listen");
    if (!ext || !*ext)
        return true;
    char pat[80];
    snprintf(pat, sizeof pat, ",%s,", ext);
    return extensions && strstr(extensions, pat);
}

static bool list_has(const char *list, const char *word)
{
    size_t n;
    text_span *sp = text_split_all(list, TEXT_LIST_WORDS, &n);
    bool found = false;
    for (size_t i = 0; i < n && !found; i++)
        found = sp[i].len == strlen(word) && memcmp(sp[i].s, word, sp[i].len) == 0;
    free(sp);
    return found;
}

void pg_push_setup(pg_push *p, const rd_profile *prof, const char *extensions, bool standby)
{
    channels_free(p);
    p->refresh = profile_get(prof, "listen_refresh");
    p->covers_execs = !p->refresh || list_has(p->refresh, "executions");
    const char *list = requirement_met(prof, extensions) ? profile_get(prof, "listen") : NULL;
    text_span sp[PG_PUSH_MAX_CHANNELS];
    size_t n = text_split_list(list, TEXT_LIST_WORDS, sp, PG_PUSH_MAX_CHANNELS);
    for (size_t i = 0; i < n && i < PG_PUSH_MAX_CHANNELS; i++) {
        if (!channel_ok(sp[i].s, sp[i].len))
            continue;
        p->chan[p->n_chan] = xasprintf("%.*s", (int)sp[i].len, sp[i].s);
        p->sql[p->n_chan] = xasprintf("LISTEN \"%.*s\"", (int)sp[i].len, sp[i].s);
        p->n_chan++;
    }
    p->answered = 0;
    p->due = false;
    if (p->n_chan == 0)
        p->state = P_NONE;
    else if (!p->enabled)
        p->state = P_CONFIG;
    else if (p->pooled)
        p->state = P_POOLER;
    else if (standby)
        p->state = P_STANDBY;
    else if (p->state != P_SILENT) {
        p->state = P_LISTENING;
        p->due = true;
    } else {
        p->due = true;            /* still listening: a notification brings push back */
    }
}

const char *const *pg_push_listen_due(pg_push *p, size_t *n)
{
    static const char *const unlisten[] = { "UNLISTEN *" };
    *n = 0;
    if (p->unlisten_due) {
        p->unlisten_due = false;
        *n = 1;
        return unlisten;
    }
    if (!p->due)
        return NULL;
    p->due = false;
    *n = p->n_chan;
    return (const char *const *)p->sql;
}

void pg_push_listened(pg_push *p, const PGresult *r)
{
    ExecStatusType st = PQresultStatus(r);
    if (p->state == P_BUSY)
        return;                   /* the UNLISTEN (or a LISTEN sent before it) */
    if (st == PGRES_COMMAND_OK) {
        if (++p->answered == p->n_chan && p->state == P_LISTENING)
            p->state = P_ON;
        return;
    }
    const char *code = PQresultErrorField(r, PG_DIAG_SQLSTATE),
               *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    if (p->state != P_LISTENING && p->state != P_SILENT)
        return;
    /* "cannot execute LISTEN during recovery" (25006): a standby (PostgreSQL before 14
     * does not report in_hot_standby) */
    if (code && strcmp(code, "25006") == 0 && msg && strstr(msg, "recovery")) {
        p->state = P_STANDBY;
        return;
    }
    p->state = P_FAILED;
    snprintf(p->why, sizeof p->why, "%s", msg && *msg ? msg : "LISTEN failed");
}

void pg_push_pooled(pg_push *p)
{
    p->pooled = true;
    if (p->state != P_NONE && p->state != P_CONFIG)
        p->state = P_POOLER;
}

/* The rate over the window that ends now; two busy windows in a row: UNLISTEN. */
static void busy_check(pg_push *p, double now)
{
    if (p->window_at == 0) {
        p->window_at = now;
        p->window_n = 0;
    }
    p->window_n++;
    double span = now - p->window_at;
    if (span < PG_PUSH_RATE_WINDOW_S)
        return;
    double rate = (double)p->window_n / span;
    p->window_at = now;
    p->window_n = 0;
    if (rate <= PG_PUSH_BUSY_RATE) {
        p->busy_windows = 0;
        p->relisten_s = PG_PUSH_RELISTEN_S;   /* a calm window: the next spell starts short */
        return;
    }
    if (++p->busy_windows < 2)
        return;
    p->state = P_BUSY;
    p->busy_rate = rate;
    p->busy_windows = 0;
    p->unlisten_due = true;
    p->due = false;
    p->pending = false;
    p->relisten_at = now + p->relisten_s;
    p->relisten_s = p->relisten_s * 2 < PG_PUSH_RELISTEN_MAX_S ? p->relisten_s * 2
                                                               : PG_PUSH_RELISTEN_MAX_S;
}

double pg_push_notified(pg_push *p, const char *channel, double now)
{
    (void)channel;
    double quiet = now - p->last_notify;
    p->notifications++;
    if (p->state == P_BUSY)
        return -1;                /* sent before the UNLISTEN reached the server */
    busy_check(p, now);
    if (p->state == P_BUSY)
        return -1;
    p->last_notify = now;
    p->silent_since = 0;
    p->silent_polls = 0;
    if (p->state == P_SILENT)
        p->state = P_ON;          /* the channel fires after all */
    if ((p->state != P_ON && p->state != P_LISTENING) || p->pending)
        return -1;
    p->pending = true;
    if (quiet >= p->interval_s)
        p->interval_s = p->min_interval_s;   /* a quiet store: back to the short interval */
    double at = p->last_fire + p->interval_s;
    if (at <= now)
        return 0;                 /* the first change after a quiet interval: at once */
    /* a store that keeps notifying: the next refresh trails, the one after it later */
    double top = p->min_interval_s * PG_PUSH_BUSY_FACTOR;
    p->interval_s = p->interval_s * 2 < top ? p->interval_s * 2 : top;
    return at - now;
}

void pg_push_fire(pg_push *p, double now)
{
    p->pending = false;
    p->last_fire = now;
    p->refreshes++;
}

void pg_push_polled(pg_push *p, bool changed, double now, double poll_s)
{
    double prev = p->prev_poll_at;
    p->prev_poll_at = now;
    if (p->state == P_BUSY && now >= p->relisten_at) {
        p->state = P_LISTENING;   /* listen again: the rate decides anew */
        p->answered = 0;
        p->due = true;
        p->window_at = 0;
        return;
    }
    if (p->state != P_ON || prev == 0 || !changed)
        return;
    /* a notification since (shortly before) the previous poll explains the change: the
     * probe's counters lag the commit by up to a second */
    if (p->last_notify >= prev - 2.0 - poll_s) {
        p->silent_since = 0;
        p->silent_polls = 0;
        return;
    }
    if (p->silent_since == 0)
        p->silent_since = now;
    p->silent_polls++;
    if (now - p->silent_since >= PG_PUSH_SILENT_S && p->silent_polls >= PG_PUSH_SILENT_POLLS)
        p->state = P_SILENT;
}

bool pg_push_on(const pg_push *p) { return p->state == P_ON; }

bool pg_push_slows_poll(const pg_push *p) { return p->state == P_ON && p->covers_execs; }

const char *pg_push_state(pg_push *p)
{
    pg_push *w = p;
    switch (p->state) {
    case P_NONE: return "";
    case P_CONFIG: return "off — push = false";
    case P_LISTENING: return "starting";
    case P_STANDBY: return "off — standby";
    case P_POOLER: return "off — pgbouncer transaction pooling";
    case P_SILENT: return "off — no notifications seen";
    case P_BUSY:
        snprintf(w->text, sizeof w->text, "off — busy store (%.0f notifications/s): polling, "
                 "listening again after %.0f s", p->busy_rate, p->relisten_at - p->window_at);
        return w->text;
    case P_FAILED:
        snprintf(w->text, sizeof w->text, "off — LISTEN failed: %s", p->why);
        return w->text;
    case P_ON: break;
    }
    size_t o = (size_t)snprintf(w->text, sizeof w->text, "on — LISTEN");
    for (size_t i = 0; i < p->n_chan && o < sizeof w->text; i++)
        o += (size_t)snprintf(w->text + o, sizeof w->text - o, "%s %s", i ? "," : "", p->chan[i]);
    return w->text;
}

const char *pg_push_refresh_queries(const pg_push *p) { return p->refresh; }

unsigned long pg_push_notifications(const pg_push *p) { return p->notifications; }

unsigned long pg_push_refreshes(const pg_push *p) { return p->refreshes; }
