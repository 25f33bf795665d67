# Attune (seeds 000, 003): PostgreSQL execution store, RabbitMQ broker and DLQ.
# The schema has two eras; `variant_query` picks the matching profile on every connect:
#   attune-era1.profile  phase-3 code: retry metadata in execution.config JSON (public schema)
#   attune-era2.profile  later: retry columns, execution.worker, cordons (schema attune)
# The action routes live here only: they do not depend on the era, and both era files
# name this profile in `actions_from`.
[profile]
name = attune
store = postgresql
semantics = attune
variant_query = detect
dlq_source = broker

[query detect]
SELECT CASE WHEN to_regclass('attune.execution') IS NOT NULL THEN 'attune-era2'
            ELSE 'attune-era1' END

[action retry]
method = POST
path = /api/v1/executions/{id}/retry
body = {"reason":"{reason}"}

[action drain]
method = POST
path = /api/v1/workers/{worker}/cordon
body = {"reason":"{reason}"}

[action undrain]
method = POST
path = /api/v1/workers/{worker}/uncordon

[action deactivate]
method = POST
path = /api/v1/workers/{worker}/deactivate

[action activate]
method = POST
path = /api/v1/workers/{worker}/activate
