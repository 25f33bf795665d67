#!/usr/bin/env bash
# One service of a running local stack (tests/stack/stack.sh), for fault injection.
#
#   bash tests/fault/svc.sh pids SERVICE DIR      # the pids a fault is sent to, one a line
#   bash tests/fault/svc.sh restart SERVICE DIR   # start SERVICE again (after a SIGKILL); waits
#                                                 # until it answers; exit 1 if it does not
#   bash tests/fault/svc.sh ready SERVICE DIR     # exit 0 when SERVICE answers
#   bash tests/fault/svc.sh restore SERVICE DIR   # reload the fixture data a restart lost
#
# SERVICE: postgresql, redis, rabbitmq, sqs, core-attune1 ... core-openagents.
# The stack's own functions are used (stack.sh is sourced: definitions only), so a service
# comes back exactly as `stack.sh start` starts it, and nothing else is touched.
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: svc.sh pids|restart|ready|restore SERVICE DIR" >&2; exit 2; }
VERB=$1; SVC=$2; SDIR=$3
FHERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STACK_SH=$FHERE/../stack/stack.sh
[ -f "$SDIR/base" ] || { echo "svc.sh: $SDIR is not a stack DIR" >&2; exit 2; }

# shellcheck source=../stack/stack.sh
. "$STACK_SH" status "$SDIR"
choose_base
RUSER=${RD_RABBIT_USER_DEFAULT}; RPASS=${RD_RABBIT_PASSWORD_DEFAULT}
pg_vars

svc_pids() {
    local p
    case "$SVC" in
        postgresql)   # the postmaster and every backend: the whole server hangs or dies
            for p in $(dir_pids); do [ "$(comm_of "$p")" = postgres ] && echo "$p"; done ;;
        redis) cat "$DIR/redis/redis.pid" 2>/dev/null ;;
        rabbitmq) cat "$DIR/rabbit/rabbit.pid" 2>/dev/null ;;
        sqs) cat "$DIR/sqs/sqs.pid" 2>/dev/null ;;
        core-*) cat "$DIR/core/${SVC#core-}.pid" 2>/dev/null ;;
        *) echo "svc.sh: unknown service $SVC" >&2; return 2 ;;
    esac
}

svc_ready() {
    case "$SVC" in
        postgresql) pg_ready ;;
        redis) redis_ready ;;
        rabbitmq) rabbit_ready ;;
        sqs) bash "$HERE/sqs.sh" status "$DIR" "$BASE" >/dev/null ;;
        core-*) [ -n "$(listeners "$(core_port "${SVC#core-}")")" ] ;;
        *) return 2 ;;
    esac
}

svc_restart() {
    case "$SVC" in
        postgresql)   # a SIGKILLed postmaster may linger as a zombie until init reaps it:
            # postgres would take its postmaster.pid and socket lock files for a live server
            local opid st="" i
            opid=$(head -n1 "$PGDATA_/postmaster.pid" 2>/dev/null)
            for i in $(seq 1 100); do
                st=""
                [ -n "$opid" ] && { read -r _ _ st _ <"/proc/$opid/stat"; } 2>/dev/null
                [ "$st" = Z ] || break
                sleep 0.1
            done
            if [ -n "$opid" ] && { [ -z "$st" ] || [ "$st" = Z ]; }; then
                rm -f "$PGDATA_/postmaster.pid" "$PGSOCK"/.s.PGSQL.*.lock
            fi
            pg_start ;;
        redis) redis_start ;;
        rabbitmq) rabbit_start && consumer_start ;;
        sqs)   # node may find the port still held a moment after the SIGKILL (EADDRINUSE)
            local k
            for k in 1 2 3; do
                bash "$HERE/sqs.sh" start "$DIR" "$BASE" && return 0
                sleep 1
            done
            return 1 ;;
        core-*) core_start ;;   # starts only the core servers that are not running
        *) return 2 ;;
    esac
}

svc_restore() {
    case "$SVC" in
        redis) "$PY" "$HERE/fixtures.py" --env-file "$DIR/env" reload alakai ;;
        rabbitmq) "$PY" "$HERE/fixtures.py" --env-file "$DIR/env" reload rabbit ;;
        *) return 0 ;;   # PostgreSQL keeps its data; the SQS queues are created at start
    esac
}

case "$VERB" in
    pids) svc_pids ;;
    ready) svc_ready ;;
    restart) svc_ready || svc_restart ;;
    restore) svc_restore >>"$DIR/fixtures.log" 2>&1 ;;
    *) echo "usage: svc.sh pids|restart|ready|restore SERVICE DIR" >&2; exit 2 ;;
esac
