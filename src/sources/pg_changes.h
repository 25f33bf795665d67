#pragma once
/*
 * The change probe and the index check (pg_changes.c): two things a refresh batch may carry
 * besides the profile's queries. pg_batch.c puts them in the batch; this file owns what
 * the probe remembers on the connection (the states it returned last time, the queries it
 * let the server skip, the sync group), builds their SQL and reads their answers.
 */
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "pg_qkind.h"
#include "pg_replica.h"

typedef struct pg_changes pg_changes;

pg_changes *pg_changes_new(void);
void pg_changes_free(pg_changes *c);
/* A new session: no skip list in it yet, the probe works again, the indexes are checked
 * again, and the next probe runs everything. */
void pg_changes_reconnect(pg_changes *c);
/* The next batch runs everything (the operator asked: not the probe's word). */
void pg_changes_force(pg_changes *c);
/* The next probe runs the queries of names ("counts executions"; NULL: every query)
 * whatever their state: a notification said their data changed (pg_push.c). */
void pg_changes_forget(pg_changes *c, const char *names);
/* The last probe's answer moved the state of one of the queries of names. */
bool pg_changes_moved(pg_changes *c, const char *names);

/* ---- building a batch (pg_batch.c) ---- */
/* The probe for this batch: false when the profile has none (body NULL) or it failed on
 * this connection. Else p[0..3] are its parameters ($1 last states, $2 force, $3 nonce,
 * $4 the group, filled in by pg_changes_group), valid until the batch is answered, and
 * *forced says whether everything runs. max_age: the profile's changes_max_age (or NULL). */
bool pg_changes_begin(pg_changes *c, const char *body, const char *max_age,
                      const char *p[4], bool *forced);
/* The probe statement for body, malloc'd. */
char *pg_changes_sql(const char *body);
/* SQL of query k wrapped so the server skips it when the probe found its data unchanged;
 * malloc'd. */
char *pg_changes_guard(const pg_changes *c, qkind k, const char *sql);
/* Query k is left out of this batch (its list not on screen): it keeps the state of its
 * last run. */
void pg_changes_leave_out(pg_changes *c, qkind k, bool left);
/* The guarded queries k[0..n) follow the probe and may share its sync: true when they do
 * (not for a forced run, nor after a query of a group failed on this connection). */
bool pg_changes_group(pg_changes *c, bool forced, const qkind *k, size_t n);
/* True once per connection: the index check is due. */
bool pg_changes_index_due(pg_changes *c);

/* ---- the answers (pg_apply.c) ---- */
/* Applies the probe's answer (before the other results of the batch); the replica's lag
 * rides in its row. */
void pg_changes_apply(pg_changes *c, pg_replica *rep, const PGresult *r, bool ok);
/* The guarded query k was skipped by the server (counted). */
bool pg_changes_skipped(pg_changes *c, qkind k);
/* A query of this batch failed (aborted: because another of its sync group did): the
 * queries get a sync each from now on when the batch had a group or aborted. */
void pg_changes_query_failed(pg_changes *c, bool aborted);
/* r is the probe's "every query of the group unchanged" answer. */
bool pg_changes_unchanged(const PGresult *r);

/* ---- the index check ---- */
/* The index check statement ($1: "query\ttable\tcol,col\n...") for the SQL of each query
 * kind (NULL where none); NULL when none documents an index. *param is malloc'd. */
const char *pg_indexes_sql(const char *const sql[Q_N], char **param);
/* The note its answer makes ("missing index: ..."), malloc'd; NULL when none is missing. */
char *pg_indexes_note(const PGresult *r);

/* sql with its parameters $1..$np written in as literals (NULL or a quoted string), so a
 * statement for fixed values needs no parameters (its one plan is kept); malloc'd, NULL
 * when the SQL cannot be read that far (an unterminated quote or comment). */
char *pg_sql_inline(const char *sql, int np, const char *const p[]);
