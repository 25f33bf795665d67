# Tasker (seed 001, tasker-core): PostgreSQL schema `tasker` (config `schema`; the names
# below are unqualified, the source sets search_path). The executions are workflow
# steps; a step has no state column: its state is to_state of its most_recent transition
# (default pending). A step's retry chain is its transition history by sort_key. The DLQ is
# tasks_dlq (pending entries). A step's reason is its result's error.error_type
# (RetryableError / PermanentError) and metadata.error_code; a transition's error is the
# `data` of the event JSON text in metadata.event ({"type":"Fail","data":"..."}).
# Worker health comes from the workers' /health
# endpoints (config `workers`), queues from pgmq when the extension is installed.
# Timestamps are `timestamp without time zone` in UTC. Standard columns: docs/profiles.md.
[profile]
name = tasker
store = postgresql
semantics = tasker
# the DLQ is tasks_dlq, and on RabbitMQ also the broker's {queue}_dlq queues
dlq_source = store broker
requires_queues = pgmq
schema = tasker
# with pgmq, tasker-core's pgmq_send_with_notify notifies every message sent (queue depths
# pushed; task and step state stay polled: Tasker does not notify them)
listen = pgmq_message_ready pgmq_queue_created
requires_listen = pgmq
listen_refresh = queues

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
            WHERE c.oid IN (to_regclass('workflow_steps'), to_regclass('workflow_step_transitions'), to_regclass('named_steps'), to_regclass('tasks_dlq'))),
     e AS (SELECT (SELECT string_agg(state, ' ' ORDER BY rel) FROM r WHERE rel <> 'tasks_dlq'
                     HAVING count(state) = 3) AS steps,
                  (SELECT state FROM r WHERE rel = 'tasks_dlq') AS dlq)
SELECT v.name, v.state
  FROM e, LATERAL (VALUES ('counts', e.steps), ('executions', e.steps),
                          ('failing', e.steps || ' ' || floor(extract(epoch FROM now()) / 60)),
                          ('dlq_count', e.dlq)) v(name, state)

[query counts]
-- Steps by state. Every state present is found by a skip scan of the current-state index
-- (one probe per distinct value), so a rare state is never missing; a step with no
-- transition yet is `pending` (found among the unprocessed steps, on their partial index).
-- Each is counted exactly (capped at 100,000, shown "100000+"), except a large terminal
-- state of a big table, which comes from the planner's statistics and is marked ≈. Live
-- states (pending, enqueued, in_progress, waiting_for_retry…) are exact at any table size.
-- uses index: workflow_step_transitions (to_state)
-- The statistics row is found by name (pg_stats over the catalogs' own indexes); joined
-- on pg_class instead, it read the whole of pg_attribute.
WITH RECURSIVE d(s) AS (
  SELECT min(to_state) FROM workflow_step_transitions WHERE most_recent
  UNION ALL
  SELECT (SELECT min(t.to_state) FROM workflow_step_transitions t
           WHERE t.most_recent AND t.to_state > d.s)
    FROM d WHERE d.s IS NOT NULL),
est AS (
  SELECT u.v AS status, round(u.f * c.reltuples) AS count
    FROM pg_class c
    JOIN pg_class tc ON tc.oid = to_regclass('workflow_step_transitions')
    JOIN pg_namespace n ON n.oid = tc.relnamespace
    JOIN pg_stats s ON s.schemaname = n.nspname
                   AND s.tablename = 'workflow_step_transitions'
                   AND s.attname = 'to_state',
         unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS u(v, f)
   WHERE c.oid = 'workflow_steps'::regclass AND c.reltuples >= 50000
     AND u.v IN ('complete', 'error', 'cancelled', 'resolved_manually')
     AND u.f * c.reltuples >= 2000),
raw AS (
  SELECT d.s::text AS status, COALESCE(est.count, least(x.n, 100000)) AS count,
         est.count IS NOT NULL AS estimated, est.count IS NULL AND x.n > 100000 AS capped
    FROM d
    LEFT JOIN est ON est.status = d.s::text
    LEFT JOIN LATERAL (SELECT count(*) AS n
                         FROM (SELECT 1 FROM workflow_step_transitions t
                                WHERE t.most_recent AND t.to_state = d.s LIMIT 100001) l
                        WHERE est.count IS NULL) x ON true
   WHERE d.s IS NOT NULL
  UNION ALL
  SELECT 'pending', least(count(*), 100000), false, count(*) > 100000
    FROM (SELECT 1 FROM workflow_steps s
           WHERE NOT s.processed
             AND NOT EXISTS (SELECT 1 FROM workflow_step_transitions t
                              WHERE t.workflow_step_uuid = s.workflow_step_uuid
                                AND t.most_recent)
           LIMIT 100001) p)
SELECT status, sum(count) AS count, bool_or(estimated) AS estimated, bool_or(capped) AS capped
  FROM raw
 GROUP BY status
HAVING sum(count) > 0

[query failing optional]
-- The whole-store figures of the fleet, the overview and the history (docs/profiles.md,
-- "failing"), in the refresh's round trip. Times are UTC without a time zone.
-- per_min: failures per minute over the last 5 minutes, from the step transitions: every
--   transition into `error` made in the window, whatever the step did next (Tasker retries
--   by itself: a step that failed a minute ago may be running again). Tasker has no index on
--   a transition's time: a step with a transition in the window has its newest one there,
--   so the current-state index's entries of the unsettled states (and error) are read, those
--   whose newest transition is in the window kept (10,001 steps at most), and each one's
--   transitions read by its key. A step that failed and then completed within the window is
--   not seen (its newest state is `complete`: the whole history of the store's steps).
-- retry_eligible: steps in `error` or `waiting_for_retry` whose budget allows another
--   attempt (Tasker's own rule: attempts NULL = 0, max_attempts NULL = 3, retryable NULL =
--   true, the first attempt always runs); each step read by its key; counted up to 100,000
--   (retry_eligible_capped: a lower bound). Pending steps (never failed) are not counted.
-- oldest_queued_at: the created time of the oldest pending or enqueued step (a step with
--   no transition yet is pending: found among the unprocessed steps, on their partial
--   index); NULL: none queued.
-- uses index: workflow_step_transitions (to_state)
-- uses index: workflow_steps (workflow_step_uuid)
-- uses index: workflow_steps (task_uuid) WHERE NOT processed
-- uses index: workflow_step_transitions (workflow_step_uuid, sort_key)
WITH f AS (SELECT COALESCE(sum((SELECT count(*) FROM workflow_step_transitions e
                                 WHERE e.workflow_step_uuid = s.workflow_step_uuid
                                   AND e.to_state = 'error'
                                   AND e.created_at > (now() AT TIME ZONE 'UTC') - interval '5 minutes')),
                        0) AS n
             FROM (SELECT t.workflow_step_uuid FROM workflow_step_transitions t
                    WHERE t.most_recent
                      AND t.to_state IN ('error', 'waiting_for_retry', 'pending', 'enqueued', 'in_progress',
                                         'enqueued_for_orchestration', 'enqueued_as_error_for_orchestration')
                      AND t.created_at > (now() AT TIME ZONE 'UTC') - interval '5 minutes'
                    LIMIT 10001) s),
     e AS (SELECT count(*) AS n
             FROM (SELECT 1 FROM workflow_step_transitions t
                     JOIN workflow_steps s ON s.workflow_step_uuid = t.workflow_step_uuid
                    WHERE t.most_recent AND t.to_state IN ('error', 'waiting_for_retry')
                      AND (COALESCE(s.attempts, 0) = 0
                           OR (COALESCE(s.max_attempts, 3) > 0 AND COALESCE(s.retryable, true)
                               AND COALESCE(s.attempts, 0) < COALESCE(s.max_attempts, 3)))
                    LIMIT 100001) s),
     q AS (SELECT min(s.created_at) AS c
             FROM workflow_step_transitions t
             JOIN workflow_steps s ON s.workflow_step_uuid = t.workflow_step_uuid
            WHERE t.most_recent AND t.to_state IN ('pending', 'enqueued')
           UNION ALL
           SELECT min(s.created_at)
             FROM workflow_steps s
            WHERE NOT s.processed
              AND NOT EXISTS (SELECT 1 FROM workflow_step_transitions t
                               WHERE t.workflow_step_uuid = s.workflow_step_uuid
                                 AND t.most_recent))
SELECT f.n / 5.0 AS per_min,
       least(e.n, 100000) AS retry_eligible,
       e.n > 100000 AS retry_eligible_capped,
       (SELECT extract(epoch FROM min(q.c) AT TIME ZONE 'UTC') FROM q) AS oldest_queued_at
  FROM f, e

[query executions]
-- $1 start sort_key (NULL = newest) $2 start id $3 status $4 text $5 limit $6 row budget
-- The filters are applied to the newest $6 steps from the start key; the step ending that
-- window comes back as scan_end = true when fewer than $5 matched.
-- uses index: workflow_steps (created_at, workflow_step_uuid)
-- uses index: workflow_step_transitions (workflow_step_uuid)
SELECT s.workflow_step_uuid::text AS id,
       s.task_uuid::text AS parent_id,
       ns.name AS name,
       COALESCE(t.to_state, 'pending') AS status,
       s.attempts AS attempts,
       s.max_attempts AS max_attempts,
       s.retryable AS retryable,
       extract(epoch FROM s.last_attempted_at AT TIME ZONE 'UTC') AS last_attempted_at,
       s.backoff_request_seconds AS backoff_request_seconds,
       left(NULLIF(concat_ws(': ', COALESCE(s.results->'error'->>'error_type',
                                            s.results->'metadata'->>'error_type',
                                            s.results->'error'->>'error_class'),
                             s.results->'metadata'->>'error_code'), ''), 200) AS reason,
       left(COALESCE(s.results->'error'->>'message', s.results->>'error',
                     t.metadata->>'error'), 4096) AS error,
       CASE WHEN t.metadata->>'event' ~ '^\s*\{.*\}\s*$'
            THEN left(t.metadata->>'event', 65536) END AS error_json,
       NULL::text AS worker,
       extract(epoch FROM s.created_at AT TIME ZONE 'UTC') AS created_at,
       extract(epoch FROM s.updated_at AT TIME ZONE 'UTC') AS updated_at,
       extract(epoch FROM s.processed_at AT TIME ZONE 'UTC') AS finished_at,
       s.created_at::text AS sort_key,
       s.rn = $6::int AS scan_end
  FROM (SELECT x.*, row_number() OVER (ORDER BY x.created_at DESC, x.workflow_step_uuid DESC) AS rn
          FROM workflow_steps x
         WHERE ($1::text IS NULL OR (x.created_at, x.workflow_step_uuid) <= ($1::timestamp, $2::uuid))
         ORDER BY x.created_at DESC, x.workflow_step_uuid DESC
         LIMIT $6::int) s
  LEFT JOIN workflow_step_transitions t
         ON t.workflow_step_uuid = s.workflow_step_uuid AND t.most_recent
  LEFT JOIN named_steps ns ON ns.named_step_uuid = s.named_step_uuid
 WHERE (s.rn < $6::int
        AND ($3::text IS NULL OR COALESCE(t.to_state, 'pending') = lower($3))
        AND ($4::text IS NULL OR strpos(lower(s.workflow_step_uuid::text || ' ' || s.task_uuid::text
            || ' ' || COALESCE(ns.name, '') || ' '
            || COALESCE(s.results->'error'->>'message', '')), lower($4)) > 0))
    OR s.rn = $6::int
 ORDER BY s.created_at DESC, s.workflow_step_uuid DESC
 LIMIT $5::int

[query groups optional]
-- Error groups across the store (docs/error-groups.md): $1 the window in seconds, $2 the
-- failures read at most (the newest of the window). A failure is a step in `error` now (its
-- most_recent transition), entered in the window (that transition's created_at, UTC). One
-- row per distinct raw error (the executions query's error and error_json) and per step
-- name and the columns of Tasker's own rule (attempts, max_attempts, retryable: eligibility
-- in C), with its tally; the fingerprints are made in C (one definition). The read walks
-- the current-state index's `error` entries (Tasker has no index on a transition's time),
-- stops at $2 rows, and `capped` says it reached them; each step of them is read by its key
-- (a lookup per failure read: never a walk of every step). Texts grouped in the "C" collation.
-- uses index: workflow_step_transitions (to_state)
-- uses index: workflow_steps (workflow_step_uuid)
WITH f AS MATERIALIZED (
  SELECT t.workflow_step_uuid, t.created_at, t.metadata
    FROM workflow_step_transitions t
   WHERE t.most_recent AND t.to_state = 'error'
     AND t.created_at > (now() AT TIME ZONE 'UTC') - make_interval(secs => $1::float8)
   ORDER BY t.created_at DESC
   LIMIT $2::int),
x AS (
  SELECT s.workflow_step_uuid::text AS id, f.created_at, ns.name COLLATE "C" AS name,
         s.attempts, s.max_attempts, s.retryable,
         left(COALESCE(s.results->'error'->>'message', s.results->>'error',
                       f.metadata->>'error'), 4096) COLLATE "C" AS error,
         CASE WHEN f.metadata->>'event' ~ '^\s*\{.*\}\s*$'
              THEN left(f.metadata->>'event', 65536) END COLLATE "C" AS error_json
    FROM f
    JOIN LATERAL (SELECT w.* FROM workflow_steps w
                   WHERE w.workflow_step_uuid = f.workflow_step_uuid LIMIT 1) s ON true
    LEFT JOIN named_steps ns ON ns.named_step_uuid = s.named_step_uuid)
SELECT min(x.id) AS id, x.name, 'error' AS status, x.attempts, x.max_attempts, x.retryable,
       x.error, CASE WHEN x.error IS NULL THEN x.error_json END AS error_json,
       count(*) AS n,
       count(*) FILTER (WHERE x.created_at > (now() AT TIME ZONE 'UTC') - interval '15 minutes') AS recent,
       extract(epoch FROM min(x.created_at) AT TIME ZONE 'UTC') AS first_at,
       extract(epoch FROM max(x.created_at) AT TIME ZONE 'UTC') AS last_at,
       (SELECT count(*) >= $2::int FROM f) AS capped
  FROM x
 GROUP BY x.name, x.attempts, x.max_attempts, x.retryable, x.error,
          CASE WHEN x.error IS NULL THEN x.error_json END

[query execution]
-- $1 step uuid: one row, for jumping to it
SELECT s.workflow_step_uuid::text AS id,
       s.task_uuid::text AS parent_id,
       ns.name AS name,
       COALESCE(t.to_state, 'pending') AS status,
       s.attempts AS attempts,
       s.max_attempts AS max_attempts,
       s.retryable AS retryable,
       extract(epoch FROM s.created_at AT TIME ZONE 'UTC') AS created_at,
       s.created_at::text AS sort_key
  FROM workflow_steps s
  LEFT JOIN workflow_step_transitions t
         ON t.workflow_step_uuid = s.workflow_step_uuid AND t.most_recent
  LEFT JOIN named_steps ns ON ns.named_step_uuid = s.named_step_uuid
 WHERE s.workflow_step_uuid = CASE WHEN $1 ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' THEN $1::uuid END

[query recheck optional]
-- $1 the ids of a batch's items about to be sent (text[], one page of 500): each one's
-- row as [query execution] reads it (the same columns, superseded included), so the
-- send-time guard (issue 35) judges it by the executions list's own rule. One query a
-- page, never one an item; an id the store no longer holds has no row.
-- uses index: workflow_steps (workflow_step_uuid)
-- uses index: workflow_step_transitions (workflow_step_uuid)
SELECT s.workflow_step_uuid::text AS id,
       s.task_uuid::text AS parent_id,
       ns.name AS name,
       COALESCE(t.to_state, 'pending') AS status,
       s.attempts AS attempts,
       s.max_attempts AS max_attempts,
       s.retryable AS retryable,
       extract(epoch FROM s.created_at AT TIME ZONE 'UTC') AS created_at,
       s.created_at::text AS sort_key
  FROM workflow_steps s
  LEFT JOIN workflow_step_transitions t
         ON t.workflow_step_uuid = s.workflow_step_uuid AND t.most_recent
  LEFT JOIN named_steps ns ON ns.named_step_uuid = s.named_step_uuid
 WHERE s.workflow_step_uuid = ANY (ARRAY(
         SELECT x::uuid FROM unnest($1::text[]) x
          WHERE x ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'))

[query execution_detail optional]
-- $1 step uuid, or one of its transitions' uuids (a chain row): the step in full, read when
-- the detail pane opens (never on a poll): its results' error and backtrace, its inputs
-- (the parameters) and results as JSON, every timestamp, the chain position (attempts of
-- max_attempts; the step's transitions).
-- uses index: workflow_steps (workflow_step_uuid)
-- uses index: workflow_step_transitions (workflow_step_transition_uuid)
WITH x AS (
  SELECT CASE WHEN $1 ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' THEN $1::uuid END AS u)
SELECT s.workflow_step_uuid::text AS id,
       ns.name AS name,
       COALESCE(t.to_state, 'pending') AS status,
       NULL::text AS worker,
       s.attempts AS attempt,
       s.max_attempts AS max_attempts,
       s.workflow_step_uuid::text AS chain_root,
       (SELECT count(*) FROM workflow_step_transitions c
         WHERE c.workflow_step_uuid = s.workflow_step_uuid AND c.to_state = 'enqueued') AS chain_length,
       s.task_uuid::text AS parent_id,
       left(s.results->'error'->>'error_type', 2000) AS reason,
       left(COALESCE(s.results->'error'->>'message', t.metadata->>'error'), 65536) AS error,
       left(COALESCE(s.results->'error'->>'backtrace', s.results->>'backtrace'), 65536) AS backtrace,
       left(s.inputs::text, 262144) AS params,
       left(s.results::text, 262144) AS result,
       s.retryable::text AS retryable,
       extract(epoch FROM s.created_at AT TIME ZONE 'UTC') AS created_at,
       extract(epoch FROM s.last_attempted_at AT TIME ZONE 'UTC') AS last_attempted_at,
       extract(epoch FROM s.processed_at AT TIME ZONE 'UTC') AS processed_at,
       extract(epoch FROM s.updated_at AT TIME ZONE 'UTC') AS updated_at
  FROM x, workflow_steps s
  LEFT JOIN workflow_step_transitions t
         ON t.workflow_step_uuid = s.workflow_step_uuid AND t.most_recent
  LEFT JOIN named_steps ns ON ns.named_step_uuid = s.named_step_uuid
 WHERE s.workflow_step_uuid = x.u
    OR s.workflow_step_uuid = (SELECT w.workflow_step_uuid FROM workflow_step_transitions w
                                WHERE w.workflow_step_transition_uuid = x.u)
 LIMIT 1

[query chain]
-- $1 step uuid: its transitions by sort_key; or a task uuid (a tasks_dlq entry names its
-- task): the transitions of the task's steps. attempt = the step's enqueued transitions so
-- far; the eligibility fields are the step's (the verdict is about the step, on every row).
-- uses index: workflow_step_transitions (workflow_step_uuid)
-- uses index: workflow_steps (task_uuid)
SELECT t.workflow_step_transition_uuid::text AS id,
       s.task_uuid::text AS parent_id,
       ns.name AS name,
       t.to_state AS status,
       count(*) FILTER (WHERE t.to_state = 'enqueued') OVER (PARTITION BY s.workflow_step_uuid ORDER BY t.sort_key) AS attempt,
       s.attempts AS attempts,
       s.max_attempts AS max_attempts,
       s.retryable AS retryable,
       extract(epoch FROM s.last_attempted_at AT TIME ZONE 'UTC') AS last_attempted_at,
       s.backoff_request_seconds AS backoff_request_seconds,
       s.workflow_step_uuid::text AS chain_root,
       lag(t.workflow_step_transition_uuid::text) OVER (PARTITION BY s.workflow_step_uuid ORDER BY t.sort_key) AS retry_of,
       t.from_state AS reason,
       left(t.metadata->>'error', 4096) AS error,
       CASE WHEN t.metadata->>'event' ~ '^\s*\{.*\}\s*$'
            THEN left(t.metadata->>'event', 65536) END AS error_json,
       NULL::text AS worker,
       extract(epoch FROM t.created_at AT TIME ZONE 'UTC') AS created_at,
       extract(epoch FROM t.updated_at AT TIME ZONE 'UTC') AS updated_at,
       -- a transition starts its state when it is written
       extract(epoch FROM t.created_at AT TIME ZONE 'UTC') AS started_at,
       t.sort_key::text AS sort_key
  FROM workflow_steps s
  JOIN workflow_step_transitions t ON t.workflow_step_uuid = s.workflow_step_uuid
  LEFT JOIN named_steps ns ON ns.named_step_uuid = s.named_step_uuid
 WHERE s.workflow_step_uuid = CASE WHEN $1 ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' THEN $1::uuid END
    OR s.task_uuid = CASE WHEN $1 ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' THEN $1::uuid END
 ORDER BY s.created_at, s.workflow_step_uuid, t.sort_key
 LIMIT 1000

[query dlq_count optional]
SELECT count(*) AS total
  FROM (SELECT 1 FROM tasks_dlq WHERE resolution_status = 'pending' LIMIT 1000001) d

[query dlq_groups optional]
-- $1 the text searched (NULL = all): the store's whole DLQ (its pending entries, as
-- dlq_count counts them) by reason and by queue, read with each DLQ page: the view's
-- group-by counts the store, never the page loaded. Bounded: 100,000 entries counted at
-- most (capped: the counts are then lower bounds). Times as the dlq query's rows have them.
WITH d AS (
  SELECT d.dlq_reason::text AS reason, d.dlq_timestamp, d.updated_at
    FROM tasks_dlq d
   WHERE d.resolution_status = 'pending'
     AND ($1::text IS NULL OR strpos(lower(d.dlq_entry_uuid::text || ' ' || d.task_uuid::text || ' '
         || d.dlq_reason::text || ' ' || COALESCE(d.original_state, '') || ' '
         || COALESCE(d.metadata::text, '')), lower($1)) > 0)
   LIMIT 100001),
c AS (SELECT count(*) > 100000 AS capped FROM d)
SELECT 'reason' AS by, d.reason AS key, count(*) AS n,
       extract(epoch FROM min(d.dlq_timestamp) AT TIME ZONE 'UTC') AS first_at,
       extract(epoch FROM max(d.updated_at) AT TIME ZONE 'UTC') AS last_at,
       (SELECT c.capped FROM c) AS capped
  FROM d
 GROUP BY d.reason
UNION ALL
SELECT 'queue', 'tasks_dlq', count(*),
       extract(epoch FROM min(d.dlq_timestamp) AT TIME ZONE 'UTC'),
       extract(epoch FROM max(d.updated_at) AT TIME ZONE 'UTC'),
       (SELECT c.capped FROM c)
  FROM d
HAVING count(*) > 0

[query dlq optional]
-- $1 limit $2 after sort_key $3 after id (NULL = first page) $4 'oldest': oldest first (`G`),
-- else newest first $5 text searched in the entry (NULL = all): pending entries; step_id:
-- the task's newest step in error, what a retry of the entry resets (the route needs the
-- task and the step). Each order is its own branch, so each walks the index its way.
-- uses index: tasks_dlq (dlq_timestamp, dlq_entry_uuid)
-- uses index: workflow_steps (task_uuid)
WITH d AS (
  (SELECT d.* FROM tasks_dlq d
    WHERE $4::text IS NULL AND d.resolution_status = 'pending'
      AND ($2::text IS NULL OR (d.dlq_timestamp, d.dlq_entry_uuid) < ($2::timestamp, $3::uuid))
      AND ($5::text IS NULL OR strpos(lower(d.dlq_entry_uuid::text || ' ' || d.task_uuid::text || ' '
          || d.dlq_reason::text || ' ' || COALESCE(d.original_state, '') || ' '
          || COALESCE(d.metadata::text, '')), lower($5)) > 0)
    ORDER BY d.dlq_timestamp DESC, d.dlq_entry_uuid DESC
    LIMIT $1::int)
  UNION ALL
  (SELECT d.* FROM tasks_dlq d
    WHERE $4::text = 'oldest' AND d.resolution_status = 'pending'
      AND ($2::text IS NULL OR (d.dlq_timestamp, d.dlq_entry_uuid) > ($2::timestamp, $3::uuid))
      AND ($5::text IS NULL OR strpos(lower(d.dlq_entry_uuid::text || ' ' || d.task_uuid::text || ' '
          || d.dlq_reason::text || ' ' || COALESCE(d.original_state, '') || ' '
          || COALESCE(d.metadata::text, '')), lower($5)) > 0)
    ORDER BY d.dlq_timestamp, d.dlq_entry_uuid
    LIMIT $1::int))
SELECT d.dlq_entry_uuid::text AS id,
       'tasks_dlq' AS queue,
       d.task_uuid::text AS execution_id,
       (SELECT s.workflow_step_uuid::text
          FROM workflow_steps s
          JOIN workflow_step_transitions t
            ON t.workflow_step_uuid = s.workflow_step_uuid AND t.most_recent
         WHERE s.task_uuid = d.task_uuid AND t.to_state = 'error'
         ORDER BY s.updated_at DESC, s.workflow_step_uuid DESC
         LIMIT 1) AS step_id,
       d.dlq_reason::text AS reason,
       NULL::text AS count,
       d.original_state AS origin_queue,
       extract(epoch FROM d.dlq_timestamp AT TIME ZONE 'UTC') AS first_death_at,
       extract(epoch FROM d.updated_at AT TIME ZONE 'UTC') AS last_death_at,
       left(jsonb_build_object('task_snapshot', d.task_snapshot, 'metadata', d.metadata,
                               'resolution_notes', d.resolution_notes)::text, 65536) AS payload,
       d.dlq_timestamp::text AS sort_key
  FROM d
 ORDER BY CASE WHEN $4::text = 'oldest' THEN d.dlq_timestamp END,
          CASE WHEN $4::text = 'oldest' THEN d.dlq_entry_uuid END,
          d.dlq_timestamp DESC, d.dlq_entry_uuid DESC

[query queues optional]
-- Only when the pgmq extension is installed (requires_queues above).
SELECT m.queue_name AS name,
       m.queue_length AS depth,
       m.queue_length AS ready,
       (m.queue_name LIKE '%dlq%') AS is_dlq
  FROM pgmq.metrics_all() m
 ORDER BY m.queue_name
 LIMIT 1000

[query outcome optional]
-- $1 the ids of executions a batch retried (text[], one page): what became of each retry
-- (actions/batchout.h), in standard words: outcome succeeded | failed | running, NULL while
-- the store shows no attempt of it yet; error: the attempt's error when it failed;
-- orig_error: the retried attempt's own (the group it is compared with when the batch
-- record froze none). One query a page, never one a item.
-- A step is retried in place (reset_for_retry): its state now, the most recent transition;
-- complete or resolved_manually succeeded, error or cancelled failed, anything else runs.
-- uses index: workflow_steps (workflow_step_uuid)
-- uses index: workflow_step_transitions (workflow_step_uuid)
SELECT s.workflow_step_uuid::text AS id,
       CASE WHEN COALESCE(t.to_state, 'pending') IN ('complete', 'resolved_manually') THEN 'succeeded'
            WHEN t.to_state IN ('error', 'cancelled') THEN 'failed'
            ELSE 'running' END AS outcome,
       left(COALESCE(s.results->'error'->>'message', s.results->>'error',
                     t.metadata->>'error'), 4096) AS error,
       CASE WHEN t.metadata->>'event' ~ '^\s*\{.*\}\s*$'
            THEN left(t.metadata->>'event', 65536) END AS error_json
  FROM workflow_steps s
  LEFT JOIN workflow_step_transitions t
         ON t.workflow_step_uuid = s.workflow_step_uuid AND t.most_recent
 WHERE s.workflow_step_uuid = ANY (ARRAY(
         SELECT x::uuid FROM unnest($1::text[]) x
          WHERE x ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'))

[action retry]
method = PATCH
path = /v1/tasks/{task}/workflow_steps/{id}
body = {"action_type":"reset_for_retry","reason":"{reason}","reset_by":"{operator}"}

# resolve: a tasks_dlq entry marked manually_resolved through the core's dlq_update route
# (`redrive resolve ENTRY`, `redrive resolve --dlq`; the reason becomes its notes)
[action resolve]
method = PATCH
path = /v1/dlq/entry/{id}
body = {"resolution_status":"manually_resolved","resolution_notes":"{reason}","resolved_by":"{operator}"}
