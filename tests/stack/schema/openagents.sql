-- OpenAgents JSON job framework (SQLAlchemy store): schema `public`.
-- Written from reference/systems.md. Times are float epoch seconds; status is varchar and
-- may hold enum NAMES in upper case ("FAILED") as well as lower-case values.

CREATE TABLE jobs (
    job_id varchar(36) PRIMARY KEY,
    name varchar(255) NOT NULL,
    description text,
    payload json,
    status varchar(20) NOT NULL DEFAULT 'created',
    priority integer NOT NULL DEFAULT 0,
    max_retries integer DEFAULT 0,
    retry_delay integer,
    retry_policy json,
    timeout integer,
    metadata json,
    created_at double precision NOT NULL,
    updated_at double precision,
    started_at double precision,
    completed_at double precision,
    result json,
    error json,
    retry_count integer DEFAULT 0,
    batch_id varchar(36),
    worker_id varchar(64)
);
CREATE INDEX idx_jobs_created ON jobs (created_at DESC, job_id DESC);
CREATE INDEX idx_jobs_status ON jobs (status);
CREATE INDEX idx_jobs_failed ON jobs (created_at DESC, job_id DESC) WHERE lower(status) = 'failed';
CREATE INDEX idx_jobs_worker ON jobs (worker_id);
CREATE INDEX idx_jobs_batch ON jobs (batch_id);

CREATE TABLE workers (
    worker_id varchar(64) PRIMARY KEY,
    hostname varchar(255),
    pid integer,
    tags json,
    max_concurrent_jobs integer DEFAULT 5,
    started_at double precision,
    last_heartbeat double precision,
    status varchar(20) NOT NULL DEFAULT 'active',
    running_jobs json,
    metadata json
);
CREATE INDEX idx_workers_heartbeat ON workers (last_heartbeat);

CREATE TABLE tags (
    name varchar(64) PRIMARY KEY,
    description text
);

CREATE TABLE job_tags (
    job_id varchar(36) NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
    tag varchar(64) NOT NULL,
    PRIMARY KEY (job_id, tag)
);
CREATE INDEX idx_job_tags_tag ON job_tags (tag);

CREATE TABLE job_dependencies (
    job_id varchar(36) NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
    dependency_id varchar(36) NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
    PRIMARY KEY (job_id, dependency_id)
);
