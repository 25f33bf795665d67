#!/usr/bin/env bash
# The stack's SQS emulator (tools/sqs-emulator: local-aws-sqs 2.0.2, pinned, installed by
# scripts/setup.sh): one node process on 127.0.0.1:(RD_PORT_BASE+30) with Alakai's dispatch
# queue `alakai-dispatch` and its DLQ `alakai-dispatch-dlq` (RedrivePolicy maxReceiveCount 3).
#   bash tests/stack/sqs.sh start DIR [BASE]    # idempotent; appends RD_SQS_* to DIR/env
#   bash tests/stack/sqs.sh stop DIR
#   bash tests/stack/sqs.sh status DIR
# The env lines also name a shared credentials file with the profile redrive-local
# (made-up keys: the emulator checks no signature) for the demo config's aws_profile.
# Called by stack.sh start/stop/status. The emulator keeps messages in memory only: a
# restart empties the queues.
set -uo pipefail
CMD=${1:-}; DIR=${2:-}
[ -n "$CMD" ] && [ -n "$DIR" ] || { echo "usage: sqs.sh start|stop|status DIR [BASE]" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
EMU=$ROOT/tools/sqs-emulator
BASE=${3:-${RD_PORT_BASE:-$(cat "$DIR/base" 2>/dev/null || echo 25400)}}
PORT=$((BASE + 30))
SQ=$DIR/sqs
PIDF=$SQ/sqs.pid
QUEUE=alakai-dispatch
DLQ=alakai-dispatch-dlq
ACCOUNT=123456789012

log() { echo "sqs.sh: $*" >&2; }

alive() { [ -f "$PIDF" ] && kill -0 "$(cat "$PIDF")" 2>/dev/null; }

answers() {
    curl -s -m 2 -o /dev/null -w '%{http_code}' -X POST \
        -H 'X-Amz-Target: AmazonSQS.ListQueues' -H 'Content-Type: application/x-amz-json-1.0' \
        -d '{}' "http://127.0.0.1:$PORT/" 2>/dev/null | grep -q 200
}

env_lines() {
    echo "export RD_SQS_PORT=$PORT"
    echo "export RD_SQS_ENDPOINT=http://127.0.0.1:$PORT"
    echo "export RD_SQS_REGION=us-east-1"
    echo "export RD_SQS_QUEUE_URL=http://127.0.0.1:$PORT/$ACCOUNT/$QUEUE"
    echo "export RD_SQS_DLQ_URL=http://127.0.0.1:$PORT/$ACCOUNT/$DLQ"
    echo "export RD_SQS_MAX_RECEIVE=3"
    # the emulator checks no signature: a profile with made-up keys for the demo config
    echo "export RD_SQS_AWS_PROFILE=redrive-local"
    echo "export AWS_SHARED_CREDENTIALS_FILE=$SQ/aws-credentials"
}

write_credentials() {
    umask 077
    printf '[redrive-local]\naws_access_key_id = AKIDREDRIVELOCAL\naws_secret_access_key = local-emulator-checks-no-signature\n' \
        >"$SQ/aws-credentials"
}

write_env() {
    [ -f "$DIR/env" ] || return 0
    write_credentials
    grep -v '^export RD_SQS_\|^export AWS_SHARED_CREDENTIALS_FILE=' "$DIR/env" >"$DIR/env.sqs.tmp"
    env_lines >>"$DIR/env.sqs.tmp"
    mv "$DIR/env.sqs.tmp" "$DIR/env"
}

start() {
    if [ ! -f "$EMU/node_modules/local-aws-sqs/package.json" ]; then
        log "tools/sqs-emulator is not installed (run scripts/setup.sh)"; return 1
    fi
    mkdir -p "$SQ"
    if alive && answers; then write_env; return 0; fi
    alive && kill "$(cat "$PIDF")" 2>/dev/null
    # the last argument names DIR in the command line: stack.sh's sweep finds it
    (cd "$SQ" && exec setsid node "$EMU/server.js" "$PORT" "$QUEUE" "$DLQ" 3 "$DIR" \
        >"$SQ/sqs.log" 2>&1 </dev/null & echo $! >"$PIDF")
    local i
    for i in $(seq 1 50); do
        if answers; then write_env; return 0; fi
        sleep 0.1
    done
    log "emulator did not answer on port $PORT:"; tail -5 "$SQ/sqs.log" >&2
    return 1
}

stop() {
    if alive; then
        local p; p=$(cat "$PIDF")
        kill "$p" 2>/dev/null
        local i; for i in $(seq 1 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$p" 2>/dev/null
    fi
    rm -f "$PIDF"
    return 0
}

status() {
    if alive && answers; then echo "sqs: up (port $PORT, $QUEUE, $DLQ)"; return 0; fi
    echo "sqs: down"; return 1
}

case "$CMD" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) echo "usage: sqs.sh start|stop|status DIR [BASE]" >&2; exit 2 ;;
esac
