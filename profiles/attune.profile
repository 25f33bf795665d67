# Attune (seeds 000, 003): PostgreSQL execution store, RabbitMQ broker and DLQ.
# The schema has two eras; `variant_query` picks the matching profile on every connect, by
# the columns present in the system's schema (never by its name):
#   attune-era1.profile  phase-3 code: retry metadata in execution.config JSON
#   attune-era2.profile  later: execution.worker, worker cordons (and the retry columns)
# The schema is Attune's `database.schema` (config `schema`, default below); the source sets
# search_path = <schema>, public before the detect query, so era 1 in public is found too.
# The action routes live here only: they do not depend on the era, and both era files
# name this profile in `actions_from`.
[profile]
name = attune
store = postgresql
semantics = attune
variant_query = detect
dlq_source = broker
schema = attune

[query detect]
-- era 2 has execution.worker and worker.cordoned; names resolve through search_path
SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_attribute
                          WHERE attrelid = to_regclass('execution') AND attname = 'worker'
                            AND attnum > 0 AND NOT attisdropped)
             AND EXISTS (SELECT 1 FROM pg_attribute
                          WHERE attrelid = to_regclass('worker') AND attname = 'cordoned'
                            AND attnum > 0 AND NOT attisdropped)
            THEN 'attune-era2' ELSE 'attune-era1' END

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
