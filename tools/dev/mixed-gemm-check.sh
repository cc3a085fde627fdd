#!/usr/bin/env bash
# One device call for the sm80 mixed GEMM (docs/kernels/mixed_gemm.md): correctness tests,
# compute-sanitizer, and Suite-1 timings, each section under its own time limit, logs under
# $OUT, a short summary last.
#
#   tools/dev/mixed-gemm-check.sh [sections]     sections: any of tests,memcheck,race,bench
#                                                (default: tests,memcheck,bench)
# Binary: $BIN (default build-mg/tests/lowbit_gpu_tests, built here with
# -DLOWBIT_CUDA_ARCHITECTURES=90a and carried); if it does not run on the device, the script
# builds it there into build-dev/ (needs .deps carried: tools/dev/make-deps.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/mixed-gemm-out}
mkdir -p "$OUT"
SECTIONS=${1:-tests,memcheck,bench}
BIN=${BIN:-build-mg/tests/lowbit_gpu_tests}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
has() { [[ ",$SECTIONS," == *",$1,"* ]]; }

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$OUT/gpu.txt"
if ! "$BIN" --gtest_list_tests > /dev/null 2>&1; then
  echo "== carried binary does not run here; building on the device"
  t0=$SECONDS
  cmake -S . -B build-dev -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR="$PWD/.deps" > "$OUT/build.log" 2>&1 &&
    cmake --build build-dev --target lowbit_gpu_tests -j16 >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  BIN=build-dev/tests/lowbit_gpu_tests
  echo "   built in $((SECONDS - t0)) s"
fi

. tools/dev/run-section.sh

# Limits sum to < 450 s so one device call (<= 480 s) holds every section; bench runs
# before the sanitizers so its numbers survive a slow racecheck.
if has tests; then
  run_section tests 100 "$BIN" --gtest_filter='sm80_mixed_gemm.*'
  grep -E '^\[  FAILED|Failure|error' "$OUT/tests.log" | head -20
fi
if has bench; then
  run_section bench 150 env LOWBIT_MIXED_GEMM_BENCH=1 LOWBIT_MIXED_GEMM_BENCH_PLANS=${PLANS:-1} \
    LOWBIT_MIXED_GEMM_BENCH_OUT="$OUT/bench_table.txt" "$BIN" --gtest_also_run_disabled_tests --gtest_filter='sm80_mixed_gemm_bench.*'
  grep -A20 'Suite 1 sums' "$OUT/bench.log"
fi
if has memcheck; then
  run_section memcheck 60 env LOWBIT_TEST_SMALL=1 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$BIN" --gtest_filter='sm80_mixed_gemm.every_config*:sm80_mixed_gemm.act_order*:sm80_mixed_gemm.cuda_graph*:sm80_mixed_gemm.two_streams*:sm80_mixed_gemm.device_repack*:sm80_mixed_gemm.sweep_m_every_format_fp16:sm80_mixed_gemm.k_at*'
  grep -E 'Invalid|ERROR SUMMARY' "$OUT/memcheck.log" | head -5
fi
if has race; then
  run_section racecheck 90 env LOWBIT_TEST_SMALL=1 compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$BIN" --gtest_filter='sm80_mixed_gemm.every_config*'
  grep -E 'hazard|ERROR SUMMARY' "$OUT/racecheck.log" | head -5
  run_section synccheck 45 env LOWBIT_TEST_SMALL=1 compute-sanitizer --tool synccheck --error-exitcode 9 \
    "$BIN" --gtest_filter='sm80_mixed_gemm.every_config*:sm80_mixed_gemm.act_order*'
  grep -E 'ERROR SUMMARY' "$OUT/synccheck.log" | head -3
fi
if has profile; then
  # One ncu report per plan: stall reasons, occupancy, memory throughput (clocks untouched).
  i=0
  for spec in ${PROFILES:-"1,28672,4096,0,1" "16,28672,4096,1,1" "64,6144,4096,2,2" "4096,28672,4096,3,1"}; do
    i=$((i + 1))
    run_section "ncu$i" 60 env LOWBIT_MG_PROFILE="$spec" ncu --clock-control none --launch-skip 2 --launch-count 1 \
      --kernel-name regex:sm80_mixed_gemm_kernel --section SpeedOfLight --section WarpStateStats \
      --section SchedulerStats --section Occupancy --section MemoryWorkloadAnalysis --section LaunchStats \
      "$BIN" --gtest_also_run_disabled_tests --gtest_filter='sm80_mixed_gemm_bench.DISABLED_profile_one'
  done
  cat "$OUT"/ncu[0-9]*.log > "$OUT/ncu_all.txt" 2>/dev/null && rm -f "$OUT"/ncu[0-9]*.log
fi
# At most 8 files come back from a device call: fold the sanitizer logs into one.
for f in memcheck racecheck synccheck; do
  [ -f "$OUT/$f.log" ] && { echo "=== $f"; cat "$OUT/$f.log"; } >> "$OUT/sanitizer.txt" && rm -f "$OUT/$f.log"
done
[ -f "$OUT/bench_table.txt" ] && rm -f "$OUT/bench.log"
echo "== summary"
printf '%s\n' "${summary[@]}"
