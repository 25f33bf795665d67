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
#include "pg_priv.h"

#include "../core/xalloc.h"
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

static void publish(pg_src *s, bool lag_known, double lag)
{
    bool multi = s->rep_hosts > 1;
    model_source_replica(model(s), SRC_NAME, multi ? s->rep_host : NULL,
                         s->rep_standby ? "standby" : multi ? "primary" : NULL,
                         s->rep_standby && lag_known ? lag : -1);
}

void pg_replica_connected(pg_src *s)
{
    s->rep_host[0] = '\0';
    pg_conn_peer(s->conn, s->rep_host, sizeof s->rep_host, &s->rep_hosts);
    char named[sizeof s->rep_host];
    pg_redact(s, s->rep_host, named, sizeof named);
    memcpy(s->rep_host, named, sizeof named);
    const char *hs = pg_conn_param(s->conn, "in_hot_standby");
    s->rep_standby = hs && strcmp(hs, "on") == 0;
    s->rep_read_at = 0;
    publish(s, false, 0);
    if (s->rep_lost[0] && strcmp(s->rep_lost, s->rep_host) != 0) {
        /* cut to the model's field when stored */
        char *what = xasprintf("from %s (%s) to %s %s", s->rep_lost, s->rep_why, s->rep_host,
                               s->rep_standby ? "standby" : "primary");
        model_source_failover(model(s), SRC_NAME, what, now_s());
        free(what);
    }
    s->rep_lost[0] = '\0';
}

void pg_replica_lost(pg_src *s, const char *err)
{
    if (!s->rep_host[0])
        return;                   /* a retry failing again: the first loss is the one */
    snprintf(s->rep_lost, sizeof s->rep_lost, "%s", s->rep_host);
    /* the first line of libpq's message, enough to say why */
    snprintf(s->rep_why, sizeof s->rep_why, "%.*s", (int)strcspn(err ? err : "", "\n"),
             err ? err : "");
    s->rep_host[0] = '\0';
}

const char *pg_replica_sql(pg_src *s)
{
    if (!s->rep_standby || now_s() - s->rep_read_at < PG_REPLICA_EVERY_S)
        return NULL;
    s->rep_read_at = now_s();
    return REPLICA_SQL;
}

void pg_replica_apply(pg_src *s, const PGresult *r)
{
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) < 1)
        return;
    const char *sb = pg_text(r, 0, "standby"), *lag = pg_text(r, 0, "lag_s");
    if (!sb)
        return;                   /* a probe without the columns */
    s->rep_standby = strcmp(sb, "t") == 0;
    s->rep_read_at = now_s();
    char *end = NULL;
    double v = lag ? strtod(lag, &end) : -1;
    publish(s, lag && end && end != lag && v >= 0, v);
}
