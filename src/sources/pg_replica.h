#pragma once
/* Reading from standbys (pg_replica.c): which host answered, standby or primary, its
 * replication lag, failover. Owned by the PostgreSQL source; it tells the model. */
#include <libpq-fe.h>

#include "../core/model.h"
#include "pg_conn.h"
#include "pg_secret.h"

typedef struct pg_replica pg_replica;

/* Columns the change probe adds (standby, lag_s): the lag read in the same statement. */
extern const char PG_REPLICA_COLUMNS[];

pg_replica *pg_replica_new(rd_model *m);
void pg_replica_free(pg_replica *r);
/* Connected: the host (redacted by sec), its role, a failover note. */
void pg_replica_connected(pg_replica *r, const pg_conn *c, const pg_secrets *sec);
void pg_replica_lost(pg_replica *r, const char *err);
/* The lag statement when this batch has no probe to carry it and it is due (standby,
 * every PG_REPLICA_EVERY_S); NULL otherwise. */
const char *pg_replica_sql(pg_replica *r);
/* The probe's row or the lag statement's: standby (bool), lag_s (seconds or NULL). */
void pg_replica_apply(pg_replica *r, const PGresult *res);
