#!/usr/bin/env bash
# The local stack: real PostgreSQL 15, Redis 7, RabbitMQ 3.10 (+ management) and, when
# tools/coresrv/coresrv.py exists, one reference core server per system.
#
#   bash tests/stack/stack.sh start DIR    # idempotent; recovers a crashed DIR
#   bash tests/stack/stack.sh stop DIR     # idempotent; leaves no process of ours behind
#   bash tests/stack/stack.sh status DIR   # exit 0 when everything answers
#   bash tests/stack/stack.sh standbys DIR # + a PostgreSQL standby and a Redis replica
#                                          # (standbys.sh; also at start with RD_STACK_STANDBYS=1)
#
# Ports come from RD_PORT_BASE (default 25400), see docs/contracts.md; `start` refuses a base
# whose ports (+0 .. +40) fall in the kernel's ephemeral range (ip_local_port_range):
#   +0 PostgreSQL (TLS too), +1 Redis, +2 AMQP, +3 management, +4 Erlang dist, +5 epmd (private),
#   +10..+14 core servers attune1, attune2, tasker, alakai, openagents,
#   +20 Redis with requirepass + ACL user, +21 Redis TLS, +22 Redis TLS with an expired cert,
#   +23 Redis TLS with a self-signed cert, +24 Redis TLS with a cert for another host,
#   +25 management over HTTPS, +30 SQS emulator, +31 PostgreSQL standby, +32 Redis replica.
# Certificates (DIR/tls) and passwords (DIR/secrets, files mode 0600) are generated at the
# first start of a DIR and kept across restarts; passwords are never printed.
# The base used at start is remembered in DIR/base; stop/status use it.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
PGBIN=/usr/lib/postgresql/15/bin
RABBIT_BIN=/usr/lib/rabbitmq/bin
CORE_SYSTEMS=(attune1 attune2 tasker alakai openagents)
# what `fixtures.py setup` loads while RabbitMQ boots (the broker fixtures come after)
FIXTURE_STORES=attune1,attune2,tasker,openagents,attune_alt,attune_public,openagents_notags,alakai,alakai_secured

RD_RABBIT_USER_DEFAULT=redrive
RD_RABBIT_PASSWORD_DEFAULT=redrive-secret

die() { echo "stack: $*" >&2; exit 1; }
log() { echo "stack: $*" >&2; }

usage() { echo "usage: stack.sh start|stop|status|standbys DIR" >&2; exit 2; }
T0=$(date +%s%N)
phase() { echo "+$(( ($(date +%s%N) - T0) / 1000000 )) ms $*" >>"$DIR/start.log"; }  # timings

[ $# -eq 2 ] || usage
CMD=$1
DIR=$2
case "$DIR" in /*) ;; *) DIR="$(pwd)/$DIR" ;; esac
DIR=${DIR%/}

# ---- ports -------------------------------------------------------------------
choose_base() {
    if [ "$CMD" = start ] && [ -n "${RD_PORT_BASE:-}" ]; then
        BASE=$RD_PORT_BASE
    elif [ -f "$DIR/base" ]; then
        BASE=$(cat "$DIR/base")
    else
        BASE=${RD_PORT_BASE:-25400}
    fi
    case "$BASE" in ''|*[!0-9]*) die "bad RD_PORT_BASE '$BASE'" ;; esac
    PG_PORT=$((BASE + 0)); REDIS_PORT=$((BASE + 1)); AMQP_PORT=$((BASE + 2))
    MGMT_PORT=$((BASE + 3)); DIST_PORT=$((BASE + 4)); EPMD_PORT=$((BASE + 5))
    MGMT_TLS_PORT=$((BASE + 25))
    NODENAME="rd${BASE}@localhost"
    TLS=$DIR/tls; SECRETS=$DIR/secrets
}

# Every port a stack and its tests take from the base: +0 .. +40 (+40: the deployed-server
# test's private PostgreSQL, tests/integration/test_pg_deployed.py).
PORT_SPAN=40
# A base whose ports fall in the kernel's ephemeral range (ip_local_port_range, where
# outgoing connections get their local port) is refused: any client may hold one of them
# at the moment a server binds it (RabbitMQ at base 33400: dist_port_already_used, 33404).
# RD_STACK_EPHEMERAL_OK=1 starts anyway (a warning).
ephemeral_check() {
    local range lo hi top
    range=$(cat /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null) || return 0
    read -r lo hi <<<"$range"
    case "$lo$hi" in ''|*[!0-9]*) return 0 ;; esac
    top=$((BASE + PORT_SPAN))
    [ "$top" -lt "$lo" ] || [ "$BASE" -gt "$hi" ] && return 0
    local msg="port base $BASE: ports $BASE-$top overlap the kernel's ephemeral range $lo-$hi"
    msg+=" (/proc/sys/net/ipv4/ip_local_port_range), where outgoing connections take their"
    msg+=" local ports; choose a base at most $((lo - PORT_SPAN - 1)) (CI uses 25400)"
    if [ "${RD_STACK_EPHEMERAL_OK:-0}" = 1 ]; then
        log "WARNING: $msg; starting anyway (RD_STACK_EPHEMERAL_OK=1)"
        return 0
    fi
    die "not starting: $msg, or set RD_STACK_EPHEMERAL_OK=1 to start anyway"
}

# The secured Redis servers: name -> port offset (+20..+24), certificate (tls-* only).
RSEC_NAMES=(auth tls tls-expired tls-selfsigned tls-wronghost)
rsec_port() {  # rsec_port NAME
    local i
    for i in "${!RSEC_NAMES[@]}"; do
        [ "${RSEC_NAMES[$i]}" = "$1" ] && { echo $((BASE + 20 + i)); return; }
    done
}
rsec_cert() {  # the certificate a TLS server presents
    case "$1" in
        tls) echo "$TLS/server.crt" ;;
        tls-expired) echo "$TLS/expired.crt" ;;
        tls-selfsigned) echo "$TLS/selfsigned.crt" ;;
        tls-wronghost) echo "$TLS/wronghost.crt" ;;
    esac
}

core_port() {  # core_port NAME
    local i
    for i in "${!CORE_SYSTEMS[@]}"; do
        [ "${CORE_SYSTEMS[$i]}" = "$1" ] && { echo $((BASE + 10 + i)); return; }
    done
}

# ---- process helpers ---------------------------------------------------------
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

# pids listening on TCP port $1 (any address). Between ss_snapshot and ss_forget, from one
# `ss` run (checking ~20 ports one `ss` at a time costs seconds on a busy machine).
SS_USE=0
declare -A SS_PIDS=()   # port -> "pid pid ..." of the snapshot
ss_snapshot() {
    local line port rest
    SS_PIDS=()
    while IFS= read -r line; do
        [[ $line =~ ^[^[:space:]]+[[:space:]]+[0-9]+[[:space:]]+[0-9]+[[:space:]]+[^[:space:]]*:([0-9]+)[[:space:]](.*)$ ]] || continue
        port=${BASH_REMATCH[1]}; rest=${BASH_REMATCH[2]}
        while [[ $rest =~ pid=([0-9]+)(.*)$ ]]; do
            SS_PIDS[$port]+=" ${BASH_REMATCH[1]}"
            rest=${BASH_REMATCH[2]}
        done
    done < <(ss -Hltnp 2>/dev/null)
    SS_USE=1
}
ss_forget() { SS_USE=0; SS_PIDS=(); }
listeners() {
    if [ "$SS_USE" = 0 ]; then
        ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u
        return 0
    fi
    local p
    local -A seen=()
    for p in ${SS_PIDS[$1]:-}; do seen[$p]=1; done
    [ ${#seen[@]} -gt 0 ] && printf '%s\n' "${!seen[@]}"
    return 0
}

# all of the given ports are listened on (one `ss` run)
ports_listening() {
    local snap p; snap=$(ss -Hltn 2>/dev/null)
    for p in "$@"; do
        [[ $snap =~ [[:space:]][^[:space:]]*:$p[[:space:]] ]] || return 1
    done
}

# (bash builtins only: these run for every process on a busy machine)
comm_of() { local c=""; { read -r c <"/proc/$1/comm"; } 2>/dev/null; echo "$c"; }
cmdline_of() {
    local -a a=()
    { mapfile -d '' a <"/proc/$1/cmdline"; } 2>/dev/null
    echo "${a[*]}"
}

# Kill (TERM, then KILL after a grace period) the given pids.
kill_pids() {
    local pids=("$@") p i
    [ ${#pids[@]} -eq 0 ] && return 0
    kill -TERM "${pids[@]}" 2>/dev/null
    for i in $(seq 1 40); do
        local left=()
        for p in "${pids[@]}"; do alive "$p" && left+=("$p"); done
        [ ${#left[@]} -eq 0 ] && return 0
        sleep 0.1
    done
    kill -KILL "${pids[@]}" 2>/dev/null
    sleep 0.2
}

# Service processes that belong to this DIR: their command line mentions a path under DIR
# or they run in a directory under DIR (postgres children after a crashed postmaster).
SERVICE_COMMS=" postgres redis-server beam.smp erl_child_setup inet_gethost epmd runuser rabbitmq-server python3 sh "
dir_pids() {
    local d p c w
    for d in /proc/[0-9]*; do
        p=${d#/proc/}
        [ "$p" = "$$" ] && continue
        c=""; { read -r c <"$d/comm"; } 2>/dev/null || continue
        case "$SERVICE_COMMS" in *" $c "*) ;; *) continue ;; esac
        for w in "$DIR/pg/data" "$DIR/rabbit" "$DIR/redis" "$DIR"/redis-*; do
            if [ "$d/cwd" -ef "$w" ]; then echo "$p"; continue 2; fi
        done
        local -a a=()
        { mapfile -d '' a <"$d/cmdline"; } 2>/dev/null
        case "${a[*]}" in
            *"$DIR/"*) echo "$p" ;;
        esac
    done
}

# The stack DIR a service process belongs to: postgres runs in X/pg/data, redis in X/redis,
# beam in X/rabbit, core servers and the consumer get --env-file X/env. A deleted DIR shows up
# as "X (deleted)" and is reported as X (which no longer exists).
owner_dir() {
    local p=$1 cwd c
    cwd=$(readlink "/proc/$p/cwd" 2>/dev/null)
    cwd=${cwd% (deleted)}
    case "$cwd" in
        */pg/data) echo "${cwd%/pg/data}"; return ;;
        */redis) echo "${cwd%/redis}"; return ;;
        */redis-*) echo "${cwd%/redis-*}"; return ;;
        */rabbit) echo "${cwd%/rabbit}"; return ;;
    esac
    c=$(cmdline_of "$p")
    case "$c" in
        *"--env-file "*) c=${c#*--env-file }; c=${c%% *}; echo "${c%/env}" ;;
    esac
}

is_service() {  # one of the kinds of process a stack runs
    case "$(comm_of "$1")/$(cmdline_of "$1")" in
        postgres/*|redis-server/*|beam.smp/*|epmd/*|python3/*coresrv*) return 0 ;;
    esac
    return 1
}

# Refuse to touch a port held by ANOTHER existing stack DIR (e.g. a user with some other
# stack's env sourced): never kill that stack. Prints stale pids: our kinds of service on our
# ports whose DIR is gone (a crashed run of a deleted temp DIR).
foreign_check() {
    local port p o refuse=0
    for port in $(all_ports); do
        for p in $(listeners "$port"); do
            o=$(owner_dir "$p")
            [ "$o" = "$DIR" ] && continue
            if [ -n "$o" ] && [ -d "$o" ]; then
                log "port $port is used by the stack in $o (pid $p): stop it or choose another RD_PORT_BASE"
                refuse=1
            elif [ -n "$o" ] && is_service "$p"; then
                echo "$p"
            fi
        done
    done
    [ $refuse = 0 ]
}

# Leftover services on our ports that do not answer: only our kinds of process are killed.
port_squatters() {
    local port p
    for port in "$@"; do
        for p in $(listeners "$port"); do
            if is_service "$p"; then echo "$p"
            else log "port $port is used by pid $p ($(comm_of "$p")), not ours: not killing"; fi
        done
    done
}

all_ports() {
    echo "$PG_PORT $REDIS_PORT $AMQP_PORT $MGMT_PORT $DIST_PORT $EPMD_PORT $MGMT_TLS_PORT"
    local i
    for i in "${!CORE_SYSTEMS[@]}"; do echo $((BASE + 10 + i)); done
    for i in "${!RSEC_NAMES[@]}"; do echo $((BASE + 20 + i)); done
}

tail_log() {  # tail_log FILE...
    local f
    for f in "$@"; do
        [ -f "$f" ] || continue
        echo "---- last lines of $f ----" >&2
        tail -n 25 "$f" >&2
    done
}

# ---- certificates and passwords ------------------------------------------------
# One test CA signs the server certificate (SAN IP:127.0.0.1, DNS:localhost), a client
# certificate, an expired server certificate and one for another host; a second CA signs
# nothing we serve ("wrong CA"); one server certificate is self-signed. EC P-256 keys: each
# openssl call takes milliseconds. Kept across restarts (DIR/tls/done marks a complete set).
SSLX() { openssl "$@" >>"$TLS/openssl.log" 2>&1; }

tls_make() {
    [ -f "$TLS/done" ] && return 0
    rm -rf "$TLS"
    mkdir -p "$TLS" && chmod 755 "$TLS" || return 1
    local ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
    local ca_ext=(-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign")
    local san="subjectAltName = IP:127.0.0.1, DNS:localhost"
    local leaf="basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment"
    (
        set -e
        cd "$TLS"
        printf '%s\n%s\nextendedKeyUsage = serverAuth\n' "$san" "$leaf" >server.ext
        printf 'subjectAltName = DNS:wrong.example, IP:192.0.2.1\n%s\nextendedKeyUsage = serverAuth\n' \
            "$leaf" >wronghost.ext
        printf '%s\nextendedKeyUsage = clientAuth\n' "$leaf" >client.ext
        SSLX req -x509 "${ec[@]}" -keyout ca.key -out ca.crt -days 3650 -subj "/CN=redrive test CA" "${ca_ext[@]}"
        SSLX req -x509 "${ec[@]}" -keyout wrong-ca.key -out wrong-ca.crt -days 3650 \
            -subj "/CN=redrive WRONG test CA" "${ca_ext[@]}"
        SSLX req -new "${ec[@]}" -keyout server.key -out server.csr -subj "/CN=127.0.0.1"
        SSLX req -new "${ec[@]}" -keyout client.key -out client.csr -subj "/CN=redrive-test-client"
        SSLX x509 -req -in server.csr -CA ca.crt -CAkey ca.key -set_serial 0x1001 -days 3650 \
            -extfile server.ext -out server.crt
        SSLX x509 -req -in client.csr -CA ca.crt -CAkey ca.key -set_serial 0x1002 -days 3650 \
            -extfile client.ext -out client.crt
        SSLX x509 -req -in server.csr -CA ca.crt -CAkey ca.key -set_serial 0x1003 -days 3650 \
            -extfile wronghost.ext -out wronghost.crt
        SSLX req -x509 -key server.key -out selfsigned.crt -days 3650 -subj "/CN=127.0.0.1" \
            -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -addext "basicConstraints=critical,CA:FALSE"
        # expired (valid from T-30 d to T-1 d), signed by the right CA: with OpenSSL 3.0 only
        # `openssl ca` sets both dates
        mkdir ca.db
        : >ca.db/index.txt
        echo 1004 >ca.db/serial
        printf '%s\n' '[ca]' 'default_ca = expired' '[expired]' 'database = ca.db/index.txt' \
            'new_certs_dir = ca.db' 'serial = ca.db/serial' 'default_md = sha256' 'policy = any' \
            'unique_subject = no' '[any]' 'commonName = supplied' >ca.db/ca.cnf
        SSLX ca -batch -config ca.db/ca.cnf -cert ca.crt -keyfile ca.key -in server.csr -notext \
            -startdate "$(date -u -d '-30 days' +%Y%m%d%H%M%SZ)" \
            -enddate "$(date -u -d '-1 day' +%Y%m%d%H%M%SZ)" -extfile server.ext -out expired.crt
        rm -rf ca.db ./*.csr ./*.ext
        chmod 600 ./*.key
        chmod 644 ./*.crt
        touch done
    ) || { log "generating the test certificates failed"; tail_log "$TLS/openssl.log"; return 1; }
}

# Passwords: 32 random hex digits (128 bits), one file each (mode 0600, no newline), made once
# per DIR.
SECRET_FILES=(redis_auth_password redis_acl_password pg_scram_password)
secrets_make() {
    local f rnd="" i=0
    for f in "${SECRET_FILES[@]}"; do [ -s "$SECRETS/$f" ] || rnd=x; done
    [ -z "$rnd" ] && return 0
    mkdir -p "$SECRETS" && chmod 700 "$SECRETS" || return 1
    rnd=$(openssl rand -hex $((16 * ${#SECRET_FILES[@]}))) && [ ${#rnd} = $((32 * ${#SECRET_FILES[@]})) ] || return 1
    for f in "${SECRET_FILES[@]}"; do
        if [ ! -s "$SECRETS/$f" ]; then
            (umask 077; printf '%s' "${rnd:$((32 * i)):32}" >"$SECRETS/$f.tmp") \
                && mv "$SECRETS/$f.tmp" "$SECRETS/$f" || return 1
        fi
        i=$((i + 1))
    done
}

# ---- PostgreSQL --------------------------------------------------------------
PGDATA_=""
pg_vars() { PGDATA_=$DIR/pg/data; PGSOCK=$DIR/pg/sock; PGLOG=$DIR/pg/postgres.log; }

pg_ready() { "$PGBIN/pg_isready" -q -h "$PGSOCK" -p "$PG_PORT" -t 2 >/dev/null 2>&1; }

pg_start() {
    pg_vars
    mkdir -p "$DIR/pg"
    chown postgres:postgres "$DIR/pg"
    chmod 755 "$DIR/pg"
    if [ ! -f "$PGDATA_/PG_VERSION" ]; then
        rm -rf "$PGDATA_"
        runuser -u postgres -- "$PGBIN/initdb" -D "$PGDATA_" -A trust -U postgres -E UTF8 \
            --no-locale >"$DIR/pg/initdb.log" 2>&1 || { tail_log "$DIR/pg/initdb.log"; return 1; }
        phase "initdb done"
        cat >>"$PGDATA_/postgresql.conf" <<EOF
# redrive local stack
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$PGSOCK'
max_connections = 200
shared_buffers = 64MB
fsync = off
synchronous_commit = off
full_page_writes = off
log_min_messages = warning
log_line_prefix = '%m [%p] %d '
timezone = 'UTC'
EOF
    fi
    pg_secure_conf || return 1
    runuser -u postgres -- mkdir -p "$PGSOCK"
    # A crashed run leaves postmaster.pid behind; postgres copes with a dead pid itself, but
    # a pid reused by an unrelated process would block it: drop the file in that case.
    if [ -f "$PGDATA_/postmaster.pid" ]; then
        local opid; opid=$(head -n1 "$PGDATA_/postmaster.pid")
        if ! alive "$opid" || [ "$(comm_of "$opid")" != postgres ]; then
            rm -f "$PGDATA_/postmaster.pid"
        fi
    fi
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA_" -l "$PGLOG" -W start >/dev/null 2>&1 \
        || { tail_log "$PGLOG"; return 1; }
    local i
    for i in $(seq 1 300); do
        pg_ready && { phase "postgresql up"; return 0; }
        sleep 0.1
    done
    log "PostgreSQL did not become ready on port $PG_PORT within 30 s"
    tail_log "$PGLOG"
    return 1
}

# TLS and the password role, rewritten at every start: `ssl = on` with the test CA's server
# certificate; rd_scram may only log in over TLS with SCRAM (refused on the unix socket and on
# plain TCP); every other role keeps trust access (socket and TCP, TLS or not).
pg_secure_conf() {
    install -o postgres -g postgres -m 644 "$TLS/server.crt" "$PGDATA_/server.crt" &&
    install -o postgres -g postgres -m 600 "$TLS/server.key" "$PGDATA_/server.key" &&
    install -o postgres -g postgres -m 644 "$TLS/ca.crt" "$PGDATA_/root.crt" || return 1
    grep -q "^include_if_exists = 'redrive.conf'" "$PGDATA_/postgresql.conf" \
        || echo "include_if_exists = 'redrive.conf'" >>"$PGDATA_/postgresql.conf"
    cat >"$PGDATA_/redrive.conf" <<EOF
# redrive local stack: TLS and password authentication (rewritten by stack.sh at every start)
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
ssl_ca_file = 'root.crt'
password_encryption = 'scram-sha-256'
EOF
    cat >"$PGDATA_/pg_hba.conf" <<EOF
# redrive local stack (rewritten by stack.sh at every start). First match wins.
# TYPE    DATABASE     USER       ADDRESS        METHOD
local     all          rd_scram                  reject
hostnossl all          rd_scram   0.0.0.0/0      reject
hostnossl all          rd_scram   ::/0           reject
hostssl   all          rd_scram   127.0.0.1/32   scram-sha-256
hostssl   all          rd_scram   ::1/128        scram-sha-256
local     all          all                       trust
host      all          all        127.0.0.1/32   trust
host      all          all        ::1/128        trust
local     replication  all                       trust
host      replication  all        127.0.0.1/32   trust
EOF
    chown postgres:postgres "$PGDATA_/redrive.conf" "$PGDATA_/pg_hba.conf"
}

pg_stop() {
    pg_vars
    [ -f "$PGDATA_/PG_VERSION" ] || return 0
    if [ -f "$PGDATA_/postmaster.pid" ]; then
        runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA_" -m fast -t 20 -w stop >/dev/null 2>&1
    fi
    return 0
}

# ---- Redis -------------------------------------------------------------------
redis_ready() {
    [ "$(timeout 2 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --no-auth-warning ping 2>/dev/null)" = PONG ]
}

redis_start() {
    mkdir -p "$DIR/redis"
    redis-server --bind 127.0.0.1 --port "$REDIS_PORT" \
        --unixsocket "$DIR/redis/redis.sock" --unixsocketperm 777 \
        --save '' --appendonly no --dir "$DIR/redis" \
        --notify-keyspace-events KEA \
        --daemonize yes --pidfile "$DIR/redis/redis.pid" --logfile "$DIR/redis/redis.log" \
        >/dev/null 2>&1 || { tail_log "$DIR/redis/redis.log"; return 1; }
    local i
    for i in $(seq 1 100); do
        redis_ready && { phase "redis up"; return 0; }
        sleep 0.1
    done
    log "Redis did not become ready on port $REDIS_PORT within 10 s"
    tail_log "$DIR/redis/redis.log"
    return 1
}

redis_stop() {  # only OUR redis (pid file + working directory), never "whatever is on the port"
    local pid; pid=$(cat "$DIR/redis/redis.pid" 2>/dev/null)
    if alive "$pid" && [ "$(comm_of "$pid")" = redis-server ] && [ "/proc/$pid/cwd" -ef "$DIR/redis" ]; then
        kill_pids "$pid"   # SIGTERM: redis shuts down cleanly (no persistence configured)
    fi
    rm -f "$DIR/redis/redis.pid"
    return 0
}

# ---- the secured Redis servers ----------------------------------------------------
# auth: plain TCP, `requirepass` (the default user's password) plus the read-only ACL user
# rd_ro. tls*: `port 0` + `tls-port`, client certificates optional (verified against the
# test CA when sent), the default user needs no password and rd_ro exists too (TLS + ACL).
# The config holds the passwords: mode 0600, never on a command line.
RSEC_ACL_USER=rd_ro
# What a monitoring console needs (src/sources/redis_*.c: SELECT, PING, SCAN + HGETALL
# (sweeps), HLEN, HKEYS, HSTRLEN, HMGET (chains), CONFIG GET notify-keyspace-events,
# PSUBSCRIBE; INFO, ACL WHOAMI, TIME for `redrive check`; docs/config.md), nothing that writes or administers
# (-@admin after +@connection drops CLIENT KILL/PAUSE/...).
RSEC_ACL_RULES="~* &* -@all +@read +@connection -@admin +info +config|get +acl|whoami +time +psubscribe +punsubscribe +subscribe +unsubscribe"

rsec_dir() { echo "$DIR/redis-$1"; }

rsec_conf() {  # rsec_conf NAME PORT: the instance's config (bash builtins only)
    local n=$1 port=$2 d=$DIR/redis-$1 c authpw="" aclpw=""
    IFS= read -r authpw <"$SECRETS/redis_auth_password" || [ -n "$authpw" ] || return 1
    IFS= read -r aclpw <"$SECRETS/redis_acl_password" || [ -n "$aclpw" ] || return 1
    c="# redrive local stack: secured Redis '$n' (written by stack.sh; holds passwords)
bind 127.0.0.1
save \"\"
appendonly no
dir $d
notify-keyspace-events KEA
daemonize yes
pidfile $d/redis.pid
logfile $d/redis.log
"
    if [ "$n" = auth ]; then
        c+="port $port
requirepass $authpw
"
    else
        c+="port 0
tls-port $port
tls-cert-file $(rsec_cert "$n")
tls-key-file $TLS/server.key
tls-ca-cert-file $TLS/ca.crt
tls-auth-clients optional
"
    fi
    c+="user $RSEC_ACL_USER on >$aclpw $RSEC_ACL_RULES
"
    printf '%s' "$c" >"$d/redis.conf"
}

rsec_ready() {  # rsec_ready NAME: answers PING as configured
    local n=$1 port out; port=$(rsec_port "$1")
    case "$n" in
        auth) out=$(REDISCLI_AUTH=$(<"$SECRETS/redis_auth_password") \
                    timeout 2 redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null) ;;
        tls) out=$(timeout 2 redis-cli --tls --cacert "$TLS/ca.crt" -h 127.0.0.1 -p "$port" ping 2>/dev/null) ;;
        *) out=$(timeout 2 redis-cli --tls --insecure -h 127.0.0.1 -p "$port" ping 2>/dev/null) ;;
    esac
    [ "$out" = PONG ]
}

rsec_all_ready() { local n; for n in "${RSEC_NAMES[@]}"; do rsec_ready "$n" || return 1; done; }

RSEC_PID=""
rsec_find() {  # sets RSEC_PID to the pid of OUR server NAME (pid file + working directory)
    local d=$DIR/redis-$1 pid="" c=""
    RSEC_PID=""
    { read -r pid <"$d/redis.pid"; } 2>/dev/null || return 1
    alive "$pid" || return 1
    { read -r c <"/proc/$pid/comm"; } 2>/dev/null
    [ "$c" = redis-server ] && [ "/proc/$pid/cwd" -ef "$d" ] && RSEC_PID=$pid
}
rsec_ours() { rsec_find "$1"; }

rsec_start() {  # starts every secured Redis not running (in parallel), waits until all listen
    umask 077   # (a subshell of its own) the configs hold passwords; logs and pid files too
    local i n d ports=() dirs=() todo=() pids=() fail=0
    for i in "${!RSEC_NAMES[@]}"; do
        n=${RSEC_NAMES[$i]}
        ports+=("$((BASE + 20 + i))")
        dirs+=("$DIR/redis-$n")
        rsec_ours "$n" && rsec_ready "$n" && continue
        todo+=("$i")
    done
    [ ${#todo[@]} -gt 0 ] && { mkdir -p "${dirs[@]}" || return 1; }
    for i in "${todo[@]}"; do
        rsec_conf "${RSEC_NAMES[$i]}" "${ports[$i]}" || { log "cannot write the config of Redis ${RSEC_NAMES[$i]}"; return 1; }
        redis-server "${dirs[$i]}/redis.conf" >/dev/null 2>&1 &
        pids+=("$!")
    done
    for i in "${pids[@]}"; do wait "$i" || fail=1; done
    for i in $(seq 1 200); do
        [ $fail = 1 ] && break
        # a Redis without persistence serves as soon as it listens (TLS: after loading its
        # certificate); the fixture loader then talks to each of them
        ports_listening "${ports[@]}" && { phase "secured redis up"; return 0; }
        sleep 0.05
    done
    log "secured Redis did not start listening within 10 s"
    for d in "${dirs[@]}"; do tail_log "$d/redis.log"; done
    return 1
}

rsec_stop() {  # only OUR servers (pid file + working directory)
    local n pid pids=()
    for n in "${RSEC_NAMES[@]}"; do
        rsec_find "$n" && pids+=("$RSEC_PID")
        rm -f "$DIR/redis-$n/redis.pid"
    done
    kill_pids "${pids[@]}"
    return 0
}

# ---- RabbitMQ ----------------------------------------------------------------
RB=""
rabbit_env() {  # prints the env assignments for rabbit commands
    RB=$DIR/rabbit
    echo HOME="$RB/home" \
        RABBITMQ_NODENAME="$NODENAME" \
        RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
        RABBITMQ_NODE_PORT="$AMQP_PORT" \
        RABBITMQ_DIST_PORT="$DIST_PORT" \
        ERL_EPMD_PORT="$EPMD_PORT" \
        ERL_EPMD_ADDRESS=127.0.0.1 \
        RABBITMQ_MNESIA_BASE="$RB/mnesia" \
        RABBITMQ_LOG_BASE="$RB/log" \
        RABBITMQ_LOGS="$RB/log/rabbit.log" \
        RABBITMQ_PID_FILE="$RB/rabbit.pid" \
        RABBITMQ_CONFIG_FILE="$RB/rabbitmq.conf" \
        RABBITMQ_ADVANCED_CONFIG_FILE="$RB/advanced.config" \
        RABBITMQ_CONF_ENV_FILE="$RB/rabbitmq-env.conf" \
        RABBITMQ_ENABLED_PLUGINS_FILE="$RB/enabled_plugins" \
        RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="'+sbwt none +sbwtdcpu none +sbwtdio none -kernel inet_dist_use_interface {127,0,0,1}'"
}

rabbit_cmd() {  # rabbit_cmd TOOL ARGS... (as the rabbitmq user, in our node's environment)
    local tool=$1; shift
    (cd "$DIR/rabbit" && eval "runuser -u rabbitmq -- env $(rabbit_env) \"$RABBIT_BIN/$tool\" \"\$@\"")
}

rabbit_ready() {  # management answers over HTTP and over HTTPS (verified with the test CA)
    local code
    code=$(curl -s -o /dev/null -w '%{http_code}' -m 2 -u "$RUSER:$RPASS" \
        "http://127.0.0.1:$MGMT_PORT/api/overview" 2>/dev/null)
    [ "$code" = 200 ] || return 1
    code=$(curl -s -o /dev/null -w '%{http_code}' -m 2 --cacert "$TLS/ca.crt" -u "$RUSER:$RPASS" \
        "https://127.0.0.1:$MGMT_TLS_PORT/api/overview" 2>/dev/null)
    [ "$code" = 200 ]
}

rabbit_start() {
    RB=$DIR/rabbit
    mkdir -p "$RB/home" "$RB/mnesia" "$RB/log" "$RB/tls"
    cp "$TLS/ca.crt" "$TLS/server.crt" "$TLS/server.key" "$RB/tls/" || return 1
    chmod 600 "$RB/tls/server.key"
    cat >"$RB/rabbitmq.conf" <<EOF
listeners.tcp.default = 127.0.0.1:$AMQP_PORT
management.tcp.port = $MGMT_PORT
management.tcp.ip = 127.0.0.1
management.ssl.port = $MGMT_TLS_PORT
management.ssl.ip = 127.0.0.1
management.ssl.cacertfile = $RB/tls/ca.crt
management.ssl.certfile = $RB/tls/server.crt
management.ssl.keyfile = $RB/tls/server.key
default_user = $RUSER
default_pass = $RPASS
default_user_tags.administrator = true
default_permissions.configure = .*
default_permissions.read = .*
default_permissions.write = .*
loopback_users = none
collect_statistics_interval = 1000
consumer_timeout = 86400000
disk_free_limit.absolute = 10MB
log.file.level = info
log.console = false
EOF
    echo '[rabbitmq_management].' >"$RB/enabled_plugins"
    : >"$RB/rabbitmq-env.conf"
    if [ ! -f "$RB/home/.erlang.cookie" ]; then
        head -c 30 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 40 >"$RB/home/.erlang.cookie"
        chmod 400 "$RB/home/.erlang.cookie"
    fi
    chown -R rabbitmq:rabbitmq "$RB"
    chmod 755 "$RB"
    rm -f "$RB/rabbit.pid"
    # A private epmd so nothing is shared with other stacks on this machine.
    if [ -z "$(listeners "$EPMD_PORT")" ]; then
        runuser -u rabbitmq -- /usr/bin/epmd -daemon -address 127.0.0.1 -port "$EPMD_PORT" \
            -relaxed_command_check >/dev/null 2>&1
    fi
    (cd "$RB" && eval "exec setsid runuser -u rabbitmq -- env $(rabbit_env) \"$RABBIT_BIN/rabbitmq-server\"" \
        >"$RB/log/startup.log" 2>&1 </dev/null &)
    local i
    for i in $(seq 1 600); do
        rabbit_ready && { phase "rabbitmq up"; return 0; }
        sleep 0.1
    done
    log "RabbitMQ did not become ready (management on port $MGMT_PORT) within 60 s"
    tail_log "$RB/log/startup.log" "$RB/log/rabbit.log"
    return 1
}

rabbit_stop() {
    RB=$DIR/rabbit
    [ -d "$RB" ] || return 0
    # RabbitMQ (3.8+) shuts down cleanly on SIGTERM, much faster than booting rabbitmqctl.
    local bpid; bpid=$(cat "$RB/rabbit.pid" 2>/dev/null)
    if alive "$bpid" && [ "$(comm_of "$bpid")" = beam.smp ]; then
        kill -TERM "$bpid"
        local i
        for i in $(seq 1 150); do alive "$bpid" || break; sleep 0.1; done
    fi
    # leftovers (erl_child_setup, runuser, ...) go in cmd_stop_inner's sweep; our private epmd:
    local e; e=$(listeners "$EPMD_PORT")
    for p in $e; do [ "$(comm_of "$p")" = epmd ] && kill_pids "$p"; done
    return 0
}

# ---- the fixture AMQP consumer (a queue WITH a consumer and an unacked message) --------------
CONSUMER_QUEUE=worker.1.executions

consumer_alive() {
    local pid; pid=$(cat "$DIR/amqp_consumer.pid" 2>/dev/null)
    alive "$pid" && case "$(cmdline_of "$pid")" in *amqp_consumer*) true ;; *) false ;; esac
}

consumer_start() {
    consumer_alive && return 0
    setsid "$PY" "$HERE/amqp_consumer.py" --env-file "$DIR/env" --queue "$CONSUMER_QUEUE" \
        >>"$DIR/amqp_consumer.log" 2>&1 </dev/null &
    echo $! >"$DIR/amqp_consumer.pid"
}

# ---- core servers ------------------------------------------------------------
CORESRV=$ROOT/tools/coresrv/coresrv.py

core_start() {
    [ -f "$CORESRV" ] || return 0
    mkdir -p "$DIR/core"
    local s port pid
    for s in "${CORE_SYSTEMS[@]}"; do
        port=$(core_port "$s")
        pid=$(cat "$DIR/core/$s.pid" 2>/dev/null)
        if alive "$pid" && [ -n "$(listeners "$port")" ]; then continue; fi
        setsid "$PY" "$CORESRV" --system "$s" --port "$port" --env-file "$DIR/env" \
            >"$DIR/core/$s.log" 2>&1 </dev/null &
        echo $! >"$DIR/core/$s.pid"
    done
    local i ok
    for i in $(seq 1 150); do
        ok=1
        for s in "${CORE_SYSTEMS[@]}"; do
            pid=$(cat "$DIR/core/$s.pid")
            if ! alive "$pid"; then
                log "core server $s exited"; tail_log "$DIR/core/$s.log"; return 1
            fi
            [ -n "$(listeners "$(core_port "$s")")" ] || ok=0
        done
        [ $ok = 1 ] && return 0
        sleep 0.1
    done
    log "core servers did not start listening within 15 s"
    for s in "${CORE_SYSTEMS[@]}"; do tail_log "$DIR/core/$s.log"; done
    return 1
}

core_stop() {
    [ -d "$DIR/core" ] || return 0
    local s pid pids=()
    for s in "${CORE_SYSTEMS[@]}"; do
        pid=$(cat "$DIR/core/$s.pid" 2>/dev/null)
        if alive "$pid" && case "$(cmdline_of "$pid")" in *coresrv*) true ;; *) false ;; esac; then
            pids+=("$pid")
        fi
        rm -f "$DIR/core/$s.pid"
    done
    kill_pids "${pids[@]}"
    return 0
}

core_ready() {
    [ -f "$CORESRV" ] || return 0
    local s
    for s in "${CORE_SYSTEMS[@]}"; do
        [ -n "$(listeners "$(core_port "$s")")" ] || return 1
    done
}

# ---- env file ----------------------------------------------------------------
write_env() {
    local f=$DIR/env.tmp db DB
    {
        echo "# redrive local stack ($(date -u +%Y-%m-%dT%H:%M:%SZ)); source me"
        echo "export RD_STACK_DIR='$DIR'"
        echo "export RD_PORT_BASE=$BASE"
        echo "export RD_PG_HOST='$DIR/pg/sock'"
        echo "export RD_PG_PORT=$PG_PORT"
        for db in attune1 attune2 tasker openagents; do
            DB=$(echo "$db" | tr a-z A-Z)
            echo "export RD_PG_DSN_$DB='host=$DIR/pg/sock port=$PG_PORT dbname=$db user=redrive_ro application_name=redrive'"
            echo "export RD_PG_ADMIN_DSN_$DB='host=$DIR/pg/sock port=$PG_PORT dbname=$db user=postgres'"
        done
        echo "export RD_PG_TCP_DSN_ATTUNE1='host=127.0.0.1 port=$PG_PORT dbname=attune1 user=redrive_ro'"
        echo "export RD_REDIS_PORT=$REDIS_PORT"
        echo "export RD_REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0"
        echo "export RD_REDIS_SOCKET='$DIR/redis/redis.sock'"
        echo "export RD_RABBIT_MGMT_URL=http://127.0.0.1:$MGMT_PORT"
        echo "export RD_RABBIT_USER='$RUSER'"
        echo "export RD_RABBIT_PASSWORD='$RPASS'"
        echo "export RD_RABBIT_AMQP_PORT=$AMQP_PORT"
        # production-shaped access (issue 9): schemas, partial permissions, TLS, passwords.
        # Passwords only as paths of files (mode 0600).
        for db in attune_alt attune_public openagents_notags; do
            DB=$(echo "$db" | tr a-z A-Z)
            echo "export RD_PG_DSN_$DB='host=$DIR/pg/sock port=$PG_PORT dbname=$db user=redrive_ro application_name=redrive'"
            echo "export RD_PG_ADMIN_DSN_$DB='host=$DIR/pg/sock port=$PG_PORT dbname=$db user=postgres'"
        done
        echo "export RD_PG_SCHEMA_ATTUNE_ALT=attune_alt"
        echo "export RD_PG_DSN_OPENAGENTS_NOWORKERS='host=$DIR/pg/sock port=$PG_PORT dbname=openagents user=rd_noworkers application_name=redrive'"
        echo "export RD_TLS_CA='$TLS/ca.crt'"
        echo "export RD_TLS_WRONG_CA='$TLS/wrong-ca.crt'"
        echo "export RD_TLS_CLIENT_CERT='$TLS/client.crt'"
        echo "export RD_TLS_CLIENT_KEY='$TLS/client.key'"
        echo "export RD_PG_SCRAM_USER=rd_scram"
        echo "export RD_PG_SCRAM_PASSWORD_FILE='$SECRETS/pg_scram_password'"
        echo "export RD_PG_SCRAM_DSN_ATTUNE2='host=127.0.0.1 port=$PG_PORT dbname=attune2 user=rd_scram sslmode=verify-full sslrootcert=$TLS/ca.crt application_name=redrive'"
        echo "export RD_REDIS_AUTH_PORT=$(rsec_port auth)"
        echo "export RD_REDIS_AUTH_URL=redis://127.0.0.1:$(rsec_port auth)/0"
        echo "export RD_REDIS_AUTH_PASSWORD_FILE='$SECRETS/redis_auth_password'"
        echo "export RD_REDIS_ACL_USER=$RSEC_ACL_USER"
        echo "export RD_REDIS_ACL_PASSWORD_FILE='$SECRETS/redis_acl_password'"
        local n N
        for n in "${RSEC_NAMES[@]}"; do
            [ "$n" = auth ] && continue
            N=$(echo "$n" | tr a-z- A-Z_)
            echo "export RD_REDIS_${N}_PORT=$(rsec_port "$n")"
            echo "export RD_REDIS_${N}_URL=rediss://127.0.0.1:$(rsec_port "$n")/0"
        done
        echo "export RD_RABBIT_MGMT_HTTPS_URL=https://127.0.0.1:$MGMT_TLS_PORT"
        echo "export RD_ALAKAI_PREFIX=alakai-executions"
        echo "export RD_RABBIT_FIXTURE_CONSUMER=$CONSUMER_QUEUE"
        if [ -f "$CORESRV" ]; then
            local s S
            for s in "${CORE_SYSTEMS[@]}"; do
                S=$(echo "$s" | tr a-z A-Z)
                echo "export RD_CORE_URL_$S=http://127.0.0.1:$(core_port "$s")"
            done
            # Fixed test credentials, as defined by tools/coresrv/README.md
            if [ -f "$ROOT/tools/coresrv/env.sh" ]; then
                cat "$ROOT/tools/coresrv/env.sh"
            fi
        fi
    } >"$f"
    chmod 644 "$f"
    mv "$f" "$DIR/env"
}

# ---- commands ----------------------------------------------------------------
stores_ready() { pg_vars; pg_ready && redis_ready && rsec_all_ready && rabbit_ready; }

ours_on_port() {  # a listener on port $1 belongs to this DIR
    local p
    for p in $(listeners "$1"); do [ "$(owner_dir "$p")" = "$DIR" ] && return 0; done
    return 1
}

cmd_status() {
    choose_base
    RUSER=${RD_RABBIT_USER_DEFAULT}; RPASS=${RD_RABBIT_PASSWORD_DEFAULT}
    local rc=0
    pg_vars
    if pg_ready; then echo "postgresql: up (port $PG_PORT, socket $PGSOCK)"; else echo "postgresql: down"; rc=1; fi
    if redis_ready && ours_on_port "$REDIS_PORT"; then echo "redis: up (port $REDIS_PORT)"
    else echo "redis: down"; rc=1; fi
    local n
    for n in "${RSEC_NAMES[@]}"; do
        if rsec_ready "$n" && ours_on_port "$(rsec_port "$n")"; then echo "redis-$n: up (port $(rsec_port "$n"))"
        else echo "redis-$n: down"; rc=1; fi
    done
    if rabbit_ready && ours_on_port "$MGMT_PORT"; then
        echo "rabbitmq: up (amqp $AMQP_PORT, management $MGMT_PORT, https $MGMT_TLS_PORT, node $NODENAME)"
    else echo "rabbitmq: down"; rc=1; fi
    if consumer_alive; then echo "amqp consumer: up ($CONSUMER_QUEUE)"; else echo "amqp consumer: down"; rc=1; fi
    if [ -f "$CORESRV" ]; then
        local s
        for s in "${CORE_SYSTEMS[@]}"; do
            if [ -n "$(listeners "$(core_port "$s")")" ]; then echo "core $s: up (port $(core_port "$s"))"
            else echo "core $s: down"; rc=1; fi
        done
    fi
    bash "$HERE/sqs.sh" status "$DIR" "$BASE" || rc=1
    return $rc
}

cmd_start() {
    choose_base
    ephemeral_check
    RUSER=${RD_RABBIT_USER_DEFAULT}; RPASS=${RD_RABBIT_PASSWORD_DEFAULT}
    local t0; t0=$(date +%s%N)
    mkdir -p "$DIR" || die "cannot create $DIR"
    chmod 755 "$DIR"
    if [ -f "$DIR/base" ] && [ "$(cat "$DIR/base")" != "$BASE" ]; then
        log "$DIR was used with port base $(cat "$DIR/base"); stopping that first"
        ( RD_PORT_BASE=$(cat "$DIR/base") bash "$0" stop "$DIR" ) || true
    fi
    local gone
    ss_snapshot
    gone=$(foreign_check) || die "not starting: ports of base $BASE belong to another stack"
    ss_forget
    if [ -n "$gone" ]; then
        log "killing services left by a deleted stack DIR: $(echo $gone)"
        # shellcheck disable=SC2086
        kill_pids $gone
    fi
    local fresh=1 f
    for f in pg rabbit redis env; do [ -e "$DIR/$f" ] && fresh=0; done
    echo "$BASE" >"$DIR/base"
    echo "start $(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$DIR/start.log"
    secrets_make || die "cannot generate the passwords in $SECRETS"
    local tls_pid
    tls_make & tls_pid=$!   # while the leftovers are checked

    if [ $fresh = 0 ] && [ -f "$DIR/env" ] && [ -f "$TLS/done" ] && stores_ready && core_ready \
            && consumer_alive; then
        wait "$tls_pid"
        bash "$HERE/sqs.sh" start "$DIR" "$BASE" || log "WARNING: SQS emulator failed to start"
        if [ "${RD_STACK_STANDBYS:-0}" = 1 ]; then
            bash "$HERE/standbys.sh" start "$DIR" "$BASE" || { log "standbys failed to start"; return 1; }
        fi
        log "already running in $DIR (port base $BASE)"
        return 0
    fi

    # Leftovers of a crashed run: processes of this DIR not answering, squatters on our ports.
    # (A fresh DIR runs nothing yet: no probes, no /proc sweep; every process spawned here
    # costs 0.1-0.2 s on a busy 2-core machine.)
    pg_vars
    local stale="" dpids="" pg_up=0 redis_up=0 rabbit_up=0 i p sq_ports=()
    if [ $fresh = 0 ]; then
        pg_ready && pg_up=1
        redis_ready && redis_up=1
        rabbit_ready && rabbit_up=1
        { [ $pg_up = 1 ] && [ $rabbit_up = 1 ]; } || dpids=$(dir_pids)
        core_stop   # ours (pid files) restart after the fixtures reload; anything else on the ports goes
    fi
    ss_snapshot
    [ $pg_up = 1 ] || stale="$stale $(for p in $dpids; do [ "$(comm_of "$p")" = postgres ] && echo "$p"; done)"
    [ $redis_up = 1 ] || sq_ports+=("$REDIS_PORT")
    for i in "${!RSEC_NAMES[@]}"; do
        [ $fresh = 0 ] && rsec_ours "${RSEC_NAMES[$i]}" && rsec_ready "${RSEC_NAMES[$i]}" && continue
        sq_ports+=("$((BASE + 20 + i))")
    done
    if [ $rabbit_up = 0 ]; then
        stale="$stale $(for p in $dpids; do
            case "$(comm_of "$p")" in beam.smp|erl_child_setup|inet_gethost|epmd) echo "$p" ;; esac; done)"
        sq_ports+=("$AMQP_PORT" "$MGMT_PORT" "$MGMT_TLS_PORT" "$DIST_PORT" "$EPMD_PORT")
    fi
    [ $pg_up = 1 ] || sq_ports+=("$PG_PORT")
    for i in "${!CORE_SYSTEMS[@]}"; do sq_ports+=("$((BASE + 10 + i))"); done
    stale="$stale $(port_squatters "${sq_ports[@]}")"
    ss_forget
    local -A uniq=()
    for p in $stale; do uniq[$p]=1; done
    stale="${!uniq[*]}"
    if [ -n "$stale" ]; then
        log "killing leftover processes of an earlier run: $stale"
        # shellcheck disable=SC2086
        kill_pids $stale
    fi

    phase "leftovers checked"
    wait "$tls_pid" || die "cannot generate the test certificates in $TLS"
    phase "certificates ready; starting the servers"

    # Stores in parallel; PostgreSQL/Redis fixtures load while RabbitMQ is still booting, and
    # the broker's fixtures load as soon as it is up.
    local pg_pid redis_pid rsec_pid rabbit_pid fx_pid rbfx_pid fail=0
    if [ $rabbit_up = 1 ]; then true & rabbit_pid=$!; else rabbit_start & rabbit_pid=$!; fi
    if [ $pg_up = 1 ]; then true & pg_pid=$!; else pg_start & pg_pid=$!; fi
    if [ $redis_up = 1 ]; then true & redis_pid=$!; else redis_start & redis_pid=$!; fi
    rsec_start & rsec_pid=$!
    wait "$pg_pid" || { log "PostgreSQL failed to start"; fail=1; }
    wait "$redis_pid" || { log "Redis failed to start"; fail=1; }
    wait "$rsec_pid" || { log "the secured Redis servers failed to start"; fail=1; }
    : >"$DIR/fixtures.log"
    if [ $fail = 0 ]; then
        write_env
        ( "$PY" "$HERE/fixtures.py" --env-file "$DIR/env" setup "$FIXTURE_STORES" \
            >>"$DIR/fixtures.log" 2>&1 && phase "fixtures (postgresql, redis) loaded" ) &
        fx_pid=$!
    fi
    wait "$rabbit_pid" || { log "RabbitMQ failed to start"; fail=1; }
    if [ $fail = 0 ]; then
        consumer_start
        ( "$PY" "$HERE/fixtures.py" --env-file "$DIR/env" reload rabbit \
            >>"$DIR/fixtures.log" 2>&1 && phase "rabbitmq fixtures loaded" ) &
        rbfx_pid=$!
    fi
    if [ -n "${fx_pid:-}" ] && ! wait "$fx_pid"; then
        log "loading schemas/fixtures failed"; tail_log "$DIR/fixtures.log"; fail=1
    fi
    if [ -n "${rbfx_pid:-}" ] && ! wait "$rbfx_pid"; then
        log "loading the RabbitMQ fixtures failed"; tail_log "$DIR/fixtures.log"; fail=1
    fi
    if [ $fail = 1 ]; then
        log "start failed; stopping what did start"
        cmd_stop_inner
        return 1
    fi
    if ! core_start; then
        # Not fatal: the stores are useful on their own (and the core server is developed in
        # parallel). `status` reports the core servers as down.
        log "WARNING: core servers failed to start (see $DIR/core/*.log); stores are up"
        core_stop
    fi
    bash "$HERE/sqs.sh" start "$DIR" "$BASE" || log "WARNING: SQS emulator failed to start (see $DIR/sqs/sqs.log)"
    phase "core servers up"
    if [ "${RD_STACK_STANDBYS:-0}" = 1 ]; then   # replicas only when asked (standbys.sh)
        bash "$HERE/standbys.sh" start "$DIR" "$BASE" || { log "standbys failed to start"; return 1; }
        phase "standbys up"
    fi
    local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    log "up in $((ms / 1000)).$(( (ms % 1000) / 100 )) s: $DIR/env (port base $BASE)"
    return 0
}

cmd_stop_inner() {
    core_stop
    bash "$HERE/standbys.sh" stop "$DIR" "$BASE"
    bash "$HERE/sqs.sh" stop "$DIR" "$BASE"
    if consumer_alive; then kill_pids "$(cat "$DIR/amqp_consumer.pid")"; fi
    rm -f "$DIR/amqp_consumer.pid"
    pg_stop & local a=$!
    redis_stop & local b=$!
    rabbit_stop & local c=$!
    rsec_stop & local d=$!
    wait $a $b $c $d
    # Anything still carrying our DIR in its command line is ours.
    local left; left=$(dir_pids)
    if [ -n "$left" ]; then
        # shellcheck disable=SC2086
        kill_pids $left
    fi
    return 0
}

cmd_stop() {
    choose_base
    RUSER=${RD_RABBIT_USER_DEFAULT}; RPASS=${RD_RABBIT_PASSWORD_DEFAULT}
    if [ ! -d "$DIR" ]; then   # deleted under a running stack: sweep what names it
        local left; left=$(dir_pids)
        # shellcheck disable=SC2086
        [ -n "$left" ] && kill_pids $left
        log "$DIR does not exist: nothing else to stop"
        return 0
    fi
    cmd_stop_inner
    local left; left=$(dir_pids)
    if [ -n "$left" ]; then
        log "processes still running after stop: $left"
        return 1
    fi
    return 0
}

# Sourced (tests/fault/svc.sh restarts one service with these functions): definitions only.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

case "$CMD" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    standbys) choose_base; bash "$HERE/standbys.sh" start "$DIR" "$BASE" ;;
    *) usage ;;
esac
