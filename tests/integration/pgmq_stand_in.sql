-- A stand-in for the pgmq extension (not packaged for Debian), for tests/integration/
-- test_pg_push_pgmq.py: the part of pgmq's API that Tasker and the console use (pgmq.meta,
-- pgmq.create, pgmq.send, pgmq.metrics_all, as pgmq 1.x names them), registered in
-- pg_extension so that the console finds "pgmq" installed as it would. Then Tasker's own
-- notification functions, in the shape of its migration add_pgmq_notifications
-- (tasker-core): pgmq_send_with_notify notifies 'pgmq_message_ready.<namespace>' and
-- 'pgmq_message_ready'; a trigger on pgmq.meta notifies 'pgmq_queue_created'.
-- Loaded by the superuser into a database of its own (dropped after the test).
CREATE SCHEMA pgmq;

CREATE TABLE pgmq.meta (
    queue_name varchar UNIQUE NOT NULL,
    is_partitioned boolean NOT NULL DEFAULT false,
    is_unlogged boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now());

CREATE FUNCTION pgmq.create(queue_name text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE TABLE IF NOT EXISTS pgmq.%I (msg_id bigserial PRIMARY KEY, '
                   'read_ct integer NOT NULL DEFAULT 0, enqueued_at timestamptz NOT NULL '
                   'DEFAULT now(), vt timestamptz NOT NULL, message jsonb)', 'q_' || queue_name);
    INSERT INTO pgmq.meta (queue_name) VALUES (queue_name) ON CONFLICT DO NOTHING;
END $$;

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, delay integer DEFAULT 0)
RETURNS SETOF bigint LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('INSERT INTO pgmq.%I (vt, message) VALUES '
                                '(now() + make_interval(secs => $1), $2) RETURNING msg_id',
                                'q_' || queue_name) USING delay, msg;
END $$;

CREATE FUNCTION pgmq.metrics_all()
RETURNS TABLE (queue_name text, queue_length bigint, newest_msg_age_sec integer,
               oldest_msg_age_sec integer, total_messages bigint, scrape_time timestamptz)
LANGUAGE plpgsql AS $$
DECLARE q text;
BEGIN
    FOR q IN SELECT m.queue_name FROM pgmq.meta m ORDER BY 1 LOOP
        RETURN QUERY EXECUTE format(
            'SELECT %L::text, count(*), extract(epoch FROM now() - max(enqueued_at))::int, '
            'extract(epoch FROM now() - min(enqueued_at))::int, '
            'coalesce(max(msg_id), 0), now() FROM pgmq.%I', q, 'q_' || q);
    END LOOP;
END $$;

INSERT INTO pg_catalog.pg_extension (oid, extname, extowner, extnamespace, extrelocatable,
                                     extversion)
SELECT (SELECT max(oid::text::bigint) + 1 FROM pg_catalog.pg_extension)::text::oid, 'pgmq',
       (SELECT oid FROM pg_roles WHERE rolname = current_user),
       (SELECT oid FROM pg_namespace WHERE nspname = 'pgmq'), false, '1.4.4';

-- Tasker's migration (its notification part).
CREATE FUNCTION public.extract_queue_namespace(queue_name text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce((regexp_match(queue_name, '^worker_([a-zA-Z][a-zA-Z0-9_]*)_queue$'))[1],
                    (regexp_match(queue_name, '^([a-zA-Z][a-zA-Z0-9_]*)_queue$'))[1], 'default')
$$;

CREATE FUNCTION public.pgmq_notify_queue_created() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('pgmq_queue_created', json_build_object(
        'event_type', 'queue_created', 'queue_name', NEW.queue_name,
        'namespace', extract_queue_namespace(NEW.queue_name), 'created_at', now())::text);
    RETURN NEW;
END $$;

CREATE TRIGGER pgmq_queue_created_trigger AFTER INSERT ON pgmq.meta
    FOR EACH ROW EXECUTE FUNCTION public.pgmq_notify_queue_created();

CREATE FUNCTION public.pgmq_send_with_notify(queue_name text, message jsonb,
                                             delay_seconds integer DEFAULT 0)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    msg_id bigint;
    ns text := extract_queue_namespace(queue_name);
    payload text;
BEGIN
    SELECT pgmq.send(queue_name, message, delay_seconds) INTO msg_id;
    payload := json_build_object('event_type', 'message_ready', 'msg_id', msg_id,
                                 'queue_name', queue_name, 'namespace', ns,
                                 'ready_at', now(), 'delay_seconds', delay_seconds)::text;
    PERFORM pg_notify('pgmq_message_ready.' || ns, payload);
    PERFORM pg_notify('pgmq_message_ready', payload);
    RETURN msg_id;
END $$;
