#!/usr/bin/env bash
# A/B of a measurement knob (an environment variable the library reads) on the device machine:
# runs `lowbit bench ARGS` once per value, ROUNDS times in alternation (a b a b ...), so that
# the machine's drift falls on both sides, and prints each run's suite summaries last.
#
#   tools/dev/env-ab.sh VAR "VALUE..." ROUNDS [bench arguments...]
#   e.g. tools/dev/env-ab.sh LOWBIT_MIXED_GEMM_PDL "1 0" 2 --suite suite1 --m 64,256
#
# LOWBIT (default build-device/lowbit) is the binary; full outputs go to $OUT/ab-<VAR>-<value>-<round>.txt.
set -uo pipefail
[ $# -ge 3 ] || { sed -n 2,9p "$0"; exit 2; }
var=$1 values=$2 rounds=$3
shift 3
bin=${LOWBIT:-build-device/lowbit}
out=${OUT:-/tmp/env-ab}
mkdir -p "$out"
status=0
for ((r = 1; r <= rounds; r++)); do
  for v in $values; do
    f="$out/ab-$var-$v-$r.txt"
    env "$var=$v" "$bin" bench "$@" > "$f" 2>&1 || status=1
  done
done
for ((r = 1; r <= rounds; r++)); do
  for v in $values; do
    f="$out/ab-$var-$v-$r.txt"
    echo "== $var=$v round $r"
    # The summary tables: from each '== ... summary' header to the next blank line.
    awk '/^== .*summary/{p=1} p && /^$/{p=0} p' "$f"
  done
done
exit $status
