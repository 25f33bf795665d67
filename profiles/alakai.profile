# Alakai (seed 002): Redis execution store, one hash per task at {prefix}:{taskId}, one
# field per attempt (JSON ExecutionRecord). No SQL: the Redis source reads it; the config
# gives `prefix`, `max_retries` (MAX_RETRIES, default 1) and `orphan_after` (default 2h).
# Only retry exists on its core API.
[profile]
name = alakai
store = redis
semantics = alakai

[action retry]
method = POST
path = /dashboard/executions/{id}/retry
