# Helpers for a device call that runs binaries built here and carried in one xz'd tarball
# (docs/dev/device-rules.md, session 68). Source it from a call script in the tree:
#
#   source tools/dev/carried-call.sh
#   cc_begin .deps/c1t/c1.tar.xz            # unpacks into $CC_BIN (/tmp/cc), $OUT/gpu.txt
#   cc_tests 'smxx_gemv.*:*act_order*'       # lowbit_gpu_tests -> $OUT/tests.txt
#   cc_sanitize memcheck 'smxx_gemv.tiled_layout_act_order*'   # -> $OUT/san.txt (appended)
#   cc_bench arm-1 --suite suite1 --m 1,2 --no-check --kernels '^w4g128act_f16$'
#   LOWBIT_GEMV_ACT_GATHER=0 cc_bench scatter-1 --suite suite1 ...
#   cc_finish                                # $OUT/ab.txt, $OUT/runs.tgz, the timings
#
# cc_bench writes $OUT/runs/<name>.txt; cc_finish parses every run into ab.txt lines
# "<name> <variant> <layer> <m> <us> <kernel>" (tools/dev: compare them with a few lines of awk)
# and packs the raw outputs into one file (files in $OUT's subfolders do not come back).
# Each step appends "<seconds> s: <step>" to $OUT/timing.txt.

OUT=${OUT:-$PWD/device-out}
CC_BIN=${CC_BIN:-/tmp/cc}
cc_t0=$SECONDS

cc_mark() { echo "$(( SECONDS - cc_t0 )) s: $*" >> "$OUT/timing.txt"; }

# cc_begin TARBALL: the GPU's name, clocks and driver, and the binaries unpacked.
cc_begin() {
  mkdir -p "$OUT/runs" "$CC_BIN"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
  xz -dc "$1" | tar -C "$CC_BIN" -xf - || { echo "carried-call: cannot unpack $1" >&2; return 1; }
  cc_mark unpacked
}

# cc_tests FILTER [SECONDS]: lowbit_gpu_tests with a gtest filter; its last lines to stdout.
cc_tests() {
  timeout "${2:-240}" "$CC_BIN/lowbit_gpu_tests" --gtest_filter="$1" --gtest_brief=1 > "$OUT/tests.txt" 2>&1
  echo "rc=$?" >> "$OUT/tests.txt"
  tail -3 "$OUT/tests.txt"
  cc_mark tests
}

# cc_sanitize TOOL FILTER [SECONDS]: compute-sanitizer TOOL on the filtered GPU tests (synccheck
# with LOWBIT_TEST_SMALL=1); the summary and exit status to stdout.
cc_sanitize() {
  local small=${LOWBIT_TEST_SMALL:-}
  [ "$1" = synccheck ] && small=1
  {
    LOWBIT_TEST_SMALL=$small timeout "${3:-150}" compute-sanitizer --tool "$1" --error-exitcode 99 \
      "$CC_BIN/lowbit_gpu_tests" --gtest_filter="$2" --gtest_brief=1
    echo "$1 rc=$?"
  } >> "$OUT/san.txt" 2>&1
  grep -E "SUMMARY|$1 rc=" "$OUT/san.txt" | tail -2
  cc_mark "$1"
}

# cc_bench NAME ARGS...: `lowbit bench ARGS` (the carried lowbit, or $CC_LOWBIT) into runs/NAME.txt.
cc_bench() {
  local name=$1
  shift
  timeout "${CC_BENCH_SECONDS:-120}" "${CC_LOWBIT:-$CC_BIN/lowbit}" bench "$@" > "$OUT/runs/$name.txt" 2>&1
  cc_mark "bench $name"
}

# cc_finish: ab.txt from the runs, the runs packed, the timings printed.
cc_finish() {
  for f in "$OUT"/runs/*.txt; do
    [ -e "$f" ] || continue
    grep -h -E '^w[0-9a-z_]+ +[a-z0-9_x]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"
  done | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
  tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
  cat "$OUT/timing.txt"
}
