# OpenAgents JSON (seed 004): SQLAlchemy store in PostgreSQL. Times are float epoch seconds;
# status may be stored as enum NAMES in upper case ("FAILED"): everything is lower-cased.
# Retries reuse the row (retry_count increments): a chain is that one row. Queues are the
# queued jobs per tag; the DLQ is the "dead" jobs: failed with retry_count >= max_retries.
# Its HTTP API has no operational routes: the actions are redrive's default core contract.
[profile]
name = openagents
store = postgresql
semantics = openagents
dlq_source = store
# workers heartbeat every 60 s and count as dead after 120 s
heartbeat_max_age = 120s
# tables are unqualified: search_path = the config's `schema`, else this
schema = public

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
            WHERE c.oid IN (to_regclass('jobs'), to_regclass('workers'), to_regclass('job_tags'))),
     e AS (SELECT (SELECT state FROM r WHERE rel = 'jobs') AS jobs,
                  (SELECT string_agg(state, ' ' ORDER BY rel) FROM r HAVING count(state) = 3) AS every)
SELECT v.name, v.state
  FROM e, LATERAL (VALUES ('counts', e.jobs), ('executions', e.jobs), ('dlq_count', e.jobs),
                          ('failing', e.jobs || ' ' || floor(extract(epoch FROM now()) / 60)),
                          ('workers', e.every), ('queues', e.every)) v(name, state)

[query counts]
-- Jobs by status (both cases: "failed" and "FAILED" count as one). Every raw status present
-- is found by a skip scan of the status index (one probe per distinct value), so a rare
-- status is never missing. Each is counted exactly (capped at 100,000, shown "100000+"),
-- except a large terminal status of a big table, which comes from the planner's statistics
-- and is marked ≈. Live statuses (created, queued, running, paused) are exact at any size.
-- uses index: jobs (status)
-- The statistics row is found by name (pg_stats over the catalogs' own indexes); joined
-- on pg_class instead, it read the whole of pg_attribute.
WITH RECURSIVE d(s) AS (
  SELECT min(status) FROM jobs
  UNION ALL
  SELECT (SELECT min(j.status) FROM jobs j WHERE j.status > d.s)
    FROM d WHERE d.s IS NOT NULL),
est AS (
  SELECT u.v AS status, round(u.f * c.reltuples) AS count
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_stats s ON s.schemaname = n.nspname
                   AND s.tablename = 'jobs' AND s.attname = 'status',
         unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS u(v, f)
   WHERE c.oid = 'jobs'::regclass AND c.reltuples >= 50000
     AND lower(u.v) IN ('completed', 'failed', 'cancelled')
     AND u.f * c.reltuples >= 2000),
raw AS (
  SELECT d.s AS status, COALESCE(est.count, least(x.n, 100000)) AS count,
         est.count IS NOT NULL AS estimated, est.count IS NULL AND x.n > 100000 AS capped
    FROM d
    LEFT JOIN est ON est.status = d.s
    LEFT JOIN LATERAL (SELECT count(*) AS n
                         FROM (SELECT 1 FROM jobs j WHERE j.status = d.s LIMIT 100001) l
                        WHERE est.count IS NULL) x ON true
   WHERE d.s IS NOT NULL)
SELECT lower(status) AS status, sum(count) AS count, bool_or(estimated) AS estimated,
       bool_or(capped) AS capped
  FROM raw
 GROUP BY lower(status)

[query failing optional]
-- The whole-store figures of the fleet, the overview and the history (docs/profiles.md,
-- "failing"), in the refresh's round trip:
-- per_min: failures per minute over the last 5 minutes by when they FAILED (completed_at,
--   else updated_at), not when they were created; capped at 10,000 failures.
-- retry_eligible: failed jobs (either case) with retries left (retry_count < max_retries),
--   from the status index; counted up to 100,000 (retry_eligible_capped: a lower bound).
-- oldest_queued_at: the created time of the oldest queued job (NULL: none queued).
-- uses index: jobs (status)
WITH f AS (SELECT count(*) AS n
             FROM (SELECT 1 FROM jobs
                    WHERE status IN ('failed', 'FAILED')
                      AND COALESCE(completed_at, updated_at) > extract(epoch FROM now()) - 300
                    LIMIT 10001) s),
     e AS (SELECT count(*) AS n
             FROM (SELECT 1 FROM jobs
                    WHERE status IN ('failed', 'FAILED') AND retry_count < max_retries
                    LIMIT 100001) s)
SELECT f.n / 5.0 AS per_min,
       least(e.n, 100000) AS retry_eligible,
       e.n > 100000 AS retry_eligible_capped,
       (SELECT min(created_at) FROM jobs WHERE status IN ('queued', 'QUEUED')) AS oldest_queued_at
  FROM f, e

[query executions]
-- $1 start sort_key (NULL = newest) $2 start id $3 status $4 text $5 limit $6 row budget
-- $7 worker id (as jobs.worker_id records it; NULL = any)
-- The filters are applied to the newest $6 rows from the start key; the row ending that
-- window comes back as scan_end = true when fewer than $5 matched.
-- uses index: jobs (created_at, job_id)
SELECT j.job_id AS id,
       j.batch_id AS parent_id,
       j.name AS name,
       lower(j.status) AS status,
       j.retry_count AS retry_count,
       j.max_retries AS max_retries,
       left(j.retry_policy::text, 2000) AS retry_policy,
       j.retry_delay AS retry_delay,
       left(j.error::text, 65536) AS error_json,
       j.worker_id AS worker,
       j.created_at AS created_at,
       j.updated_at AS updated_at,
       j.completed_at AS finished_at,
       j.created_at::text AS sort_key,
       j.rn = $6::int AS scan_end
  FROM (SELECT x.*, row_number() OVER (ORDER BY x.created_at DESC, x.job_id DESC) AS rn
          FROM jobs x
         WHERE ($1::text IS NULL OR (x.created_at, x.job_id) <= ($1::float8, $2::text))
         ORDER BY x.created_at DESC, x.job_id DESC
         LIMIT $6::int) j
 WHERE (j.rn < $6::int
        AND ($3::text IS NULL OR j.status IN (lower($3), upper($3)))
        AND ($4::text IS NULL OR strpos(lower(j.job_id || ' ' || j.name || ' '
            || COALESCE(j.error::text, '')), lower($4)) > 0)
        AND ($7::text IS NULL OR j.worker_id::text = $7))
    OR j.rn = $6::int
 ORDER BY j.created_at DESC, j.job_id DESC
 LIMIT $5::int

[query groups optional]
-- Error groups across the store (docs/error-groups.md): $1 the window in seconds, $2 the
-- failures read at most (the newest of the window). A failure is a failed job (either
-- case) created in the window; first/last seen are when it ended (completed_at, else
-- updated_at). One row per distinct raw error (the error JSON, decoded in C as for the
-- executions list) and per job name and the columns of OpenAgents' own rule (status,
-- retry_count, max_retries: eligibility in C), with its tally; the fingerprints are made
-- in C (one definition). The read walks the failed jobs' partial index newest first and
-- stops at $2 rows; `capped` says it reached them. Texts grouped in the "C" collation.
-- uses index: jobs (created_at, job_id)
WITH f AS MATERIALIZED (
  SELECT j.job_id, j.name, j.status, j.retry_count, j.max_retries, j.error, j.worker_id,
         COALESCE(j.completed_at, j.updated_at, j.created_at) AS ended_at
    FROM jobs j
   WHERE lower(j.status) = 'failed'
     AND j.created_at > extract(epoch FROM now()) - $1::float8
   ORDER BY j.created_at DESC, j.job_id DESC
   LIMIT $2::int)
SELECT min(f.job_id) AS id, f.name COLLATE "C" AS name, lower(f.status) COLLATE "C" AS status,
       f.retry_count, f.max_retries, left(f.error::text, 65536) COLLATE "C" AS error_json,
       f.worker_id::text AS worker, count(*) AS n,
       count(*) FILTER (WHERE f.ended_at > extract(epoch FROM now()) - 900) AS recent,
       min(f.ended_at) AS first_at,
       max(f.ended_at) AS last_at,
       (SELECT count(*) >= $2::int FROM f) AS capped
  FROM f
 GROUP BY f.name COLLATE "C", lower(f.status) COLLATE "C", f.retry_count, f.max_retries,
          left(f.error::text, 65536) COLLATE "C", f.worker_id

[query groups_window optional]
-- What stands out about each error group (docs/error-groups.md): the window's baseline,
-- every job created in the window ($1 seconds, the newest $2 at most) by worker (with the
-- worker's hostname), by name and by attempt (retry_count + 1: retries reuse the row).
-- Tags are not compared. `total` the jobs read, `capped` when the bound was reached.
-- uses index: jobs (created_at, job_id)
WITH w AS MATERIALIZED (
  SELECT j.worker_id, j.name COLLATE "C" AS action, COALESCE(j.retry_count, 0) + 1 AS attempt
    FROM jobs j
   WHERE j.created_at > extract(epoch FROM now()) - $1::float8
   ORDER BY j.created_at DESC, j.job_id DESC
   LIMIT $2::int),
     t AS (SELECT count(*) AS total FROM w)
SELECT CASE WHEN GROUPING(w.worker_id) = 0 THEN 'worker'
            WHEN GROUPING(w.action) = 0 THEN 'action' ELSE 'attempt' END AS dimension,
       CASE WHEN GROUPING(w.worker_id) = 0 THEN w.worker_id::text
            WHEN GROUPING(w.action) = 0 THEN w.action ELSE w.attempt::text END AS value,
       count(*) AS n,
       CASE WHEN GROUPING(w.worker_id) = 0
            THEN (SELECT k.hostname FROM workers k WHERE k.worker_id = w.worker_id) END AS host,
       (SELECT total FROM t) AS total, (SELECT total FROM t) >= $2::int AS capped
  FROM w
 GROUP BY GROUPING SETS ((w.worker_id), (w.action), (w.attempt))

[query execution]
-- $1 job id: one row, for jumping to it
-- uses index: jobs (job_id)
SELECT j.job_id AS id, j.name AS name, lower(j.status) AS status,
       j.retry_count AS retry_count, j.max_retries AS max_retries,
       j.created_at AS created_at, j.created_at::text AS sort_key
  FROM jobs j
 WHERE j.job_id = $1

[query recheck optional]
-- $1 the ids of a batch's items about to be sent (text[], one page of 500): each one's
-- row as [query execution] reads it (the same columns, superseded included), so the
-- send-time guard (issue 35) judges it by the executions list's own rule. One query a
-- page, never one an item; an id the store no longer holds has no row.
-- uses index: jobs (job_id)
SELECT j.job_id AS id, j.name AS name, lower(j.status) AS status,
       j.retry_count AS retry_count, j.max_retries AS max_retries,
       j.created_at AS created_at, j.created_at::text AS sort_key
  FROM jobs j
 WHERE j.job_id = ANY ($1::text[])

[query chain]
-- $1 job id: retries reuse the row, so the chain is the row itself (attempt = retry_count + 1)
SELECT j.job_id AS id,
       j.batch_id AS parent_id,
       j.name AS name,
       lower(j.status) AS status,
       j.retry_count AS retry_count,
       j.max_retries AS max_retries,
       left(j.retry_policy::text, 2000) AS retry_policy,
       j.retry_delay AS retry_delay,
       left(j.error::text, 65536) AS error_json,
       j.worker_id AS worker,
       j.created_at AS created_at,
       j.updated_at AS updated_at,
       j.completed_at AS finished_at,
       j.created_at::text AS sort_key
  FROM jobs j
 WHERE j.job_id = $1

[query execution_detail optional]
-- $1 job id: the job in full, read when the detail pane opens (never on a poll): its error
-- (JSON: message, traceback), payload (the parameters) and result as JSON, every
-- timestamp, the worker; retries reuse the row (attempt = retry_count + 1).
-- uses index: jobs (job_id)
SELECT j.job_id AS id,
       j.name AS name,
       lower(j.status) AS status,
       j.worker_id AS worker,
       j.retry_count + 1 AS attempt,
       j.max_retries + 1 AS max_attempts,
       j.job_id AS chain_root,
       j.retry_count + 1 AS chain_length,
       j.batch_id AS parent_id,
       left(CASE WHEN json_typeof(j.error) = 'object'
                 THEN COALESCE(j.error->>'message', j.error->>'error', j.error::text)
                 ELSE COALESCE(j.error #>> '{}', j.error::text) END, 65536) AS error,
       left(CASE WHEN json_typeof(j.error) = 'object'
                 THEN COALESCE(j.error->>'traceback', j.error->>'backtrace', j.error->>'stack') END,
            65536) AS backtrace,
       left(j.payload::text, 262144) AS params,
       left(j.result::text, 262144) AS result,
       left(j.retry_policy::text, 4000) AS retry_policy,
       left(j.metadata::text, 65536) AS metadata,
       j.created_at AS created_at,
       j.started_at AS started_at,
       j.updated_at AS updated_at,
       j.completed_at AS finished_at
  FROM jobs j
 WHERE j.job_id = $1

[query worker_running optional]
-- $1 worker id: the jobs running on that worker now, as the store says (the drain cockpit:
-- never the page on screen), oldest first. The columns of [query execution].
-- uses index: jobs (worker_id)
SELECT j.job_id AS id,
       j.batch_id AS parent_id,
       j.name AS name,
       lower(j.status) AS status,
       j.retry_count AS retry_count,
       j.max_retries AS max_retries,
       j.worker_id AS worker,
       j.created_at AS created_at,
       j.updated_at AS updated_at,
       j.created_at::text AS sort_key
  FROM jobs j
 WHERE j.worker_id = $1
   AND lower(j.status) IN ('running', 'processing', 'in_progress', 'started')
 ORDER BY j.created_at, j.job_id
 LIMIT 500

[query workers optional]
-- Heartbeat every 60 s; no metrics besides running_jobs / max_concurrent_jobs.
-- Worst first: never beaten, then the oldest heartbeats; 200 at most, both halves bounded
-- scans of the heartbeat index (its NULLs, then its ascending order); the second half reads
-- only as many rows as the first left places for.
-- uses index: workers (last_heartbeat)
SELECT w.worker_id AS id,
       w.hostname AS name,
       lower(w.status) AS status,
       w.tags::text AS tags_json,
       w.last_heartbeat AS heartbeat_at,
       CASE WHEN json_typeof(w.running_jobs) = 'array'
            THEN json_array_length(w.running_jobs) END AS in_flight,
       w.max_concurrent_jobs AS capacity
  FROM (WITH never AS (SELECT * FROM workers WHERE last_heartbeat IS NULL LIMIT 200)
        SELECT * FROM never
        UNION ALL
        (SELECT * FROM workers
          WHERE last_heartbeat IS NOT NULL
          ORDER BY last_heartbeat, worker_id
          LIMIT 200 - (SELECT count(*) FROM never))) w
 ORDER BY w.last_heartbeat ASC NULLS FIRST, w.worker_id
 LIMIT 200

[query queues optional]
-- Queued jobs per tag (untagged ones under "(untagged)"); consumers = live workers
-- (active/online) carrying the tag.
SELECT q.tag AS name,
       q.n AS depth,
       q.n AS ready,
       (SELECT count(*) FROM workers w
         WHERE lower(w.status) IN ('active', 'online') AND json_typeof(w.tags) = 'array'
           AND EXISTS (SELECT 1 FROM json_array_elements(w.tags) t
                        WHERE t::text = to_json(q.tag)::text)) AS consumers,
       false AS is_dlq
  FROM (SELECT COALESCE(jt.tag, '(untagged)') AS tag, count(*) AS n
          FROM jobs j LEFT JOIN job_tags jt ON jt.job_id = j.job_id
         WHERE j.status IN ('queued', 'QUEUED')
         GROUP BY 1) q
 ORDER BY q.n DESC, q.tag
 LIMIT 1000

[query dlq_count optional]
SELECT count(*) AS total
  FROM (SELECT 1 FROM jobs
         WHERE status IN ('failed', 'FAILED') AND COALESCE(retry_count, 0) >= COALESCE(max_retries, 0)
         LIMIT 1000001) d

[query dlq_groups optional]
-- $1 the text searched (NULL = all): the store's dead jobs (as dlq_count counts them) by
-- reason and by queue, read with each DLQ page: the view's group-by counts the store, never
-- the page loaded. The reason is the error's "type" as the DLQ rows have it (decoded in C
-- from the same JSON; none: "-"); a "type" holding a NUL escape, which PostgreSQL cannot
-- turn into text, counts as none (its row's JSON is decoded in C, so only the key differs).
-- Bounded: 100,000 entries counted at most (capped: the counts are then lower bounds).
WITH d AS (
  SELECT CASE WHEN json_typeof(j.error) = 'object' AND json_typeof(j.error->'type') = 'string'
                   AND strpos((j.error->'type')::text, '\u0000') = 0
                   AND length(j.error::text) <= 65536
              THEN left(j.error->>'type', 200) END AS reason,
         j.completed_at, j.updated_at
    FROM jobs j
   WHERE j.status IN ('failed', 'FAILED') AND COALESCE(j.retry_count, 0) >= COALESCE(j.max_retries, 0)
     AND ($1::text IS NULL OR strpos(lower(j.job_id || ' ' || COALESCE(j.name, '') || ' ' || COALESCE(j.worker_id, '')
         || ' jobs (dead) ' || COALESCE(j.payload::text, '') || ' ' || COALESCE(j.error::text, '')), lower($1)) > 0)
   LIMIT 100001),
c AS (SELECT count(*) > 100000 AS capped FROM d)
SELECT 'reason' AS by, d.reason AS key, count(*) AS n,
       min(d.completed_at) AS first_at, max(d.updated_at) AS last_at,
       (SELECT c.capped FROM c) AS capped
  FROM d
 GROUP BY d.reason
UNION ALL
SELECT 'queue', 'jobs (dead)', count(*), min(d.completed_at), max(d.updated_at), (SELECT c.capped FROM c)
  FROM d
HAVING count(*) > 0

[query dlq optional]
-- $1 limit $2 $3 the page's start (sort_key, id; NULL = the first page) $4 'oldest': oldest
-- first (`G`), else newest first $5 the text searched in the job (NULL = all): dead jobs
-- (failed, retries exhausted). Each order is its own branch, so each walks the index its
-- way; the search is the store's, over every dead job, not the page loaded (the fields
-- an entry shows: its id, worker, queue, payload and error, as the view's own filter).
-- uses index: jobs (created_at, job_id)
WITH d AS (
  (SELECT j.* FROM jobs j
    WHERE $4::text IS NULL
      AND j.status IN ('failed', 'FAILED') AND COALESCE(j.retry_count, 0) >= COALESCE(j.max_retries, 0)
      AND ($2::text IS NULL OR (j.created_at, j.job_id) < ($2::float8, $3::text))
      AND ($5::text IS NULL OR strpos(lower(j.job_id || ' ' || COALESCE(j.name, '') || ' ' || COALESCE(j.worker_id, '')
          || ' jobs (dead) ' || COALESCE(j.payload::text, '') || ' ' || COALESCE(j.error::text, '')), lower($5)) > 0)
    ORDER BY j.created_at DESC, j.job_id DESC
    LIMIT $1::int)
  UNION ALL
  (SELECT j.* FROM jobs j
    WHERE $4::text = 'oldest'
      AND j.status IN ('failed', 'FAILED') AND COALESCE(j.retry_count, 0) >= COALESCE(j.max_retries, 0)
      AND ($2::text IS NULL OR (j.created_at, j.job_id) > ($2::float8, $3::text))
      AND ($5::text IS NULL OR strpos(lower(j.job_id || ' ' || COALESCE(j.name, '') || ' ' || COALESCE(j.worker_id, '')
          || ' jobs (dead) ' || COALESCE(j.payload::text, '') || ' ' || COALESCE(j.error::text, '')), lower($5)) > 0)
    ORDER BY j.created_at, j.job_id
    LIMIT $1::int))
SELECT j.job_id AS id,
       'jobs (dead)' AS queue,
       j.job_id AS execution_id,
       left(j.error::text, 65536) AS error_json,
       j.retry_count AS count,
       j.worker_id AS origin_queue,
       j.completed_at AS first_death_at,
       j.updated_at AS last_death_at,
       left(json_build_object('payload', j.payload, 'error', j.error)::text, 65536) AS payload,
       j.created_at::text AS sort_key
  FROM d j
 ORDER BY CASE WHEN $4::text = 'oldest' THEN j.created_at END,
          CASE WHEN $4::text = 'oldest' THEN j.job_id END,
          j.created_at DESC, j.job_id DESC

[query outcome optional]
-- $1 the ids of executions a batch retried (text[], one page): what became of each retry
-- (actions/batchout.h), in standard words: outcome succeeded | failed | running, NULL while
-- the store shows no attempt of it yet; error: the attempt's error when it failed;
-- orig_error: the retried attempt's own (the group it is compared with when the batch
-- record froze none). One query a page, never one a item.
-- A job is retried in place (retry_count + 1): the row's status now; completed succeeded,
-- failed or cancelled failed (either case: SQLAlchemy may store the names), anything else
-- runs.
-- uses index: jobs (job_id)
SELECT j.job_id AS id,
       CASE WHEN lower(j.status) = 'completed' THEN 'succeeded'
            WHEN lower(j.status) IN ('failed', 'cancelled') THEN 'failed'
            ELSE 'running' END AS outcome,
       left(j.error::text, 65536) AS error_json
  FROM jobs j
 WHERE j.job_id = ANY ($1::text[])

[action retry]
method = POST
path = /executions/{id}/retry
body = {"reason":"{reason}"}

[action drain]
method = POST
path = /workers/{worker}/drain
body = {"reason":"{reason}"}

[action undrain]
method = POST
path = /workers/{worker}/undrain

[action deactivate]
method = POST
path = /workers/{worker}/deactivate
body = {"reason":"{reason}"}

[action activate]
method = POST
path = /workers/{worker}/activate
