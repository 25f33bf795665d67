# Alakai (seed 002): Redis execution store, one hash per task at {prefix}:{taskId}, one
# field per attempt (JSON ExecutionRecord). No SQL: the Redis source reads it; the config
# gives `prefix`, `max_retries` (MAX_RETRIES, default 1) and `orphan_after` (default 2h).
# Only retry exists on its core API.
[profile]
name = alakai
store = redis
semantics = alakai
# A batch's outcome (actions/batchout.h): the task's next attempt field (the attempt the
# retry made), its status in standard words; a status named nowhere here is running.
outcome_succeeded = succeeded
outcome_failed = failed lost
outcome_running = running

[action retry]
method = POST
path = /dashboard/executions/{id}/retry
