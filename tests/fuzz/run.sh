#!/bin/sh
# Builds the libFuzzer harnesses with clang (-fsanitize=fuzzer,address,undefined)
# and runs each for N seconds (default 60) on a scratch copy of its seed corpus.
# usage: tests/fuzz/run.sh [SECONDS] [TARGET...]
#   targets: sanitize config profile model_json keymap theme
# New crashes are written to $OUT/crashes (OUT defaults to a temp dir); add the
# minimized input to tests/fuzz/corpus/<target>/ once fixed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-sanitize config profile model_json keymap theme}
out=${OUT:-$(mktemp -d /tmp/redrive-fuzz.XXXXXX)}
mkdir -p "$out/crashes"
printf '#pragma once\n#define RD_VERSION "fuzz"\n#define RD_DATADIR "/nonexistent"\n#define RD_SRCDIR "%s"\n' \
    "$root" > "$out/rd_build.h"
cflags="-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
 -fno-sanitize-recover=undefined -I$out -I$root/src/core $(pkg-config --cflags libcjson)"
libs="$(pkg-config --libs libcjson) -lm"
status=0
for t in $targets; do
    echo "== building fuzz_$t"
    extra="" extralibs=""
    case $t in
    keymap|theme)   # the ui parsers: their files and the action list, plus curses
        extra="$root/src/ui/keymap.c $root/src/ui/theme.c $root/src/ui/actlist.c -I$root/src/ui"
        extralibs=$(pkg-config --libs ncursesw) ;;
    esac
    # shellcheck disable=SC2086
    clang $cflags -o "$out/fuzz_$t" "$here/fuzz_$t.c" "$root"/src/core/*.c $extra $libs $extralibs
    mkdir -p "$out/corpus_$t"
    cp "$here/corpus/$t/"* "$out/corpus_$t/" 2>/dev/null || true
    echo "== running fuzz_$t for ${secs}s"
    if ! "$out/fuzz_$t" "$out/corpus_$t" -max_total_time="$secs" -max_len=8192 \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$out/crashes/$t-" >"$out/fuzz_$t.log" 2>&1; then
        echo "!! fuzz_$t found a problem: see $out/fuzz_$t.log and $out/crashes/"
        status=1
    fi
    grep -E "^(stat::number_of_executed_units|stat::new_units_added)" "$out/fuzz_$t.log" || true
done
echo "output in $out"
exit $status
