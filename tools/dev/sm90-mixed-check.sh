#!/usr/bin/env bash
# One device call for sm90_mixed_gemm (docs/kernels/mixed_gemm.md, "sm90_mixed_gemm"): build
# there, the family's GPU tests, compute-sanitizer memcheck / racecheck of the small sweeps,
# and a Suite-1 A/B of an environment knob, each section under its own time limit; logs under $OUT,
# a short summary last. Session 28 ran the cluster k-split experiment (mixed_gemm.md sm90
# v8) through it.
#
#   tools/dev/sm90-mixed-check.sh [sections]   any of build,tests,memcheck,race,bench
#                                              (default: all of them, in that order; their
#                                              limits add up to more than one 600 s device
#                                              call: name a few sections per call)
# Environment: AB_VAR / AB_VALUES (default LOWBIT_MIXED_GEMM_PDL, "1 0"), AB_ROUNDS (2),
# AB_M (bench M list, default 17,32,64,128,256), AB_KERNELS (variant regex). Needs .deps
# carried (tools/dev/make-deps.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-/tmp/sm90-mixed-out}  # env-ab.sh writes its runs there too
mkdir -p "$OUT"
SECTIONS=${1:-build,tests,memcheck,race,bench}
has() { [[ ",$SECTIONS," == *",$1,"* ]]; }
BUILD=build-device
TESTS=$BUILD/tests/lowbit_gpu_tests

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$OUT/gpu.txt"
. tools/dev/run-section.sh

if has build; then
  run_section build 300 bash -c "cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON \
    -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps && cmake --build $BUILD -j16"
  tail -3 "$OUT/build.log"
fi
FILTER='sm90_mixed_gemm.*'
has tests && run_section tests 240 "$TESTS" --gtest_filter="$FILTER"
SAN_FILTER='sm90_mixed_gemm.every_config_and_split:sm90_mixed_gemm.edges:sm90_mixed_gemm.cuda_graph_capture:sm90_mixed_gemm.two_streams_concurrently'
has memcheck && run_section memcheck 180 env LOWBIT_TEST_SMALL=1 compute-sanitizer --tool memcheck --error-exitcode 3 \
  "$TESTS" --gtest_filter="$SAN_FILTER"
has race && run_section race 180 env LOWBIT_TEST_SMALL=1 compute-sanitizer --tool racecheck --error-exitcode 3 \
  "$TESTS" --gtest_filter='sm90_mixed_gemm.every_config_and_split:sm90_mixed_gemm.two_streams_concurrently'
if has bench; then
  export LOWBIT=$BUILD/lowbit
  run_section bench 300 tools/dev/env-ab.sh "${AB_VAR:-LOWBIT_MIXED_GEMM_PDL}" "${AB_VALUES:-1 0}" "${AB_ROUNDS:-2}" \
    --suite suite1 --m "${AB_M:-17,32,64,128,256}" --kernels "${AB_KERNELS:-^(w4g128_f16|w8_f16|w4g128_bf16)$}"
  cat "$OUT/bench.log"
  # Per-layer figures of the first round, for the notes.
  for f in "$OUT"/ab-*-1.txt; do
    echo "== $f"
    grep -E "^(w4g128_f16|w8_f16|w4g128_bf16) " "$f" | awk '{printf "%-12s %-8s %5s %9s  %s\n", $1, $2, $3, $6, $NF}'
  done
fi
echo "== summary"
printf '%s\n' "${summary[@]}"
