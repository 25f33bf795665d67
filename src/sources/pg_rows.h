#pragma once
/*
 * PostgreSQL results → model rows, by the standard column names of docs/profiles.md.
 * Every value is read as text and parsed defensively: a missing column, NULL, garbage,
 * a negative or absurd number becomes "unknown" (-1 / 0 / NULL), never a crash. Strings
 * are capped (errors 4 KiB, payloads 64 KiB). Per row this computes retry eligibility
 * (retry.h, per the profile's semantics), the error fingerprint, the next retry ETA and,
 * for workers, the health classification (health.h).
 */
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "../core/config.h"
#include "../core/model.h"
#include "../core/retry.h"

typedef enum { SEM_UNKNOWN, SEM_ATTUNE, SEM_TASKER, SEM_OPENAGENTS, SEM_ALAKAI } pg_semantics;

pg_semantics pg_semantics_parse(const char *name);

typedef struct pg_row_ctx {
    pg_semantics sem;
    rd_health_cfg health;          /* thresholds: the config's, profile defaults applied */
    double now;
    rd_attune_backoff backoff;
} pg_row_ctx;

/* The query succeeded (rows or a command). */
bool pg_result_ok(const PGresult *r);

/* Text of column `col` in row i; NULL when the column is absent or the value NULL. */
const char *pg_text(const PGresult *r, int row, const char *col);

/* Each returns the number of rows converted and a newly allocated array (NULL when 0).
 * Rows without an id (or queue name) are skipped. */
size_t pg_rows_execs(const PGresult *r, const pg_row_ctx *x, rd_execution **out);
/* Row i as one execution into *e (its eligibility and fingerprint computed); false (e
 * zeroed) when the row has no id. */
bool pg_row_exec(const PGresult *r, int i, const pg_row_ctx *x, rd_execution *e);
size_t pg_rows_workers(const PGresult *r, const pg_row_ctx *x, rd_worker **out);
size_t pg_rows_queues(const PGresult *r, rd_queue **out);
size_t pg_rows_dlq(const PGresult *r, rd_dlq_entry **out);
size_t pg_rows_counts(const PGresult *r, rd_count **out);

/* Defensive parsers (exported for the source and the unit tests). */
bool pg_parse_long(const char *s, long lo, long hi, long *out);
bool pg_parse_double(const char *s, double *out);
double pg_parse_epoch(const char *s);          /* 0 when unknown or absurd */
int pg_parse_bool(const char *s);              /* 1, 0, or -1 unknown */
char *pg_dup_capped(const char *s, size_t cap); /* NULL in → NULL; cut on a UTF-8 boundary */

enum { PG_CAP_ID = 256, PG_CAP_NAME = 512, PG_CAP_REASON = 200, PG_CAP_ERROR = 4096,
       PG_CAP_PAYLOAD = 65536 };
