#!/bin/sh
# Builds the libFuzzer harnesses with clang (-fsanitize=fuzzer,address,undefined) and
# runs each for a number of executions on a scratch copy of its seed corpus, then
# prints one table: executions, exec/s, corpus size, crashes per target.
#
# usage: tests/fuzz/run.sh [-runs=N | N] [TARGET...]      (default 1000000, all targets)
#   targets: sanitize config profile model_json keymap theme ini rfc3339 rabbit
#            alakai_record redis_url health sqs jwt journal core_response awscreds
#            pg_rows history
# env: OUT (output directory, default a new temp dir; CLEAN=1 empties its object cache
#      first, as `meson test fuzz_build` does), MAX_LEN (default 8192),
#      MAX_SECS (a time cap per target, default none), TIMEOUT (seconds one input may
#      take, default 10; raise it on a loaded machine), CJSON_SRC (a directory with the
#      cJSON.c of the installed cJSON version: compiled in with the sanitizers, so that a
#      decoder handing cJSON a wrong length is caught inside cJSON too; without it the
#      system library is used and reads inside it are not checked)
#
# A target that does not build, or stops at a finding, is reported and the others still
# run; the exit status is then 1. A finding's input is written to $OUT/crashes. Fix the
# decoder, then add the (minimized: fuzz_T -minimize_crash=1 -runs=10000 FILE) input to
# tests/fuzz/corpus/<target>/ as regress_<what> so `meson test` replays it from then on.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
all="sanitize config profile model_json keymap theme ini rfc3339 rabbit alakai_record
     redis_url health sqs jwt journal core_response awscreds pg_rows history"
runs=1000000
case "${1:-}" in
-runs=*) runs=${1#-runs=}; shift ;;
[0-9]*) runs=$1; shift ;;
esac
targets=${*:-$all}
out=${OUT:-$(mktemp -d /tmp/redrive-fuzz.XXXXXX)}
[ "${CLEAN:-0}" = 1 ] && rm -rf "$out/obj" "$out/crashes" "$out/times"
mkdir -p "$out/crashes" "$out/obj"
printf '#pragma once\n#define RD_VERSION "fuzz"\n#define RD_DATADIR "/nonexistent"\n#define RD_SRCDIR "%s"\n#define RD_TEST_HOOKS 0\n' \
    "$root" > "$out/rd_build.h"
cflags="-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=address,undefined \
 -fno-sanitize-recover=undefined -I$out -I$root/src/core -I$root/src/ui \
 $(pkg-config --cflags libcjson libevent libcurl libpq)"

# The sources each harness needs besides src/core (whole rooms where a decoder calls
# into them), and the libraries they pull in.
io="$root/src/io/*.c"
io_libs="$(pkg-config --libs libevent_openssl libevent libcurl openssl hiredis)"
sources_of() {
    case $1 in
    keymap|theme)  echo "$root/src/ui/keymap.c $root/src/ui/theme.c $root/src/ui/actlist.c" ;;
    rabbit)        echo "$root/src/sources/rabbit_decode.c $root/src/sources/redis_record.c" ;;
    alakai_record) echo "$root/src/sources/redis_record.c" ;;
    health)        echo "$root/src/sources/probe_health.c" ;;
    sqs)           echo "$root/src/sources/sqs_decode.c" ;;
    redis_url)     echo "$root/src/sources/redis_url.c $io" ;;
    jwt)           echo "$root/src/actions/auth.c $io" ;;
    journal)       echo "$root/src/actions/journal.c $root/src/actions/jsyslog.c $root/src/actions/lineappend.c $root/src/io/clock.c" ;;
    core_response) echo "$root/src/actions/*.c $io" ;;
    awscreds)      echo "$io" ;;
    pg_rows)       echo "$root/src/sources/pg_rows.c" ;;
    esac
}
libs_of() {
    case $1 in
    keymap|theme)  pkg-config --libs ncursesw ;;
    redis_url|jwt|core_response|awscreds) echo "$io_libs" ;;
    pg_rows)       pkg-config --libs libpq ;;
    esac
}

# One object per source file, built once per output directory and again when the source is
# newer (a header is not followed: CLEAN=1 after changing one). Callers check the status:
# under `if`, set -e does not stop a function.
obj() {
    o="$out/obj/$(echo "${1#"$root"/src/}" | tr / _ | sed 's/\.c$/.o/')"
    if [ ! -f "$o" ] || [ -n "$(find "$1" -newer "$o")" ]; then
        # shellcheck disable=SC2086
        clang $cflags -fsanitize=fuzzer-no-link -c -o "$o" "$1" >&2 || return 1
    fi
    echo "$o"
}

# The fuzzer of target $1, linked from the objects of its sources.
build() {
    objs=""
    for f in "$root"/src/core/*.c $(sources_of "$1"); do
        o=$(obj "$f") || return 1
        objs="$objs $o"
    done
    # shellcheck disable=SC2086,SC2046
    clang $cflags -fsanitize=fuzzer -o "$out/fuzz_$1" "$here/fuzz_$1.c" $objs $cjson_obj \
        $cjson_libs $(libs_of "$1") -lm
}

for t in $targets; do
    [ -f "$here/fuzz_$t.c" ] || { echo "no such target: $t" >&2; exit 2; }
done
cjson_libs=$(pkg-config --libs libcjson)
cjson_obj=""
if [ -n "${CJSON_SRC:-}" ]; then
    cjson_obj=$(obj "$CJSON_SRC/cJSON.c")
    cjson_libs=""
fi

status=0
for t in $targets; do
    echo "== building fuzz_$t" >&2
    rm -f "$out/fuzz_$t" "$out/fuzz_$t.log"
    if ! build "$t"; then
        echo "!! fuzz_$t did not build" >&2
        echo "$t build" >> "$out/times"
        status=1
        continue
    fi
    rm -rf "$out/corpus_$t"
    mkdir -p "$out/corpus_$t"
    cp "$here/corpus/$t/"* "$out/corpus_$t/"
    dict=""
    [ -f "$here/dict/$t.dict" ] && dict="-dict=$here/dict/$t.dict"
    echo "== running fuzz_$t for $runs executions" >&2
    start=$(date +%s)
    # shellcheck disable=SC2086
    if ! "$out/fuzz_$t" "$out/corpus_$t" -runs="$runs" -max_len="${MAX_LEN:-8192}" \
        ${MAX_SECS:+-max_total_time=$MAX_SECS} $dict -timeout="${TIMEOUT:-10}" -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$out/crashes/$t-" >"$out/fuzz_$t.log" 2>&1; then
        echo "!! fuzz_$t found a problem: see $out/fuzz_$t.log and $out/crashes/" >&2
        status=1
    fi
    echo "$t $(( $(date +%s) - start ))" >> "$out/times"
done

# The table, from the logs of this output directory.
printf '%-14s %12s %9s %8s %8s %8s\n' target executions exec/s corpus crashes seconds
for t in $targets; do
    log="$out/fuzz_$t.log"
    if [ ! -f "$log" ]; then
        printf '%-14s %12s\n' "$t" "did-not-build"
        continue
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    corp=$(grep -o 'corp: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    crashes=$(find "$out/crashes" -name "$t-*" | wc -l)
    secs=$(awk -v t="$t" '$1 == t { s = $2 } END { print s }' "$out/times")
    printf '%-14s %12s %9s %8s %8s %8s\n' "$t" "${execs:-?}" "${rate:-?}" "${corp:-?}" \
        "$crashes" "${secs:-?}"
done
echo "output in $out"
exit $status
