/* Push for the PostgreSQL source (src/sources/pg_push.c): the channels a profile names,
 * coalescing a burst of notifications into a few refreshes, and every reason push is off. */
#include <stdlib.h>
#include <string.h>

#include "../../src/core/diag.h"
#include "../../src/sources/pg_push.h"
#include "check.h"

static rd_profile prof(const char *settings)
{
    char text[600];
    snprintf(text, sizeof text, "[profile]\nname = t\nstore = postgresql\nsemantics = attune\n%s\n"
             "[query counts]\nSELECT 1\n", settings);
    rd_profile p;
    rd_diags d = {0};
    bool ok = profile_parse("t.profile", text, &p, &d);
    CHECK(ok);
    diags_free(&d);
    return p;
}

static const char ATTUNE[] = "listen = execution_created, execution_status_changed\n"
                             "listen_refresh = counts executions failing\n";

/* A push source set up on a primary, its LISTEN statements answered. */
static pg_push *listening(const rd_profile *p, double min_interval)
{
    pg_push *push = pg_push_new(true, min_interval);
    pg_push_setup(push, p, ",plpgsql,", false);
    CHECK_STR(pg_push_state(push), "starting");
    size_t n = 0;
    const char *const *sql = pg_push_listen_due(push, &n);
    CHECK(sql && n == 2);
    if (sql && n == 2) {
        CHECK_STR(sql[0], "LISTEN \"execution_created\"");
        CHECK_STR(sql[1], "LISTEN \"execution_status_changed\"");
    }
    CHECK(pg_push_listen_due(push, &n) == NULL && n == 0);       /* once per connection */
    PGresult *ok = PQmakeEmptyPGresult(NULL, PGRES_COMMAND_OK);
    pg_push_listened(push, ok);
    CHECK(!pg_push_on(push));
    pg_push_listened(push, ok);
    PQclear(ok);
    return push;
}

/* 1,000 notifications over one second, the refreshes fired when their timer is due:
 * one refresh per min_interval, not one per notification. */
static void burst(const rd_profile *p)
{
    pg_push *push = listening(p, 0.25);
    CHECK(pg_push_on(push));
    CHECK(pg_push_slows_poll(push));      /* the executions are pushed: the poll is a net */
    CHECK_STR(pg_push_state(push), "on — LISTEN execution_created, execution_status_changed");
    CHECK_STR(pg_push_refresh_queries(push), "counts executions failing");
    double fire_at = -1;
    for (int i = 0; i < 1000; i++) {
        double now = i * 0.001;
        if (fire_at >= 0 && fire_at <= now) {
            pg_push_fire(push, fire_at);
            fire_at = -1;
        }
        double d = pg_push_notified(push, "execution_status_changed", now);
        if (d >= 0) {
            CHECK(fire_at < 0);
            fire_at = now + d;
        }
    }
    if (fire_at >= 0)
        pg_push_fire(push, fire_at);
    CHECK(pg_push_notifications(push) == 1000);
    /* at 0 (the first at once), then trailing, the interval doubling while they keep
     * coming: 0.25, 0.75, 1.75 (never two within min_interval) */
    CHECK(pg_push_refreshes(push) == 4);
    CHECK_NEAR(fire_at, 1.75);
    /* a quiet store: the next notification refreshes at once, and the interval is back to
     * min_interval */
    CHECK_NEAR(pg_push_notified(push, "execution_created", 10.0), 0.0);
    pg_push_fire(push, 10.0);
    CHECK_NEAR(pg_push_notified(push, "execution_created", 10.1), 0.15);
    pg_push_fire(push, 10.25);
    /* a store that never stops: refreshes 2 s apart (PG_PUSH_BUSY_FACTOR x 0.25) */
    double t = 10.3, last = 10.25, gap = 0;
    for (int i = 0; i < 40; i++, t += 0.01) {
        double d = pg_push_notified(push, "execution_status_changed", t);
        if (d > 0) {
            gap = t + d - last;
            last = t + d;
            pg_push_fire(push, last);
            t = last;
        }
    }
    CHECK_NEAR(gap, 2.0);
    pg_push_free(push);
}

/* Polls that see the pushed data move with no notification around them turn push off
 * ("no notifications seen") after PG_PUSH_SILENT_S; a notification brings it back. */
static void silent(const rd_profile *p)
{
    pg_push *push = listening(p, 0.25);
    double t = 100;               /* a monotonic clock's time: never 0 */
    for (; t < 100 + PG_PUSH_SILENT_S + 30 && pg_push_on(push); t += 10)
        pg_push_polled(push, true, t, 2.0);
    CHECK(!pg_push_on(push));
    CHECK(t - 100 >= PG_PUSH_SILENT_S);
    CHECK_STR(pg_push_state(push), "off — no notifications seen");
    CHECK(pg_push_notified(push, "execution_created", t) >= 0);
    CHECK(pg_push_on(push));
    pg_push_free(push);

    /* a notification in every poll window: never silent; nor polls that see nothing */
    push = listening(p, 0.25);
    for (t = 100; t < 2 * PG_PUSH_SILENT_S; t += 10) {
        pg_push_notified(push, "execution_created", t + 1);
        pg_push_fire(push, t + 1);
        pg_push_polled(push, true, t + 10, 2.0);
    }
    for (; t < 4 * PG_PUSH_SILENT_S; t += 10)
        pg_push_polled(push, false, t, 2.0);
    CHECK(pg_push_on(push));
    pg_push_free(push);
}

static void off_reasons(const rd_profile *p)
{
    size_t n = 9;
    pg_push *push = pg_push_new(true, 0.25);
    pg_push_setup(push, p, ",plpgsql,", true);                     /* a hot standby */
    CHECK_STR(pg_push_state(push), "off — standby");
    CHECK(pg_push_listen_due(push, &n) == NULL && n == 0);
    CHECK(pg_push_notified(push, "execution_created", 1) < 0);
    pg_push_reconnect(push);                                        /* the primary after it */
    pg_push_setup(push, p, ",plpgsql,", false);
    CHECK(pg_push_listen_due(push, &n) != NULL && n == 2);
    pg_push_pooled(push);                                           /* a transaction pooler */
    CHECK_STR(pg_push_state(push), "off — pgbouncer transaction pooling");
    pg_push_reconnect(push);
    pg_push_setup(push, p, ",plpgsql,", false);                     /* it stays so */
    CHECK_STR(pg_push_state(push), "off — pgbouncer transaction pooling");
    CHECK(pg_push_listen_due(push, &n) == NULL);
    pg_push_free(push);

    push = pg_push_new(false, 0.25);                                /* push = false */
    pg_push_setup(push, p, ",plpgsql,", false);
    CHECK_STR(pg_push_state(push), "off — push = false");
    CHECK(pg_push_listen_due(push, &n) == NULL);
    pg_push_free(push);
}

/* Tasker: pgmq's channels only where pgmq is installed; a name that is not a plain
 * channel name is left out. */
static void requires(void)
{
    rd_profile p = prof("listen = pgmq_message_ready pgmq_queue_created bad\"name\n"
                        "requires_listen = pgmq\nlisten_refresh = queues\n");
    pg_push *push = pg_push_new(true, 0.25);
    size_t n = 0;
    pg_push_setup(push, &p, ",plpgsql,", false);
    CHECK_STR(pg_push_state(push), "");
    CHECK(pg_push_listen_due(push, &n) == NULL);
    pg_push_setup(push, &p, ",pgmq,plpgsql,", false);
    const char *const *sql = pg_push_listen_due(push, &n);
    CHECK(sql && n == 2);
    if (sql && n == 2)
        CHECK_STR(sql[0], "LISTEN \"pgmq_message_ready\"");
    PGresult *ok = PQmakeEmptyPGresult(NULL, PGRES_COMMAND_OK);
    pg_push_listened(push, ok);
    pg_push_listened(push, ok);
    PQclear(ok);
    CHECK(pg_push_on(push));
    /* queue activity only: the steps (task state) stay on the poll, which does not slow */
    CHECK(!pg_push_slows_poll(push));
    pg_push_free(push);
    profile_free(&p);

    rd_profile none = prof("");                                     /* no `listen` */
    push = pg_push_new(true, 0.25);
    pg_push_setup(push, &none, ",plpgsql,", false);
    CHECK_STR(pg_push_state(push), "");
    pg_push_free(push);
    profile_free(&none);
}

/* A store that keeps notifying faster than PG_PUSH_BUSY_RATE for two windows: UNLISTEN,
 * poll, listen again after PG_PUSH_RELISTEN_S, twice as long when it is still busy, back
 * to the short spell after a calm window. One burst alone is not busy. */
static int notify_for(pg_push *push, double from, double secs, double rate)
{
    int n = 0;
    for (double t = from; t < from + secs; t += 1.0 / rate, n++)
        pg_push_notified(push, "execution_status_changed", t);
    return n;
}

static void busy(const rd_profile *p)
{
    pg_push *push = listening(p, 0.25);
    size_t n = 0;
    for (int i = 0; i < 1000; i++)                          /* a burst, then calm */
        pg_push_notified(push, "execution_created", 1.0 + i * 0.0005);
    notify_for(push, 7.0, 10.0, 2.0);
    CHECK(pg_push_on(push));
    CHECK(pg_push_listen_due(push, &n) == NULL);

    notify_for(push, 20.0, 10.5, 100.0);                    /* 100 a second for 10 s */
    CHECK(!pg_push_on(push));
    CHECK(!pg_push_slows_poll(push));                       /* the poll at its own rate */
    CHECK_STR(pg_push_state(push), "off — busy store (100 notifications/s): polling, "
              "listening again after 30 s");
    const char *const *sql = pg_push_listen_due(push, &n);
    CHECK(sql && n == 1 && strcmp(sql[0], "UNLISTEN *") == 0);
    CHECK(pg_push_listen_due(push, &n) == NULL);
    CHECK(pg_push_notified(push, "execution_created", 31.0) < 0);   /* in flight: ignored */
    pg_push_polled(push, true, 40.0, 2.0);                  /* before the spell ends */
    CHECK(pg_push_listen_due(push, &n) == NULL);
    pg_push_polled(push, true, 61.0, 2.0);                  /* listen again */
    sql = pg_push_listen_due(push, &n);
    CHECK(sql && n == 2 && strcmp(sql[0], "LISTEN \"execution_created\"") == 0);
    PGresult *ok = PQmakeEmptyPGresult(NULL, PGRES_COMMAND_OK);
    pg_push_listened(push, ok);
    pg_push_listened(push, ok);
    CHECK(pg_push_on(push));
    notify_for(push, 62.0, 10.5, 50.0);                     /* still busy: a longer spell */
    CHECK_STR(pg_push_state(push), "off — busy store (50 notifications/s): polling, "
              "listening again after 60 s");
    pg_push_listen_due(push, &n);
    pg_push_polled(push, false, 200.0, 2.0);
    pg_push_listen_due(push, &n);
    pg_push_listened(push, ok);
    pg_push_listened(push, ok);
    notify_for(push, 201.0, 6.0, 1.0);                      /* a calm window */
    notify_for(push, 210.0, 16.0, 40.0);                    /* busy again: the short spell */
    CHECK_STR(pg_push_state(push), "off — busy store (40 notifications/s): polling, "
              "listening again after 30 s");
    PQclear(ok);
    pg_push_free(push);
}

int main(void)
{
    rd_profile p = prof(ATTUNE);
    burst(&p);
    busy(&p);
    silent(&p);
    off_reasons(&p);
    requires();
    profile_free(&p);
    return check_done("pg_push");
}
