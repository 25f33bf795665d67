#!/usr/bin/env bash
# Print a redrive config for the local stack described by the env file $1.
set -euo pipefail
# shellcheck disable=SC1090
. "$1"
cat <<CFG
# redrive demo configuration: the local stack, every supported system.
# Secrets are references (env:NAME), never literals.

[system "attune"]
profile = attune
store = $RD_PG_DSN_ATTUNE2
broker = $RD_RABBIT_MGMT_URL
broker_user = $RD_RABBIT_USER
broker_password = env:RD_RABBIT_PASSWORD
dlq = attune.dlx.queue, *_dlq
queues = worker.*.executions, attune.*
core = $RD_CORE_URL_ATTUNE2
auth = jwt-login
login = $RD_CORE_LOGIN
password = env:RD_CORE_PASSWORD
banner = DEMO
poll = 2s

[system "attune-era1"]
profile = attune
store = $RD_PG_DSN_ATTUNE1
broker = $RD_RABBIT_MGMT_URL
broker_user = $RD_RABBIT_USER
broker_password = env:RD_RABBIT_PASSWORD
dlq = attune.dlx.queue
core = $RD_CORE_URL_ATTUNE1
auth = jwt-login
login = $RD_CORE_LOGIN
password = env:RD_CORE_PASSWORD
banner = DEMO

[system "tasker"]
profile = tasker
store = $RD_PG_DSN_TASKER
core = $RD_CORE_URL_TASKER
workers = $RD_CORE_URL_TASKER
auth = api-key
token = env:RD_CORE_API_KEY
banner = DEMO

[system "alakai"]
profile = alakai
store = $RD_REDIS_URL
core = $RD_CORE_URL_ALAKAI
auth = dev-user
dev_user = demo-operator
local = true
max_retries = 1
orphan_after = 2h
banner = LOCAL
$(if [ -n "${RD_SQS_QUEUE_URL:-}" ]; then
  printf 'sqs_queue_url = %s\nsqs_endpoint = %s\nsqs_region = %s\naws_profile = %s\n' \
    "$RD_SQS_QUEUE_URL" "$RD_SQS_ENDPOINT" "$RD_SQS_REGION" "$RD_SQS_AWS_PROFILE"
fi)

[system "openagents"]
profile = openagents
store = $RD_PG_DSN_OPENAGENTS
core = $RD_CORE_URL_OPENAGENTS
auth = bearer
token = env:RD_CORE_TOKEN
banner = DEMO
CFG
