-- Attune, era 2 (May 2026 on): schema `attune` (the database sets
-- search_path = attune, public). The retry columns are written (retry_count, max_retries,
-- retry_reason, original_execution); execution.worker (FK worker) and started_at exist;
-- worker has cordon columns. Written from reference/systems.md.
CREATE SCHEMA attune;
SET search_path = attune, public;

CREATE TYPE execution_status_enum AS ENUM (
    'requested', 'scheduling', 'scheduled', 'running', 'completed', 'failed',
    'canceling', 'cancelled', 'timeout', 'abandoned');
CREATE TYPE worker_status_enum AS ENUM ('active', 'inactive', 'busy', 'error');
CREATE TYPE worker_type_enum AS ENUM ('local', 'remote', 'container');
CREATE TYPE worker_role_enum AS ENUM ('action', 'sensor', 'hybrid');

CREATE OR REPLACE FUNCTION update_updated_column() RETURNS trigger AS $$
BEGIN
    NEW.updated = now();
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TABLE action (
    id bigserial PRIMARY KEY,
    ref text NOT NULL UNIQUE,
    label text,
    created timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE worker (
    id bigserial PRIMARY KEY,
    name text NOT NULL UNIQUE,
    worker_type worker_type_enum NOT NULL DEFAULT 'local',
    worker_role worker_role_enum NOT NULL DEFAULT 'action',
    runtime bigint,
    host text,
    port integer,
    status worker_status_enum DEFAULT 'active',
    capabilities jsonb,
    meta jsonb,
    last_heartbeat timestamptz,
    created timestamptz NOT NULL DEFAULT now(),
    updated timestamptz NOT NULL DEFAULT now(),
    cordoned boolean NOT NULL DEFAULT false,
    cordon_reason text,
    cordoned_by bigint,
    cordoned_at timestamptz
);
CREATE TRIGGER worker_updated BEFORE UPDATE ON worker
    FOR EACH ROW EXECUTE FUNCTION update_updated_column();
CREATE INDEX idx_worker_status ON worker (status);
CREATE INDEX idx_worker_last_heartbeat ON worker (last_heartbeat);

CREATE TABLE execution (
    id bigserial PRIMARY KEY,
    action bigint REFERENCES action (id) ON DELETE SET NULL,
    action_ref text NOT NULL,
    config jsonb,
    env_vars jsonb,
    parent bigint REFERENCES execution (id) ON DELETE SET NULL,
    enforcement bigint,
    executor bigint,
    status execution_status_enum NOT NULL DEFAULT 'requested',
    result jsonb,
    created timestamptz NOT NULL DEFAULT now(),
    updated timestamptz NOT NULL DEFAULT now(),
    is_workflow boolean NOT NULL DEFAULT false,
    workflow_def bigint,
    workflow_task jsonb,
    retry_count integer NOT NULL DEFAULT 0,
    max_retries integer,
    retry_reason text,
    original_execution bigint REFERENCES execution (id) ON DELETE SET NULL,
    worker bigint REFERENCES worker (id) ON DELETE SET NULL,
    started_at timestamptz
);
CREATE TRIGGER execution_updated BEFORE UPDATE ON execution
    FOR EACH ROW EXECUTE FUNCTION update_updated_column();

-- Attune's LISTEN/NOTIFY triggers, as its migration
-- 20250101000005_execution_and_operations.sql (later era) writes them: the console LISTENs on these channels (docs/sources.md "Push"). The
-- enforcement lookup (rule_ref, trigger_ref) is left out: this schema has no enforcement
-- table, and the payload is not read (a notification only says "refresh").
CREATE OR REPLACE FUNCTION notify_execution_created() RETURNS trigger AS $$
DECLARE
    payload JSON;
BEGIN
    payload := json_build_object(
        'entity_type', 'execution',
        'entity_id', NEW.id,
        'id', NEW.id,
        'action_id', NEW.action,
        'action_ref', NEW.action_ref,
        'status', NEW.status,
        'enforcement', NEW.enforcement,
        'parent', NEW.parent,
        'started_at', NEW.started_at,
        'workflow_task', NEW.workflow_task,
        'created', NEW.created,
        'updated', NEW.updated
    );
    PERFORM pg_notify('execution_created', payload::text);
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION notify_execution_status_changed() RETURNS trigger AS $$
DECLARE
    payload JSON;
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.status IS DISTINCT FROM NEW.status THEN
        payload := json_build_object(
            'entity_type', 'execution',
            'entity_id', NEW.id,
            'id', NEW.id,
            'action_id', NEW.action,
            'action_ref', NEW.action_ref,
            'status', NEW.status,
            'old_status', OLD.status,
            'enforcement', NEW.enforcement,
            'parent', NEW.parent,
            'started_at', NEW.started_at,
            'workflow_task', NEW.workflow_task,
            'created', NEW.created,
            'updated', NEW.updated
        );
        PERFORM pg_notify('execution_status_changed', payload::text);
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER execution_created_notify AFTER INSERT ON execution
    FOR EACH ROW EXECUTE FUNCTION notify_execution_created();
CREATE TRIGGER execution_status_changed_notify AFTER UPDATE ON execution
    FOR EACH ROW EXECUTE FUNCTION notify_execution_status_changed();
CREATE INDEX idx_execution_created_id ON execution (created DESC, id DESC);
CREATE INDEX idx_execution_status ON execution (status);
-- Attune's own index (its execution migration)
CREATE INDEX idx_execution_status_created ON execution (status, created DESC);
CREATE INDEX idx_execution_status_updated ON execution (status, updated DESC);
-- Attune's partial index of exactly the retry-eligible failures (its execution migration)
CREATE INDEX idx_execution_status_retry ON execution (status, retry_count)
    WHERE status = 'failed' AND retry_count < COALESCE(max_retries, 0);
CREATE INDEX idx_execution_failed ON execution (created DESC, id DESC) WHERE status = 'failed';
CREATE INDEX idx_execution_action_ref ON execution (action_ref);
CREATE INDEX idx_execution_parent ON execution (parent);
CREATE INDEX idx_execution_original_execution ON execution (original_execution)
    WHERE original_execution IS NOT NULL;
CREATE INDEX idx_execution_worker ON execution (worker);
CREATE INDEX idx_execution_config_retry_of ON execution (((config ->> 'retry_of')::bigint))
    WHERE config ? 'retry_of';

CREATE TABLE queue_stats (
    action_id bigint PRIMARY KEY REFERENCES action (id) ON DELETE CASCADE,
    queue_length integer NOT NULL DEFAULT 0,
    active_count integer NOT NULL DEFAULT 0,
    max_concurrent integer NOT NULL DEFAULT 1,
    oldest_enqueued_at timestamptz,
    total_enqueued bigint NOT NULL DEFAULT 0,
    total_completed bigint NOT NULL DEFAULT 0,
    last_updated timestamptz NOT NULL DEFAULT now()
);

CREATE VIEW healthy_workers AS
SELECT w.*
  FROM worker w
 WHERE w.status = 'active'
   AND NOT w.cordoned
   AND w.last_heartbeat > now() - interval '30 seconds'
   AND (w.capabilities -> 'health' IS NULL
        OR w.capabilities -> 'health' ->> 'status' IN ('healthy', 'degraded'));

CREATE OR REPLACE FUNCTION get_worker_queue_depth(worker_id bigint) RETURNS integer AS $$
    SELECT COALESCE((capabilities -> 'health' ->> 'queue_depth')::integer, 0)
      FROM worker WHERE id = worker_id;
$$ LANGUAGE sql STABLE;

CREATE OR REPLACE FUNCTION is_execution_retriable(execution_id bigint) RETURNS boolean AS $$
    SELECT e.status = 'failed'
       AND COALESCE(NULLIF(e.max_retries, 0), (e.config ->> 'max_retries')::integer, 0) > 0
       AND GREATEST(e.retry_count, COALESCE((e.config ->> 'retry_count')::integer, 0))
           < COALESCE(NULLIF(e.max_retries, 0), (e.config ->> 'max_retries')::integer, 0)
      FROM execution e WHERE e.id = execution_id;
$$ LANGUAGE sql STABLE;
