#pragma once
/*
 * The error groups of a PostgreSQL store (the profile's [query groups]): its rows are the
 * distinct raw errors of the window, each with the columns of an executions row (error,
 * name, status, the retry columns: eligibility by the system's own rule, pg_rows.c) and
 * its tally: `n` failures, `recent` of them within the trend's interval, `first_at` and
 * `last_at` (epoch), and `capped` (more failures in the window than $2). Normalized to
 * fingerprints and merged in C (storegroups.h): one definition of a fingerprint.
 */
#include <libpq-fe.h>

#include "../core/storegroups.h"
#include "pg_rows.h"

/* base: the window's baseline (taken; NULL none). */
rd_sgroups *pg_groups_read(const PGresult *r, const pg_row_ctx *x, double window_s, long cap,
                           so_base *base);
/* The window's baseline ([query groups_window], standout.h): one row per dimension and
 * value with `n` executions of the window; `total` (the window's executions read) and
 * `capped` (more than the bound) on every row; a worker's row may carry its `host`. A
 * dimension named by a row is recorded by the store, even when every value is NULL. */
so_base *pg_groups_window_read(const PGresult *r);
