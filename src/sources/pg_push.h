#pragma once
/*
 * Push for the PostgreSQL source (pg_push.c): LISTEN on the channels the store notifies
 * (the profile's `listen`), and what comes of it. A notification asks for a refresh of the
 * lists on screen, at most one per `push_min_interval`; while push works the poll slows to
 * a safety net. Push falls back to polling, visibly (the model's `push` text), on a hot
 * standby (no NOTIFY), behind a transaction pooler, when LISTEN fails, or when the
 * channels stay silent while the change probe sees the data move. pg_source.c owns the
 * timers; this file decides. No clock: callers pass `now`.
 */
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "../core/profile.h"

typedef struct pg_push pg_push;

enum {
    PG_PUSH_SLOW = 5,             /* the poll interval times this while push works */
    PG_PUSH_MAX_CHANNELS = 8,
    /* A store that keeps notifying is refreshed at most every this many
     * push_min_interval (2 s at the default 250 ms): 50 consoles on a store taking 100
     * changes a second would otherwise each refresh 4 times a second */
    PG_PUSH_BUSY_FACTOR = 8,
};
/* Silent: polls saw the pushed queries' data change, with no notification around them,
 * for this long (and at least PG_PUSH_SILENT_POLLS times): push is off. */
#define PG_PUSH_SILENT_S 300.0
enum { PG_PUSH_SILENT_POLLS = 3 };
/* Busy: notifications came faster than PG_PUSH_BUSY_RATE a second over two windows of
 * PG_PUSH_RATE_WINDOW_S in a row: the console UNLISTENs and polls (every notification of
 * every listening session is work for the server: 50 consoles on a store taking 100
 * changes a second cost it ~40 % of a core in deliveries alone, and a screen that changes
 * anyway gains little from push). It listens again after PG_PUSH_RELISTEN_S, twice that
 * each time the store is still busy, up to PG_PUSH_RELISTEN_MAX_S. */
#define PG_PUSH_BUSY_RATE 20.0
#define PG_PUSH_RATE_WINDOW_S 5.0
#define PG_PUSH_RELISTEN_S 30.0
#define PG_PUSH_RELISTEN_MAX_S 300.0

/* enabled: the config's `push`; min_interval_s: `push_min_interval`. */
pg_push *pg_push_new(bool enabled, double min_interval_s);
void pg_push_free(pg_push *p);

/* A new connection: nothing is listened to on it. */
void pg_push_reconnect(pg_push *p);
/* The connection is set up: the channels of the profile in use (`listen`; none unless the
 * extension `requires_listen` names is in extensions, ",pgmq,plpgsql,"); standby: the
 * server said it is a hot standby. */
void pg_push_setup(pg_push *p, const rd_profile *prof, const char *extensions, bool standby);
/* The LISTEN statements due in the next batch (once per connection, and again after a
 * busy spell), or the UNLISTEN of a busy store: *n of them, valid until the next call into
 * this file. NULL when none is due. */
const char *const *pg_push_listen_due(pg_push *p, size_t *n);
/* The answer of one LISTEN statement (an error turns push off, naming why). */
void pg_push_listened(pg_push *p, const PGresult *r);
/* A transaction pooler hands the console other server sessions (a prepared statement
 * vanished): LISTEN cannot hold. */
void pg_push_pooled(pg_push *p);

/* A notification on channel at now: seconds until the push refresh is due (0 = at once),
 * or < 0 when one is already pending (coalesced) or push is off. The first notification
 * after a quiet interval refreshes at once; while notifications keep coming the refreshes
 * trail, min_interval apart, then twice that, up to PG_PUSH_BUSY_FACTOR x min_interval. */
double pg_push_notified(pg_push *p, const char *channel, double now);
/* The pending push refresh goes out now. */
void pg_push_fire(pg_push *p, double now);
/* A refresh the poll timer sent answered: changed says whether the change probe saw the
 * data of the pushed queries move. May turn push off (silent) or the poll back, or, after
 * a busy spell, have LISTEN sent again. */
void pg_push_polled(pg_push *p, bool changed, double now, double poll_s);

/* Notifications drive the refresh. */
bool pg_push_on(const pg_push *p);
/* Push is on and its notifications cover the executions (the profile's listen_refresh
 * names them, or is unset): the poll may slow to a safety net. Tasker notifies queue
 * activity only (pgmq), so its steps stay on the poll. */
bool pg_push_slows_poll(const pg_push *p);
/* "on — LISTEN a, b", "off — standby", "off — busy store (120 notifications/s): polling,
 * listening again in 30 s"...; "" when the store does not notify. now: for the busy text. */
const char *pg_push_state(pg_push *p);
/* The queries a push refresh runs whatever the change probe says (the profile's
 * `listen_refresh`: the table counters the probe reads lag the commit by up to a second),
 * as "counts executions ..."; NULL: every query of the refresh. */
const char *pg_push_refresh_queries(const pg_push *p);
/* Counters (RD_PG_DEBUG, tests): notifications received, push refreshes sent. */
unsigned long pg_push_notifications(const pg_push *p);
unsigned long pg_push_refreshes(const pg_push *p);
