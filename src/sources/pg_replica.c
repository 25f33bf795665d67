/*
 * Reading from standbys (docs/sources.md): a conninfo may name several hosts
 * (`host=standby,primary port=5433,5432 target_session_attrs=prefer-standby`); libpq picks
 * one, and this file tells the model which host answered, whether it is a standby (the
 * server reports `in_hot_standby` at connect, PostgreSQL 14+; the probe confirms it), its
 * replication lag, and a failover when the host that answers now is not the one lost.
 *
 * The lag costs no round trip: the change probe carries it in two more columns of its one
 * row; a profile without a probe gets one small statement in the refresh batch (the same
 * round trip) every PG_REPLICA_EVERY_S on a standby.
 *
 * Lag: 0 when the WAL receiver runs and everything received is replayed; otherwise the age
 * of the last replayed transaction (grows while the primary is silent or unreachable);
 * unknown (NULL) before any transaction was replayed.
 */
#include "pg_replica.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "pg_qkind.h"
#include "pg_rows.h"

enum { PG_REPLICA_EVERY_S = 10 };

#define LAG_SQL \
    "CASE WHEN NOT pg_is_in_recovery() THEN NULL\n" \
    "     WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn()\n" \
    "      AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver) THEN 0::float8\n" \
    "     ELSE greatest(0, extract(epoch FROM now() - pg_last_xact_replay_timestamp()))::float8\n" \
    "END"

const char PG_REPLICA_COLUMNS[] = ",\n       pg_is_in_recovery() AS standby,\n       " LAG_SQL
                                  " AS lag_s";

static const char REPLICA_SQL[] = "SELECT pg_is_in_recovery() AS standby, " LAG_SQL " AS lag_s";

struct pg_replica {
    rd_model *model;
    /* the host that answered on this connection, the one lost before (and why) until
     * another answers, when the lag was last read */
    char host[96], lost[96], why[120];
    int hosts;                    /* hosts the conninfo names */
    bool standby;
    double read_at;
};

pg_replica *pg_replica_new(rd_model *m)
{
    pg_replica *r = xcalloc(1, sizeof *r);
    r->model = m;
    return r;
}

void pg_replica_free(pg_replica *r) { free(r); }

static void publish(pg_replica *s, bool lag_known, double lag)
{
    bool multi = s->hosts > 1;
    model_source_replica(s->model, SRC_NAME, multi ? s->host : NULL,
                         s->standby ? "standby" : multi ? "primary" : NULL,
                         s->standby && lag_known ? lag : -1);
}

void pg_replica_connected(pg_replica *s, const pg_conn *c, const pg_secrets *sec)
{
    s->host[0] = '\0';
    pg_conn_peer(c, s->host, sizeof s->host, &s->hosts);
    char named[sizeof s->host];
    pg_secrets_redact(sec, s->host, named, sizeof named);
    memcpy(s->host, named, sizeof named);
    const char *hs = pg_conn_param(c, "in_hot_standby");
    s->standby = hs && strcmp(hs, "on") == 0;
    s->read_at = 0;
    publish(s, false, 0);
    if (s->lost[0] && strcmp(s->lost, s->host) != 0) {
        /* cut to the model's field when stored */
        char *what = xasprintf("from %s (%s) to %s %s", s->lost, s->why, s->host,
                               s->standby ? "standby" : "primary");
        model_source_failover(s->model, SRC_NAME, what, clock_wall());
        free(what);
    }
    s->lost[0] = '\0';
}

void pg_replica_lost(pg_replica *s, const char *err)
{
    if (!s->host[0])
        return;                   /* a retry failing again: the first loss is the one */
    snprintf(s->lost, sizeof s->lost, "%s", s->host);
    /* the first line of libpq's message, enough to say why */
    snprintf(s->why, sizeof s->why, "%.*s", (int)strcspn(err ? err : "", "\n"),
             err ? err : "");
    s->host[0] = '\0';
}

const char *pg_replica_sql(pg_replica *s)
{
    if (!s->standby || clock_wall() - s->read_at < PG_REPLICA_EVERY_S)
        return NULL;
    s->read_at = clock_wall();
    return REPLICA_SQL;
}

void pg_replica_apply(pg_replica *s, const PGresult *r)
{
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) < 1)
        return;
    const char *sb = pg_text(r, 0, "standby"), *lag = pg_text(r, 0, "lag_s");
    if (!sb)
        return;                   /* a probe without the columns */
    s->standby = strcmp(sb, "t") == 0;
    s->read_at = clock_wall();
    char *end = NULL;
    double v = lag ? strtod(lag, &end) : -1;
    publish(s, lag && end && end != lag && v >= 0, v);
}
