#!/usr/bin/env bash
# Replicas of the stack's stores, for reading from standbys (docs/sources.md): a PostgreSQL
# streaming standby of the stack's cluster (pg_basebackup -R, hot standby) on
# (RD_PORT_BASE+31) with its own socket directory DIR/pg-standby/sock, and a Redis replica
# (replicaof the stack's Redis +1, notify-keyspace-events KEA, read-only) on +32.
#   bash tests/stack/standbys.sh start DIR [BASE]   # idempotent; appends RD_*STANDBY*/REPLICA* to DIR/env
#   bash tests/stack/standbys.sh stop DIR [BASE]
#   bash tests/stack/standbys.sh status DIR [BASE]
# Called by `stack.sh standbys DIR`, by `stack.sh start` when RD_STACK_STANDBYS=1, and by
# `stack.sh stop` (always). Not started otherwise: the normal start does not wait for them.
set -uo pipefail
CMD=${1:-}; DIR=${2:-}
[ -n "$CMD" ] && [ -n "$DIR" ] || { echo "usage: standbys.sh start|stop|status DIR [BASE]" >&2; exit 2; }
DIR=${DIR%/}
PGBIN=/usr/lib/postgresql/15/bin
BASE=${3:-$(cat "$DIR/base" 2>/dev/null || echo "${RD_PORT_BASE:-25400}")}
PG_PORT=$((BASE + 0)); REDIS_PORT=$((BASE + 1))
SB_PORT=$((BASE + 31)); RR_PORT=$((BASE + 32))
SBD=$DIR/pg-standby; SBDATA=$SBD/data; SBSOCK=$SBD/sock; SBLOG=$SBD/postgres.log
RRD=$DIR/redis-replica

log() { echo "standbys.sh: $*" >&2; }
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
tail_log() { local f; for f in "$@"; do [ -f "$f" ] && tail -n 20 "$f" >&2; done; }

# ---- PostgreSQL standby --------------------------------------------------------------
sb_ready() { "$PGBIN/pg_isready" -q -h "$SBSOCK" -p "$SB_PORT" -t 2 >/dev/null 2>&1; }
sb_streaming() {
    [ "$(runuser -u postgres -- "$PGBIN/psql" -h "$SBSOCK" -p "$SB_PORT" -U postgres -d postgres \
        -Atc "SELECT pg_is_in_recovery() AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming')" 2>/dev/null)" = t ]
}

sb_make() {  # a fresh base backup of the running primary, set up as a standby (-R)
    rm -rf "$SBD"
    mkdir -p "$SBD" && chown postgres:postgres "$SBD" && chmod 755 "$SBD" || return 1
    runuser -u postgres -- "$PGBIN/pg_basebackup" -h "$DIR/pg/sock" -p "$PG_PORT" -U postgres \
        -D "$SBDATA" -R -X stream -c fast >"$SBD/basebackup.log" 2>&1 \
        || { tail_log "$SBD/basebackup.log"; return 1; }
    # its own port and socket (the copied postgresql.conf names the primary's)
    runuser -u postgres -- mkdir -p "$SBSOCK"
    cat >>"$SBDATA/postgresql.auto.conf" <<CONF
# redrive stack standby (standbys.sh)
port = $SB_PORT
unix_socket_directories = '$SBSOCK'
hot_standby = on
hot_standby_feedback = on
wal_receiver_status_interval = 1s
CONF
    rm -f "$SBDATA/postmaster.pid" "$SBDATA/postmaster.opts"
}

sb_start() {
    sb_ready && return 0
    if [ ! -f "$SBDATA/standby.signal" ]; then sb_make || return 1; fi
    local try
    for try in 1 2; do
        if runuser -u postgres -- "$PGBIN/pg_ctl" -D "$SBDATA" -l "$SBLOG" -W start >/dev/null 2>&1; then
            local i
            for i in $(seq 1 300); do
                sb_ready && sb_streaming && return 0
                sleep 0.1
            done
        fi
        # a standby the primary cannot feed any more (the primary was made anew): again
        [ $try = 1 ] || break
        log "PostgreSQL standby on $SB_PORT did not stream: making it again"
        sb_stop
        sb_make || return 1
    done
    log "PostgreSQL standby did not become ready on port $SB_PORT"
    tail_log "$SBLOG"
    return 1
}

sb_stop() {
    [ -f "$SBDATA/postmaster.pid" ] || return 0
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$SBDATA" -m immediate -t 20 -w stop >/dev/null 2>&1
    return 0
}

# ---- Redis replica ---------------------------------------------------------------------
rr_cli() { timeout 2 redis-cli -h 127.0.0.1 -p "$RR_PORT" --no-auth-warning "$@" 2>/dev/null; }
rr_ready() { rr_cli info replication | tr -d '\r' | grep -q '^master_link_status:up$'; }
rr_pid() {
    local pid; pid=$(cat "$RRD/redis.pid" 2>/dev/null)
    if alive "$pid" && [ "/proc/$pid/cwd" -ef "$RRD" ]; then echo "$pid"; fi
}

rr_start() {
    if [ -z "$(rr_pid)" ]; then
        mkdir -p "$RRD"
        redis-server --bind 127.0.0.1 --port "$RR_PORT" --replicaof 127.0.0.1 "$REDIS_PORT" \
            --replica-read-only yes --save '' --appendonly no --dir "$RRD" \
            --notify-keyspace-events KEA \
            --daemonize yes --pidfile "$RRD/redis.pid" --logfile "$RRD/redis.log" \
            >/dev/null 2>&1 || { tail_log "$RRD/redis.log"; return 1; }
    fi
    local i
    for i in $(seq 1 200); do
        rr_ready && return 0
        sleep 0.1
    done
    log "Redis replica on $RR_PORT did not link to its primary within 20 s"
    tail_log "$RRD/redis.log"
    return 1
}

rr_stop() {
    local pid; pid=$(rr_pid)
    if [ -n "$pid" ]; then
        kill -TERM "$pid" 2>/dev/null
        local i
        for i in $(seq 1 40); do alive "$pid" || break; sleep 0.1; done
        alive "$pid" && kill -KILL "$pid" 2>/dev/null
    fi
    rm -f "$RRD/redis.pid"
    return 0
}

# ---- env ---------------------------------------------------------------------------------
env_lines() {
    echo "export RD_PG_STANDBY_PORT=$SB_PORT"
    echo "export RD_PG_STANDBY_HOST='$SBSOCK'"
    echo "export RD_PG_STANDBY_DSN_ATTUNE2='host=127.0.0.1,127.0.0.1 port=$SB_PORT,$PG_PORT dbname=attune2 user=redrive_ro target_session_attrs=prefer-standby application_name=redrive'"
    echo "export RD_REDIS_REPLICA_PORT=$RR_PORT"
    echo "export RD_REDIS_REPLICA_URL=redis://127.0.0.1:$RR_PORT/0"
}

env_write() {  # replace our lines in DIR/env (add = 1) or drop them (add = 0)
    [ -f "$DIR/env" ] || return 0
    grep -v '^export RD_PG_STANDBY_\|^export RD_REDIS_REPLICA_' "$DIR/env" >"$DIR/env.sb.tmp"
    [ "$1" = 1 ] && env_lines >>"$DIR/env.sb.tmp"
    chmod 644 "$DIR/env.sb.tmp"
    mv "$DIR/env.sb.tmp" "$DIR/env"
}

case "$CMD" in
    start)
        sb_start & a=$!
        rr_start & b=$!
        wait $a; ra=$?
        wait $b; rb=$?
        [ $ra = 0 ] && [ $rb = 0 ] || exit 1
        env_write 1
        log "standby on $SB_PORT, replica on $RR_PORT"
        ;;
    stop)
        env_write 0
        sb_stop
        rr_stop
        ;;
    status)
        sb_ready && sb_streaming && rr_ready
        ;;
    *) echo "usage: standbys.sh start|stop|status DIR [BASE]" >&2; exit 2 ;;
esac
