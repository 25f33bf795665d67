-- Tasker (tasker-core): schema `tasker`. Written from reference/systems.md.
-- Steps have no state column: a step's state is to_state of its most_recent transition.
-- Timestamps are `timestamp without time zone` (UTC by convention).
CREATE SCHEMA tasker;
SET search_path = tasker, public;

CREATE TYPE dlq_reason AS ENUM (
    'staleness_timeout', 'max_retries_exceeded', 'dependency_cycle_detected',
    'worker_unavailable', 'manual_dlq');
CREATE TYPE dlq_resolution_status AS ENUM (
    'pending', 'manually_resolved', 'permanently_failed', 'cancelled');

CREATE TABLE named_tasks (
    named_task_uuid uuid PRIMARY KEY,
    namespace_name varchar(64) NOT NULL DEFAULT 'default',
    name varchar(128) NOT NULL,
    version varchar(16) NOT NULL DEFAULT '1.0.0',
    description text,
    configuration jsonb,
    created_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    UNIQUE (namespace_name, name, version)
);

CREATE TABLE named_steps (
    named_step_uuid uuid PRIMARY KEY,
    name varchar(128) NOT NULL,
    description text,
    created_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc')
);

CREATE TABLE tasks (
    task_uuid uuid PRIMARY KEY,
    named_task_uuid uuid NOT NULL REFERENCES named_tasks (named_task_uuid),
    complete boolean NOT NULL DEFAULT false,
    requested_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    completed_at timestamp,
    initiator varchar(128),
    source_system varchar(128),
    reason varchar(128),
    tags jsonb,
    context jsonb,
    identity_hash varchar(128) NOT NULL,
    priority integer NOT NULL DEFAULT 0,
    correlation_id uuid NOT NULL,
    parent_correlation_id uuid,
    created_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc')
);
CREATE INDEX idx_tasks_requested_at ON tasks (requested_at DESC, task_uuid DESC);
CREATE INDEX idx_tasks_named_task ON tasks (named_task_uuid);
CREATE INDEX idx_tasks_incomplete ON tasks (requested_at DESC) WHERE NOT complete;
CREATE INDEX idx_tasks_correlation ON tasks (correlation_id);

CREATE TABLE workflow_steps (
    workflow_step_uuid uuid PRIMARY KEY,
    task_uuid uuid NOT NULL REFERENCES tasks (task_uuid) ON DELETE CASCADE,
    named_step_uuid uuid NOT NULL REFERENCES named_steps (named_step_uuid),
    retryable boolean NOT NULL DEFAULT true,
    max_attempts integer DEFAULT 3,
    in_process boolean NOT NULL DEFAULT false,
    processed boolean NOT NULL DEFAULT false,
    processed_at timestamp,
    attempts integer,
    last_attempted_at timestamp,
    backoff_request_seconds integer,
    inputs jsonb,
    results jsonb,
    created_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    priority integer NOT NULL DEFAULT 0,
    checkpoint jsonb
);
CREATE INDEX idx_workflow_steps_task ON workflow_steps (task_uuid);
CREATE INDEX idx_workflow_steps_created ON workflow_steps (created_at DESC, workflow_step_uuid DESC);
CREATE INDEX idx_workflow_steps_unprocessed ON workflow_steps (task_uuid) WHERE NOT processed;

CREATE TABLE workflow_step_transitions (
    workflow_step_transition_uuid uuid PRIMARY KEY,
    workflow_step_uuid uuid NOT NULL REFERENCES workflow_steps (workflow_step_uuid) ON DELETE CASCADE,
    to_state varchar(64) NOT NULL,
    from_state varchar(64),
    metadata jsonb DEFAULT '{}'::jsonb,
    sort_key integer NOT NULL,
    most_recent boolean NOT NULL DEFAULT false,
    created_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    UNIQUE (workflow_step_uuid, sort_key)
);
CREATE UNIQUE INDEX idx_step_transitions_most_recent ON workflow_step_transitions (workflow_step_uuid)
    WHERE most_recent;
CREATE INDEX idx_step_transitions_state ON workflow_step_transitions (to_state) WHERE most_recent;
CREATE INDEX idx_step_transitions_step_sort ON workflow_step_transitions (workflow_step_uuid, sort_key);

CREATE TABLE task_transitions (
    task_transition_uuid uuid PRIMARY KEY,
    task_uuid uuid NOT NULL REFERENCES tasks (task_uuid) ON DELETE CASCADE,
    to_state varchar(64) NOT NULL,
    from_state varchar(64),
    metadata jsonb DEFAULT '{}'::jsonb,
    sort_key integer NOT NULL,
    most_recent boolean NOT NULL DEFAULT false,
    created_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    UNIQUE (task_uuid, sort_key)
);
CREATE UNIQUE INDEX idx_task_transitions_most_recent ON task_transitions (task_uuid) WHERE most_recent;
CREATE INDEX idx_task_transitions_state ON task_transitions (to_state) WHERE most_recent;

CREATE TABLE tasks_dlq (
    dlq_entry_uuid uuid PRIMARY KEY,
    task_uuid uuid NOT NULL REFERENCES tasks (task_uuid) ON DELETE CASCADE,
    original_state varchar(64) NOT NULL,
    dlq_reason dlq_reason NOT NULL,
    dlq_timestamp timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    resolution_status dlq_resolution_status NOT NULL DEFAULT 'pending',
    resolution_timestamp timestamp,
    resolution_notes text,
    resolved_by varchar(128),
    task_snapshot jsonb,
    metadata jsonb,
    created_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
    updated_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc')
);
-- one pending entry per task
CREATE UNIQUE INDEX idx_dlq_unique_pending_task ON tasks_dlq (task_uuid) WHERE resolution_status = 'pending';
CREATE INDEX idx_dlq_timestamp ON tasks_dlq (dlq_timestamp DESC, dlq_entry_uuid DESC);
CREATE INDEX idx_dlq_pending ON tasks_dlq (dlq_timestamp DESC) WHERE resolution_status = 'pending';

CREATE VIEW v_dlq_dashboard AS
SELECT dlq_reason,
       count(*) AS total_entries,
       count(*) FILTER (WHERE resolution_status = 'pending') AS pending,
       count(*) FILTER (WHERE resolution_status = 'manually_resolved') AS manually_resolved,
       count(*) FILTER (WHERE resolution_status = 'permanently_failed') AS permanent_failures,
       count(*) FILTER (WHERE resolution_status = 'cancelled') AS cancelled,
       min(dlq_timestamp) AS oldest_entry,
       max(dlq_timestamp) AS newest_entry
  FROM tasks_dlq
 GROUP BY dlq_reason;

CREATE VIEW v_dlq_investigation_queue AS
SELECT d.dlq_entry_uuid, d.task_uuid, d.original_state, d.dlq_reason, d.dlq_timestamp,
       EXTRACT(EPOCH FROM ((now() AT TIME ZONE 'utc') - d.dlq_timestamp)) / 60.0 AS minutes_in_dlq,
       nt.namespace_name, nt.name AS task_name
  FROM tasks_dlq d
  JOIN tasks t ON t.task_uuid = d.task_uuid
  JOIN named_tasks nt ON nt.named_task_uuid = t.named_task_uuid
 WHERE d.resolution_status = 'pending'
 ORDER BY d.dlq_timestamp;
