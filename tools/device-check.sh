#!/usr/bin/env bash
# The project's device check, run on the device machine (a GPU; see docs/dev/device-rules.md):
#   1. builds with all cores (or uses a prebuilt folder: PREBUILT=build-dir),
#   2. runs every test (CPU and GPU) through CTest (CTEST_ARGS adds arguments, e.g. -R),
#   3. runs `lowbit info` and `lowbit bench` (BENCH_ARGS adds arguments),
#   4. runs the GPU tests under compute-sanitizer memcheck, racecheck and synccheck
#      (SANITIZE_FILTER selects the subset, default: all GPU tests; RACE_FILTER the subset for
#      the slower racecheck and synccheck, default: tests of lowbit's own kernels only;
#      SANITIZE_TIMEOUT seconds per tool, default 300; LOWBIT_TEST_SMALL=1 by default;
#      SANITIZE_TOOLS the tools, default "memcheck racecheck synccheck"),
#   5. writes a report (GPU, driver, commit, results) to $OUT/report.md plus logs and
#      bench.json, to be committed under bench/results/.
# $OUT then holds report.md, bench.json and logs.tar.gz (build, ctest, sanitizer logs).
# Environment: OUT (default ./device-out), LOWBIT_COMMIT (the commit being checked; the device
# copy of the tree has no .git), ARCHS (default 90a: the device's own arch), STEPS (default
# "build test sanitize bench").
# One device call is limited to 600 s. The whole check with SANITIZE_FILTER='*' took ~640 s on
# an H200 on 2026-11-27 (build 88, ctest 80, bench 230, memcheck 95, racecheck ~110,
# synccheck ~30): split it in two calls on the same warm machine, e.g.
#   1. STEPS="build test sanitize bench" SANITIZE_FILTER='*' SANITIZE_TOOLS=memcheck
#   2. PREBUILT=build-device STEPS=sanitize SANITIZE_TOOLS="racecheck synccheck"
# (docs/dev/device-rules.md).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
ARCHS=${ARCHS:-90a}
STEPS=${STEPS:-build test sanitize bench}
build=${PREBUILT:-build-device}
commit=${LOWBIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
report=$OUT/report.md
status=0
step() { echo "== $(date +%T) $*" | tee -a "$OUT/steps.log"; }
has() { [[ " $STEPS " == *" $1 "* ]]; }

{
  echo "# lowbit device check"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- commit: $commit"
  echo "- GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1)"
  echo "- clocks at start: $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader 2>&1 | head -1)"
  echo "- nvcc: $(nvcc --version 2>&1 | tail -1)"
  echo "- host: $(nproc) cores, $(uname -r)"
} > "$report"

if has build && [ -z "${PREBUILT:-}" ]; then
  step "build (archs $ARCHS)"
  deps=(); [ -d .deps/include ] && deps=(-DLOWBIT_DEPS_DIR="$PWD/.deps")
  if ! { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON \
           -DLOWBIT_CUDA_ARCHITECTURES="$ARCHS" "${deps[@]}" &&
         cmake --build "$build" -j "$(nproc)"; } > "$OUT/build.log" 2>&1; then
    tail -n 40 "$OUT/build.log"
    echo "- build: FAILED (see build.log)" >> "$report"
    exit 1
  fi
  echo "- build: ok ($ARCHS, $(grep -c 'Building' "$OUT/build.log") steps)" >> "$report"
fi

if has test; then
  step "ctest"
  # shellcheck disable=SC2086
  ctest --test-dir "$build" -j 8 --output-on-failure ${CTEST_ARGS:-} > "$OUT/ctest.log" 2>&1 || status=1
  echo "- ctest: $(grep -E 'tests passed|tests failed' "$OUT/ctest.log" | tail -1)" >> "$report"
  grep -E "\*\*\*Failed|Not Run|SKIPPED" "$OUT/ctest.log" | head -20 >> "$report"
fi

if has bench; then
  step "lowbit info"
  "$build/lowbit" info > "$OUT/info.txt" 2>&1
  step "lowbit bench ${BENCH_ARGS:-}"
  # shellcheck disable=SC2086
  "$build/lowbit" bench --json "$OUT/bench.json" ${BENCH_ARGS:-} > "$OUT/bench.txt" 2>&1 || status=1
  {
    echo
    echo "## lowbit info"
    echo '```'
    cat "$OUT/info.txt"
    echo '```'
    echo
    echo "## lowbit bench ${BENCH_ARGS:-}"
    echo '```'
    cat "$OUT/bench.txt"
    echo '```'
  } >> "$report"
fi
if has sanitize; then
  gpu_tests="$build/tests/lowbit_gpu_tests"
  export LOWBIT_TEST_SMALL=${LOWBIT_TEST_SMALL:-1}  # the tests' small-shape mode: sanitizers are slow
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
    filter=${SANITIZE_FILTER:-*}
    [ "$tool" != memcheck ] && filter=${RACE_FILTER:-smxx_convert.*:sm80_mixed_gemm.every_config*:sm80_mixed_gemm.act_order*:smxx_gemv.forced_launches:smxx_gemv.bitserial_and_decoding_kernels:smxx_gemv.cluster_k_split:smxx_gemv.int8_activations:smxx_gemv.tiled_layout_every_format:smxx_gemv.tiled_layout_act_order*:sm90_fp8_gemm.forced_plans:sm90_fp8_gemm.k_pairs:sm90_fp8_gemm.edges:sm90_int8_gemm.forced_plans:sm90_int8_gemm.edges:sm80_int8_gemm.every_config_and_split_mode:sm90_mixed_gemm.edges:sm90_mixed_gemm.every_config_and_split:sm89_fp8_gemm.every_config_and_split_mode:sm89_fp8_gemm.k_at_stage_and_block_edges:smxx_fp8_act_quant.per_token_bf16:smxx_fp8_act_quant.per_tensor_f16:smxx_fp8_act_quant.block1x128_f16:smxx_int8_act_quant.per_token_zp_bf16:smxx_int8_act_quant.static_zp_bf16}
    step "compute-sanitizer $tool ($filter)"
    log="$OUT/sanitizer-$tool.log"
    # Keep tests that run cuBLAS kernels out of RACE_FILTER: racecheck reports hazards inside
    # cuBLAS's own Hopper kernels (nvjet_*, which synchronize through mbarriers and the TMA's
    # async proxy), and --kernel-name-exclude kns=nvjet made the sanitizer itself fail with a
    # hardware exception (both seen 2026-11-21, H200, CUDA 13.0). memcheck covers them.
    timeout "${SANITIZE_TIMEOUT:-300}" \
      compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 \
      "$gpu_tests" --gtest_filter="$filter" --gtest_brief=1 > "$log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
    echo "- compute-sanitizer $tool ($filter): exit $rc; ${summary:-no summary line}; $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$log" | tr '\n' ' ')" >> "$report"
    [ $rc -eq 0 ] || status=1
  done
fi

echo "- overall: $([ $status -eq 0 ] && echo PASS || echo FAIL)" >> "$report"
step "done (status $status)"
# The device tool returns at most 8 files: keep report.md and bench.json, pack the logs.
(cd "$OUT" && tar czf logs.tar.gz --remove-files ./*.log info.txt bench.txt 2>/dev/null)
grep -E "^- " "$report"
exit $status
