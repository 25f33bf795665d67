# Attune era 1 (phase-3 code: retry metadata in execution.config JSON, usually in public);
# names are unqualified: the source sets search_path = <schema>, public.
# Loaded by attune.profile's variant query; usable directly as profile = attune-era1.
# Retry fields: the column value when it is not the default, else the config JSON value.
# Standard columns and parameters: docs/profiles.md.
[profile]
name = attune-era1
store = postgresql
semantics = attune
dlq_source = broker
actions_from = attune         # action routes: attune.profile (they do not depend on the era)
schema = attune
# Attune's migrations notify these on every insert and status change of an execution
# (docs/sources.md "Push"); a notification refreshes the lists on screen, running these
# queries whatever the change probe says
listen = execution_created execution_status_changed
listen_refresh = counts executions failing
first_page_plan = cached      # the first executions page (no filter) keeps one generic plan:
                              # checked at 1M rows (an index walk of 101 rows); see
                              # docs/profiles.md, "Change probe"

[query changes optional]
-- The change probe (docs/profiles.md, "Change probe"): per query, a state that moves
-- whenever its answer may; a query whose state is the one this console saw last time is
-- skipped by the server. On a primary: each table's write counters (the writing sessions
-- flush them within about a second), its file node and row estimate (TRUNCATE, ANALYZE);
-- on a standby the counters stand still, so the replayed WAL position stands in. A NULL
-- state (track_counts off) runs the query. Everything runs anyway every changes_max_age.
WITH r AS (SELECT c.relname::text AS rel,
                  CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()::text
                       WHEN current_setting('track_counts') = 'on'
                       THEN concat_ws('/', c.relfilenode, c.reltuples,
                                      pg_stat_get_tuples_inserted(c.oid)
                                      + pg_stat_get_tuples_updated(c.oid)
                                      + pg_stat_get_tuples_deleted(c.oid)) END AS state
             FROM pg_class c
            WHERE c.oid IN (to_regclass('execution'), to_regclass('worker'))),
     e AS (SELECT (SELECT state FROM r WHERE rel = 'execution') AS ex,
                  (SELECT state FROM r WHERE rel = 'worker') AS wk)
SELECT v.name, v.state
  FROM e, LATERAL (VALUES ('counts', e.ex), ('executions', e.ex),
                          ('failing', e.ex || ' ' || floor(extract(epoch FROM now()) / 60)),
                          ('workers', e.wk || ' ' || e.ex)) v(name, state)

[query counts]
-- Counts by status. Every status present is found by a skip scan of the status index (one
-- probe per distinct value), so a rare status is never missing. Each is counted exactly
-- (capped at 100,000, shown "100000+"), except a large terminal status of a big table,
-- which comes from the planner's statistics and is marked ≈. Live statuses (requested,
-- scheduling, scheduled, running, canceling) are therefore exact at any table size.
-- uses index: execution (status)
-- The statistics row is found by name (pg_stats over the catalogs' own indexes); joined
-- on pg_class instead, it read the whole of pg_attribute.
WITH RECURSIVE d(s) AS (
  SELECT min(status) FROM execution
  UNION ALL
  SELECT (SELECT min(e.status) FROM execution e WHERE e.status > d.s)
    FROM d WHERE d.s IS NOT NULL),
est AS (
  SELECT u.v AS status, round(u.f * c.reltuples) AS count
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_stats s ON s.schemaname = n.nspname
                   AND s.tablename = 'execution'
                   AND s.attname = 'status',
         unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS u(v, f)
   WHERE c.oid = 'execution'::regclass AND c.reltuples >= 50000
     AND u.v IN ('completed', 'failed', 'cancelled', 'timeout', 'abandoned')
     AND u.f * c.reltuples >= 2000)
SELECT d.s::text AS status,
       COALESCE(est.count, least(x.n, 100000)) AS count,
       est.count IS NOT NULL AS estimated,
       est.count IS NULL AND x.n > 100000 AS capped
  FROM d
  LEFT JOIN est ON est.status = d.s::text
  LEFT JOIN LATERAL (SELECT count(*) AS n
                       FROM (SELECT 1 FROM execution e WHERE e.status = d.s LIMIT 100001) l
                      WHERE est.count IS NULL) x ON true
 WHERE d.s IS NOT NULL

[query failing optional]
-- The whole-store figures of the fleet, the overview and the history (docs/profiles.md,
-- "failing"), in the refresh's round trip:
-- per_min: failures per minute over the last 5 minutes by when they FAILED (updated: the
--   trigger sets it when the status changes), not when they were created; capped at
--   10,000 failures.
-- retry_eligible: failed executions with retries left (the column when set, else the
--   config JSON: the executions query's rule) that no later attempt supersedes (the
--   executions query's `superseded`), told apart while at most 1,000 have retries left;
--   beyond that their count stands, an upper bound (retry_eligible_upper). Era 1 has no
--   index of the eligible failures: the failed ones are read from the status index, at
--   most 100,000 (retry_eligible_capped: more failures than that; both flags set, shown
--   "<=100000+": how many of those a later attempt supersedes is not known).
-- oldest_queued_at: the created time of the oldest requested, scheduling or scheduled
--   execution (NULL: none queued), one probe of the (status, created) index per status.
-- Measured the same way (1M executions, 20,000 fresh failures, 6,000 with retries left):
-- about 350 buffers, 40-65 ms on the loaded test machine (every failure's config read).
-- uses index: execution (status)
-- uses index: execution (status, created)
-- uses index: execution (original_execution)
WITH f AS (SELECT count(*) AS n
             FROM (SELECT 1 FROM execution
                    WHERE status = 'failed' AND updated > now() - interval '5 minutes'
                    LIMIT 10001) s),
     x AS MATERIALIZED (
       SELECT x.id, x.original_execution, x.retry_count AS rc0,
              COALESCE(NULLIF(x.retry_count, 0), CASE WHEN x.config->>'retry_count' ~ '^[0-9]{1,9}$' THEN (x.config->>'retry_count')::int END, x.retry_count) AS rc, COALESCE(NULLIF(x.max_retries, 0), CASE WHEN x.config->>'max_retries' ~ '^[0-9]{1,9}$' THEN (x.config->>'max_retries')::int END, x.max_retries) AS mr
         FROM execution x
        WHERE x.status = 'failed'
        LIMIT 100001),
     c AS (SELECT count(*) FILTER (WHERE x.rc < COALESCE(x.mr, 0)) AS n,
                  count(*) > 100000 AS capped
             FROM x),
     e AS (SELECT c.n, c.capped,
                  CASE WHEN c.n <= 1000 AND NOT c.capped THEN
                    (SELECT count(*) FROM x
                      WHERE x.rc < COALESCE(x.mr, 0)
                        AND NOT EXISTS (SELECT 1 FROM execution r
                                         WHERE (r.config ? 'retry_of' AND (r.config->>'retry_of')::bigint = x.id)
                                            OR (r.original_execution = x.id AND r.retry_count > x.rc0)
                                            OR (r.original_execution = x.original_execution
                                                AND r.retry_count > x.rc0))) END AS exact
             FROM c)
SELECT f.n / 5.0 AS per_min,
       COALESCE(e.exact, e.n) AS retry_eligible,
       e.capped AS retry_eligible_capped,
       e.exact IS NULL AS retry_eligible_upper,
       extract(epoch FROM least(
           (SELECT min(created) FROM execution WHERE status = 'requested'),
           (SELECT min(created) FROM execution WHERE status = 'scheduling'),
           (SELECT min(created) FROM execution WHERE status = 'scheduled'))) AS oldest_queued_at
  FROM f, e

[query executions]
-- $1 start sort_key (NULL = newest) $2 start id $3 status $4 text $5 limit $6 row budget
-- The filters are applied to the newest $6 rows from the start key (the console sends the
-- page size + 1 without a filter, 5,000 with one); the row that ends that window comes
-- back as scan_end = true when fewer than $5 matched, so a filter with no match reads $6
-- rows, not the table, and the console offers to go on further back. The window is a plain
-- walk of the (created, id) index: no filter inside it, so no plan can turn it into a
-- scan of the table.
-- uses index: execution (created, id)
-- uses index: execution (original_execution)
SELECT e.id::text AS id,
       e.parent::text AS parent_id,
       e.action_ref AS name,
       e.status::text AS status,
       COALESCE(NULLIF(e.retry_count, 0), CASE WHEN e.config->>'retry_count' ~ '^[0-9]{1,9}$' THEN (e.config->>'retry_count')::int END, e.retry_count) AS retry_count,
       COALESCE(NULLIF(e.max_retries, 0), CASE WHEN e.config->>'max_retries' ~ '^[0-9]{1,9}$' THEN (e.config->>'max_retries')::int END, e.max_retries) AS max_retries,
       COALESCE(e.original_execution, CASE WHEN e.config->>'original_execution' ~ '^[0-9]{1,18}$' THEN (e.config->>'original_execution')::bigint END)::text AS chain_root,
       (CASE WHEN e.config->>'retry_of' ~ '^[0-9]{1,18}$' THEN (e.config->>'retry_of')::bigint END)::text AS retry_of,
       left(COALESCE(NULLIF(e.retry_reason, ''), e.config->>'retry_reason'), 200) AS reason,
       left(COALESCE(e.result->>'error', e.result->>'message'), 4096) AS error,
       NULL::text AS worker,
       extract(epoch FROM e.created) AS created_at,
       extract(epoch FROM e.updated) AS updated_at,
       CASE WHEN e.status IN ('completed', 'failed', 'cancelled', 'timeout', 'abandoned')
            THEN extract(epoch FROM e.updated) END AS finished_at,
       left(e.config->>'retry_at', 64) AS retry_at,
       EXISTS (SELECT 1 FROM execution r
                WHERE (r.config ? 'retry_of' AND (r.config->>'retry_of')::bigint = e.id)
                   OR (r.original_execution = e.id AND r.retry_count > e.retry_count)
                   OR (r.original_execution = e.original_execution
                       AND r.retry_count > e.retry_count)) AS superseded,
       e.created::text AS sort_key,
       e.rn = $6::int AS scan_end
  FROM (SELECT x.*, row_number() OVER (ORDER BY x.created DESC, x.id DESC) AS rn
          FROM execution x
         WHERE ($1::text IS NULL OR (x.created, x.id) <= ($1::timestamptz, $2::bigint))
         ORDER BY x.created DESC, x.id DESC
         LIMIT $6::int) e
 WHERE (e.rn < $6::int
        AND ($3::text IS NULL OR e.status::text = lower($3))
        AND ($4::text IS NULL OR strpos(lower(e.id::text || ' ' || e.action_ref || ' '
            || COALESCE(e.result->>'error', e.result->>'message', '')), lower($4)) > 0))
    OR e.rn = $6::int
 ORDER BY e.created DESC, e.id DESC
 LIMIT $5::int

[query by_status optional]
-- A status's executions, or every failure's (a group's members, a selection), read as a set
-- by the status's own index (docs/error-groups.md, "Selections"): $1 start sort_key (NULL =
-- newest) $2 start id $3 status (NULL = failed, timeout and abandoned: what a group holds;
-- it takes the status column's type, a constant when planned) $4 limit $5 window in
-- seconds (NULL = none). The text and the error fingerprint are kept in C, a page at a time.
-- The plan cannot depend on the planner's statistics (rows written a moment ago, no
-- ANALYZE since, make a recent window look nearly empty, and then a walk of the (created)
-- index filtering the status looks cheapest: every row of the window read per page). So
-- each status is read in two steps that no other index can serve:
--   1. the newest $4 + 1 distinct `created` of the status in the window, from the page's
--      start: columns of the (status, created DESC) index only, so an index-only range
--      scan of it (the (created) index would need the table's rows to know the status);
--   2. those rows, each by an equality probe on (status, created): one index probe per
--      value, whatever index the planner picks for it (a LATERAL subquery with OFFSET 0
--      cannot become a hash join over a scan of the whole table, which the planner chose
--      for a prepared statement at 60,000 rows).
-- The statuses are merged newest first. tests/integration/test_selection_plan.py gates the
-- whole plan with fresh rows; tests/bench/bench_select.py measures it at 1M.
-- uses index: execution (status, created)
-- uses index: execution (original_execution)
SELECT e.id::text AS id,
       e.parent::text AS parent_id,
       e.action_ref AS name,
       e.status::text AS status,
       COALESCE(NULLIF(e.retry_count, 0), CASE WHEN e.config->>'retry_count' ~ '^[0-9]{1,9}$' THEN (e.config->>'retry_count')::int END, e.retry_count) AS retry_count,
       COALESCE(NULLIF(e.max_retries, 0), CASE WHEN e.config->>'max_retries' ~ '^[0-9]{1,9}$' THEN (e.config->>'max_retries')::int END, e.max_retries) AS max_retries,
       COALESCE(e.original_execution, CASE WHEN e.config->>'original_execution' ~ '^[0-9]{1,18}$' THEN (e.config->>'original_execution')::bigint END)::text AS chain_root,
       (CASE WHEN e.config->>'retry_of' ~ '^[0-9]{1,18}$' THEN (e.config->>'retry_of')::bigint END)::text AS retry_of,
       left(COALESCE(NULLIF(e.retry_reason, ''), e.config->>'retry_reason'), 200) AS reason,
       left(COALESCE(e.result->>'error', e.result->>'message'), 4096) AS error,
       NULL::text AS worker,
       extract(epoch FROM e.created) AS created_at,
       extract(epoch FROM e.updated) AS updated_at,
       CASE WHEN e.status IN ('completed', 'failed', 'cancelled', 'timeout', 'abandoned')
            THEN extract(epoch FROM e.updated) END AS finished_at,
       left(e.config->>'retry_at', 64) AS retry_at,
       EXISTS (SELECT 1 FROM execution r
                WHERE (r.config ? 'retry_of' AND (r.config->>'retry_of')::bigint = e.id)
                   OR (r.original_execution = e.id AND r.retry_count > e.retry_count)
                   OR (r.original_execution = e.original_execution
                       AND r.retry_count > e.retry_count)) AS superseded,
       e.created::text AS sort_key
  FROM (  (SELECT x.*
     FROM (SELECT DISTINCT k.status, k.created
             FROM execution k
            WHERE k.status = COALESCE($3, 'failed'::execution_status_enum)
              AND ($5::float8 IS NULL OR k.created >= now() - make_interval(secs => $5::float8))
              AND ($1::text IS NULL OR k.created <= $1::timestamptz)
            ORDER BY k.created DESC
            LIMIT $4::int + 1) t
     CROSS JOIN LATERAL (SELECT * FROM execution y
                          WHERE y.status = t.status AND y.created = t.created
                         OFFSET 0) x
    WHERE ($1::text IS NULL OR (x.created, x.id) <= ($1::timestamptz, $2::bigint))
    ORDER BY x.created DESC, x.id DESC
    LIMIT $4::int)
        UNION ALL
  (SELECT x.*
     FROM (SELECT DISTINCT k.status, k.created
             FROM execution k
            WHERE $3 IS NULL AND k.status = 'timeout'
              AND ($5::float8 IS NULL OR k.created >= now() - make_interval(secs => $5::float8))
              AND ($1::text IS NULL OR k.created <= $1::timestamptz)
            ORDER BY k.created DESC
            LIMIT $4::int + 1) t
     CROSS JOIN LATERAL (SELECT * FROM execution y
                          WHERE y.status = t.status AND y.created = t.created
                         OFFSET 0) x
    WHERE ($1::text IS NULL OR (x.created, x.id) <= ($1::timestamptz, $2::bigint))
    ORDER BY x.created DESC, x.id DESC
    LIMIT $4::int)
        UNION ALL
  (SELECT x.*
     FROM (SELECT DISTINCT k.status, k.created
             FROM execution k
            WHERE $3 IS NULL AND k.status = 'abandoned'
              AND ($5::float8 IS NULL OR k.created >= now() - make_interval(secs => $5::float8))
              AND ($1::text IS NULL OR k.created <= $1::timestamptz)
            ORDER BY k.created DESC
            LIMIT $4::int + 1) t
     CROSS JOIN LATERAL (SELECT * FROM execution y
                          WHERE y.status = t.status AND y.created = t.created
                         OFFSET 0) x
    WHERE ($1::text IS NULL OR (x.created, x.id) <= ($1::timestamptz, $2::bigint))
    ORDER BY x.created DESC, x.id DESC
    LIMIT $4::int)) e
 ORDER BY e.created DESC, e.id DESC
 LIMIT $4::int

[query groups optional]
-- Error groups across the store (docs/error-groups.md): $1 the window in seconds, $2 the
-- failures read at most (the newest of the window). One row per distinct raw error (and
-- action, status, retry columns: eligibility is the system's own rule, in C) with its
-- tally; the fingerprints are made in C (one definition). A failure is failed, timeout or
-- abandoned, created in the window; first/last seen are its updated time (when it ended).
-- Each status is a range of Attune's own (status, created) index, newest first, read up
-- to $2 rows (timeout and abandoned together: $2); `capped` says a read reached its
-- bound. Costs, measured at 1M executions with 20,000 failures in the hour
-- (tests/bench/README.md): the reads carry no JSON document past the row they come from
-- (the materialized rows are the few columns grouped); the superseded probe is one
-- index probe per retry-eligible failure; the error text is the first grouping key and
-- grouped in the "C" collation (a sort whose first key is a shared action name compares
-- every later key of every pair: twice the time).
-- uses index: execution (status, created)
WITH f AS MATERIALIZED (
  (SELECT 1 AS b, e.id, e.updated, e.action_ref COLLATE "C" AS name, e.status::text COLLATE "C" AS status,
          COALESCE(NULLIF(e.retry_count, 0), CASE WHEN e.config->>'retry_count' ~ '^[0-9]{1,9}$' THEN (e.config->>'retry_count')::int END, e.retry_count) AS retry_count,
          COALESCE(NULLIF(e.max_retries, 0), CASE WHEN e.config->>'max_retries' ~ '^[0-9]{1,9}$' THEN (e.config->>'max_retries')::int END, e.max_retries) AS max_retries,
          left(COALESCE(e.result->>'error', e.result->>'message'), 4096) COLLATE "C" AS error,
          COALESCE(e.retry_count, 0) < COALESCE(e.max_retries, 0)
            AND EXISTS (SELECT 1 FROM execution r
                         WHERE (r.config ? 'retry_of' AND (r.config->>'retry_of')::bigint = e.id)
                            OR (r.original_execution = e.id AND r.retry_count > e.retry_count)
                            OR (r.original_execution = e.original_execution
                                AND r.retry_count > e.retry_count)) AS superseded
     FROM execution e
    WHERE e.status = 'failed' AND e.created > now() - make_interval(secs => $1::float8)
    ORDER BY e.created DESC
    LIMIT $2::int)
  UNION ALL
  (SELECT 2 AS b, t.id, t.updated, t.action_ref COLLATE "C", t.status::text COLLATE "C",
          COALESCE(NULLIF(t.retry_count, 0), CASE WHEN t.config->>'retry_count' ~ '^[0-9]{1,9}$' THEN (t.config->>'retry_count')::int END, t.retry_count),
          COALESCE(NULLIF(t.max_retries, 0), CASE WHEN t.config->>'max_retries' ~ '^[0-9]{1,9}$' THEN (t.config->>'max_retries')::int END, t.max_retries),
          left(COALESCE(t.result->>'error', t.result->>'message'), 4096) COLLATE "C", false
     FROM ((SELECT * FROM execution e
             WHERE e.status = 'timeout' AND e.created > now() - make_interval(secs => $1::float8)
             ORDER BY e.created DESC LIMIT $2::int)
           UNION ALL
           (SELECT * FROM execution e
             WHERE e.status = 'abandoned' AND e.created > now() - make_interval(secs => $1::float8)
             ORDER BY e.created DESC LIMIT $2::int)
           ORDER BY created DESC LIMIT $2::int) t))
SELECT min(f.id)::text AS id, f.name, f.status, f.retry_count, f.max_retries, f.error,
       f.superseded, count(*) AS n,
       count(*) FILTER (WHERE f.updated > now() - interval '15 minutes') AS recent,
       extract(epoch FROM min(f.updated)) AS first_at,
       extract(epoch FROM max(f.updated)) AS last_at,
       (SELECT count(*) FILTER (WHERE c.b = 1) >= $2::int
               OR count(*) FILTER (WHERE c.b = 2) >= $2::int FROM f c) AS capped
  FROM f
 GROUP BY f.error, f.name, f.status, f.retry_count, f.max_retries, f.superseded

[query groups_window optional]
-- What stands out about each error group (docs/error-groups.md): the window's baseline,
-- every execution created in the window ($1 seconds, the newest $2 at most) by action and
-- by attempt (retry_count + 1, the config JSON's where the column is the default). Era 1
-- records no worker on an execution: the dimension is not named, so the console says it
-- is not recorded. `total` the executions read, `capped` when the bound was reached.
-- uses index: execution (created)
WITH w AS MATERIALIZED (
  SELECT e.action_ref COLLATE "C" AS action,
         COALESCE(NULLIF(e.retry_count, 0), CASE WHEN e.config->>'retry_count' ~ '^[0-9]{1,9}$' THEN (e.config->>'retry_count')::int END, e.retry_count) + 1 AS attempt
    FROM execution e
   WHERE e.created > now() - make_interval(secs => $1::float8)
   ORDER BY e.created DESC
   LIMIT $2::int),
     t AS (SELECT count(*) AS total FROM w)
SELECT CASE WHEN GROUPING(w.action) = 0 THEN 'action' ELSE 'attempt' END AS dimension,
       CASE WHEN GROUPING(w.action) = 0 THEN w.action ELSE w.attempt::text END AS value,
       count(*) AS n,
       (SELECT total FROM t) AS total, (SELECT total FROM t) >= $2::int AS capped
  FROM w
 GROUP BY GROUPING SETS ((w.action), (w.attempt))

[query execution]
-- $1 id: one row, for jumping to it
-- uses index: execution (id)
SELECT e.id::text AS id,
       e.parent::text AS parent_id,
       e.action_ref AS name,
       e.status::text AS status,
       COALESCE(NULLIF(e.retry_count, 0), CASE WHEN e.config->>'retry_count' ~ '^[0-9]{1,9}$' THEN (e.config->>'retry_count')::int END, e.retry_count) AS retry_count,
       COALESCE(NULLIF(e.max_retries, 0), CASE WHEN e.config->>'max_retries' ~ '^[0-9]{1,9}$' THEN (e.config->>'max_retries')::int END, e.max_retries) AS max_retries,
       COALESCE(e.original_execution, CASE WHEN e.config->>'original_execution' ~ '^[0-9]{1,18}$' THEN (e.config->>'original_execution')::bigint END)::text AS chain_root,
       (CASE WHEN e.config->>'retry_of' ~ '^[0-9]{1,18}$' THEN (e.config->>'retry_of')::bigint END)::text AS retry_of,
       left(COALESCE(NULLIF(e.retry_reason, ''), e.config->>'retry_reason'), 200) AS reason,
       left(COALESCE(e.result->>'error', e.result->>'message'), 4096) AS error,
       NULL::text AS worker,
       extract(epoch FROM e.created) AS created_at,
       extract(epoch FROM e.updated) AS updated_at,
       CASE WHEN e.status IN ('completed', 'failed', 'cancelled', 'timeout', 'abandoned')
            THEN extract(epoch FROM e.updated) END AS finished_at,
       left(e.config->>'retry_at', 64) AS retry_at,
       EXISTS (SELECT 1 FROM execution r
                WHERE (r.config ? 'retry_of' AND (r.config->>'retry_of')::bigint = e.id)
                   OR (r.original_execution = e.id AND r.retry_count > e.retry_count)
                   OR (r.original_execution = e.original_execution
                       AND r.retry_count > e.retry_count)) AS superseded,
       e.created::text AS sort_key
  FROM execution e
 WHERE e.id = CASE WHEN $1 ~ '^[0-9]{1,18}$' THEN $1::bigint END

[query recheck optional]
-- $1 the ids of a batch's items about to be sent (text[], one page of 500): each one's
-- row as [query execution] reads it (the same columns, superseded included), so the
-- send-time guard (issue 35) judges it by the executions list's own rule. One query a
-- page, never one an item; an id the store no longer holds has no row.
-- uses index: execution (id)
SELECT e.id::text AS id,
       e.parent::text AS parent_id,
       e.action_ref AS name,
       e.status::text AS status,
       COALESCE(NULLIF(e.retry_count, 0), CASE WHEN e.config->>'retry_count' ~ '^[0-9]{1,9}$' THEN (e.config->>'retry_count')::int END, e.retry_count) AS retry_count,
       COALESCE(NULLIF(e.max_retries, 0), CASE WHEN e.config->>'max_retries' ~ '^[0-9]{1,9}$' THEN (e.config->>'max_retries')::int END, e.max_retries) AS max_retries,
       COALESCE(e.original_execution, CASE WHEN e.config->>'original_execution' ~ '^[0-9]{1,18}$' THEN (e.config->>'original_execution')::bigint END)::text AS chain_root,
       (CASE WHEN e.config->>'retry_of' ~ '^[0-9]{1,18}$' THEN (e.config->>'retry_of')::bigint END)::text AS retry_of,
       left(COALESCE(NULLIF(e.retry_reason, ''), e.config->>'retry_reason'), 200) AS reason,
       left(COALESCE(e.result->>'error', e.result->>'message'), 4096) AS error,
       NULL::text AS worker,
       extract(epoch FROM e.created) AS created_at,
       extract(epoch FROM e.updated) AS updated_at,
       CASE WHEN e.status IN ('completed', 'failed', 'cancelled', 'timeout', 'abandoned')
            THEN extract(epoch FROM e.updated) END AS finished_at,
       left(e.config->>'retry_at', 64) AS retry_at,
       EXISTS (SELECT 1 FROM execution r
                WHERE (r.config ? 'retry_of' AND (r.config->>'retry_of')::bigint = e.id)
                   OR (r.original_execution = e.id AND r.retry_count > e.retry_count)
                   OR (r.original_execution = e.original_execution
                       AND r.retry_count > e.retry_count)) AS superseded,
       e.created::text AS sort_key
  FROM execution e
 WHERE e.id = ANY (ARRAY(SELECT x::bigint FROM unnest($1::text[]) x WHERE x ~ '^[0-9]{1,18}$'))

[query execution_detail optional]
-- $1 id: one execution in full, read when the detail pane opens (never on a poll): the
-- whole error and its backtrace, the parameters (config: env_vars is never read, it holds
-- secrets) and the result as JSON, every timestamp, the worker, the chain position.
-- uses index: execution (id)
-- uses index: execution (original_execution)
SELECT e.id::text AS id,
       e.action_ref AS name,
       e.status::text AS status,
       NULL::text AS worker,
       COALESCE(NULLIF(e.retry_count, 0), CASE WHEN e.config->>'retry_count' ~ '^[0-9]{1,9}$' THEN (e.config->>'retry_count')::int END, e.retry_count) + 1 AS attempt,
       COALESCE(NULLIF(e.max_retries, 0), CASE WHEN e.config->>'max_retries' ~ '^[0-9]{1,9}$' THEN (e.config->>'max_retries')::int END, e.max_retries) + 1 AS max_attempts,
       r.root::text AS chain_root,
       (SELECT count(*) FROM execution c WHERE c.id = r.root OR c.original_execution = r.root) AS chain_length,
       e.parent::text AS parent_id,
       left(COALESCE(NULLIF(e.retry_reason, ''), e.config->>'retry_reason'), 2000) AS reason,
       left(COALESCE(e.result->>'error', e.result->>'message'), 65536) AS error,
       left(COALESCE(e.result->>'backtrace', e.result->>'traceback', e.result->>'stack_trace',
                     e.result->>'stack'), 65536) AS backtrace,
       left(e.config::text, 262144) AS params,
       left(e.result::text, 262144) AS result,
       extract(epoch FROM e.created) AS created_at,
       NULL::double precision AS started_at,
       extract(epoch FROM e.updated) AS updated_at,
       CASE WHEN e.status IN ('completed', 'failed', 'cancelled', 'timeout', 'abandoned')
            THEN extract(epoch FROM e.updated) END AS finished_at
  FROM execution e,
       LATERAL (SELECT COALESCE(e.original_execution, CASE WHEN e.config->>'original_execution' ~ '^[0-9]{1,18}$' THEN (e.config->>'original_execution')::bigint END, e.id) AS root) r
 WHERE e.id = CASE WHEN $1 ~ '^[0-9]{1,18}$' THEN $1::bigint END

[query chain]
-- $1 id of any attempt: the whole chain, oldest first
-- uses index: execution (id)
-- uses index: execution (original_execution)
WITH x AS (
  SELECT COALESCE(COALESCE(e.original_execution, CASE WHEN e.config->>'original_execution' ~ '^[0-9]{1,18}$' THEN (e.config->>'original_execution')::bigint END), e.id) AS root
    FROM execution e
   WHERE e.id = CASE WHEN $1 ~ '^[0-9]{1,18}$' THEN $1::bigint END)
SELECT e.id::text AS id,
       e.parent::text AS parent_id,
       e.action_ref AS name,
       e.status::text AS status,
       COALESCE(NULLIF(e.retry_count, 0), CASE WHEN e.config->>'retry_count' ~ '^[0-9]{1,9}$' THEN (e.config->>'retry_count')::int END, e.retry_count) AS retry_count,
       COALESCE(NULLIF(e.max_retries, 0), CASE WHEN e.config->>'max_retries' ~ '^[0-9]{1,9}$' THEN (e.config->>'max_retries')::int END, e.max_retries) AS max_retries,
       COALESCE(e.original_execution, CASE WHEN e.config->>'original_execution' ~ '^[0-9]{1,18}$' THEN (e.config->>'original_execution')::bigint END)::text AS chain_root,
       (CASE WHEN e.config->>'retry_of' ~ '^[0-9]{1,18}$' THEN (e.config->>'retry_of')::bigint END)::text AS retry_of,
       left(COALESCE(NULLIF(e.retry_reason, ''), e.config->>'retry_reason'), 200) AS reason,
       left(COALESCE(e.result->>'error', e.result->>'message'), 4096) AS error,
       NULL::text AS worker,
       extract(epoch FROM e.created) AS created_at,
       extract(epoch FROM e.updated) AS updated_at,
       CASE WHEN e.status IN ('completed', 'failed', 'cancelled', 'timeout', 'abandoned')
            THEN extract(epoch FROM e.updated) END AS finished_at,
       left(e.config->>'retry_at', 64) AS retry_at,
       EXISTS (SELECT 1 FROM execution r
                WHERE (r.config ? 'retry_of' AND (r.config->>'retry_of')::bigint = e.id)
                   OR (r.original_execution = e.id AND r.retry_count > e.retry_count)
                   OR (r.original_execution = e.original_execution
                       AND r.retry_count > e.retry_count)) AS superseded,
       e.created::text AS sort_key
  FROM execution e, x
 WHERE e.id = x.root
    OR e.original_execution = x.root
    OR (e.config ? 'original_execution' AND (e.config->>'original_execution')::bigint = x.root)
 ORDER BY e.created, e.id
 LIMIT 1000

[query workers optional]
-- Workers, worst first: never beaten, then the oldest heartbeats; 200 at most. Both halves
-- are bounded scans of the heartbeat index (its NULLs, then its ascending order), so the
-- cost does not grow with the number of workers; nothing reads the whole table. The second
-- half is read only for the places the first left (none when 200 never beat: 121 buffers
-- instead of 331 at 10,000 workers, a third less time).
-- uses index: worker (last_heartbeat)
SELECT w.id::text AS id,
       w.name,
       w.status::text AS status,
       w.capabilities->'health'->>'status' AS reported_health,
       concat_ws(' ', w.worker_type::text, w.worker_role::text) AS tags,
       (w.capabilities->'runtimes')::text AS tags_json,
       extract(epoch FROM w.last_heartbeat) AS heartbeat_at,
       w.capabilities->'health'->>'queue_depth' AS queue_depth,
       NULL::text AS in_flight,
       w.capabilities->>'max_concurrent_executions' AS capacity,
       w.capabilities->'health'->>'consecutive_failures' AS consecutive_failures,
       w.capabilities->'health'->>'total_executions' AS total_executions,
       w.capabilities->'health'->>'failed_executions' AS failed_executions
  FROM (WITH never AS (SELECT * FROM worker WHERE last_heartbeat IS NULL LIMIT 200)
        SELECT * FROM never
        UNION ALL
        (SELECT * FROM worker
          WHERE last_heartbeat IS NOT NULL
          ORDER BY last_heartbeat, id
          LIMIT 200 - (SELECT count(*) FROM never))) w
 ORDER BY w.last_heartbeat ASC NULLS FIRST, w.id
 LIMIT 200

[query outcome optional]
-- $1 the ids of executions a batch retried (text[], one page): what became of each retry
-- (actions/batchout.h), in standard words: outcome succeeded | failed | running, NULL while
-- the store shows no attempt of it yet; error: the attempt's error when it failed;
-- orig_error: the retried attempt's own (the group it is compared with when the batch
-- record froze none). One query a page, never one a item.
-- The attempt is the successor in the chain: the row whose config names this one as
-- retry_of (era 1 keeps the retry links in config JSON, which Attune's own indexes do not
-- cover). One walk of the (created) index from the oldest retried execution's creation on
-- (a successor is created after what it retries), not a scan per item: its cost is the
-- rows created since the batch's oldest item.
-- uses index: execution (id)
-- uses index: execution (created)
WITH b AS (
  SELECT e.id, e.created,
         left(COALESCE(e.result->>'error', e.result->>'message'), 4096) AS orig_error
    FROM execution e
   WHERE e.id = ANY (ARRAY(SELECT x::bigint FROM unnest($1::text[]) x WHERE x ~ '^[0-9]{1,18}$'))),
s AS (
  SELECT DISTINCT ON (n.config->>'retry_of') n.config->>'retry_of' AS of, n.id, n.status, n.result
    FROM execution n
   WHERE n.created >= (SELECT min(b.created) FROM b)
     AND n.config ? 'retry_of'
     AND n.config->>'retry_of' = ANY ($1::text[])
   ORDER BY n.config->>'retry_of', n.id)
SELECT b.id::text AS id,
       CASE WHEN s.id IS NULL THEN NULL
            WHEN s.status::text = 'completed' THEN 'succeeded'
            WHEN s.status::text IN ('failed', 'cancelled', 'timeout', 'abandoned') THEN 'failed'
            ELSE 'running' END AS outcome,
       s.id::text AS successor,
       left(COALESCE(s.result->>'error', s.result->>'message'), 4096) AS error,
       b.orig_error
  FROM b
  LEFT JOIN s ON s.of = b.id::text
