#pragma once
/*
 * The PostgreSQL source's batches (pg_batch.c): building the next one from what the source
 * wants, sending it, and what the batch in flight carries (which query each result
 * answers, which ones the change probe guards). It also knows which statements are
 * prepared on the connection.
 */
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "pg_qkind.h"

struct pg_src;
typedef struct pg_batch pg_batch;

pg_batch *pg_batch_new(void);
void pg_batch_free(pg_batch *b);
/* A new session: no statement is prepared in it. */
void pg_batch_reconnect(pg_batch *b);
/* Builds the next batch (the setup batch until the setup is done, else a refresh with what
 * is wanted) and sends it. True when sent or when there was nothing to send; false when
 * the send failed (pg_conn_error says why: the connection is closed). */
bool pg_batch_send(struct pg_src *s);

/* The batch in flight: its n queries, query i's kind, whether it carries the guard. */
size_t pg_batch_n(const pg_batch *b);
qkind pg_batch_kind(const pg_batch *b, size_t i);
bool pg_batch_guarded(const pg_batch *b, size_t i);
bool pg_batch_carries(const pg_batch *b, qkind k);
/* The batch was answered (or the connection lost): nothing in flight. */
void pg_batch_answered(pg_batch *b);
/* Result i as it concerns prepared statements: true when it was a Q_PREPARE (recorded:
 * named from now on, or unnamed if it would not prepare); a statement that vanished (a
 * transaction pooler) means unnamed statements only from now on. */
bool pg_batch_result(pg_batch *b, size_t i, const PGresult *r);
/* A prepared statement vanished on this source (a transaction pooler). */
bool pg_batch_pooled(const pg_batch *b);
