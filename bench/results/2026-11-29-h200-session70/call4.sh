#!/usr/bin/env bash
# Session 70, call 4: call 3's factors separated. The act-order gather's forms (session 66's:
# element per thread below m = 256, a block per row from there; column chunks at every m; the
# committed rule: element to m = 64, chunks to 255, rows from 256) with PDL for the gather, sm90's
# maps kernel and sm90's GEMM, against session 69's behaviour (no PDL, session 66's forms), the same
# binary, two alternating rounds, W4 g128 f16 act-order Suite 1; W8 g128 the rule against session
# 69's; then the act-order tests, memcheck and racecheck on the new ones.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}; mkdir -p "$OUT/runs"
t0=$SECONDS; mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
{ cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a \
    -DLOWBIT_DEPS_DIR="$PWD/.deps" && cmake --build build-device -j 16; } > "$OUT/build.log" 2>&1
mark "built rc=$?"
L=build-device/lowbit
arm() {  # name, kernels, m, env...
  local name=$1 k=$2 m=$3; shift 3
  env "$@" timeout 100 $L bench --suite suite1 --m $m --kernels "$k" --no-check --reps 3 > "$OUT/runs/$name-$r.txt" 2>&1
  mark "$name $r"
}
K4='^w4g128act_f16$'; K8='^w8g128act_f16$'; M=16,32,64,128,256,1024
for r in 1 2; do
  arm prev $K4 $M LOWBIT_MIXED_ACT_GATHER=0 LOWBIT_MIXED_ACT_PDL=0 LOWBIT_MIXED_ACT_GEMM_PDL=0
  arm oldpdl $K4 $M LOWBIT_MIXED_ACT_GATHER=0
  arm chunkpdl $K4 $M LOWBIT_MIXED_ACT_GATHER=1
  arm rule $K4 $M
  arm w8prev $K8 16,64,256 LOWBIT_MIXED_ACT_GATHER=0 LOWBIT_MIXED_ACT_PDL=0 LOWBIT_MIXED_ACT_GEMM_PDL=0
  arm w8rule $K8 16,64,256
done
timeout 100 $L bench --suite suite1 --m 16,128,256 --kernels '^w(4g128|8g128)act_(f16|bf16)$' > "$OUT/runs/checked.txt" 2>&1; mark checked
G=build-device/tests/lowbit_gpu_tests
timeout 200 $G --gtest_filter='sm80_mixed_gemm.act_order*:sm90_mixed_gemm.act_order*:smxx_gemv.tiled_layout_act_order*:sm80_mixed_gemm.cuda_graph*:sm90_mixed_gemm.cuda_graph*' > "$OUT/gtest.txt" 2>&1; mark "gtest rc=$?"
for tool in memcheck racecheck; do
  LOWBIT_TEST_SMALL=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 1 $G \
    --gtest_filter='sm80_mixed_gemm.act_order*:sm90_mixed_gemm.act_order_gather*' > "$OUT/$tool.txt" 2>&1; mark "$tool rc=$?"
done
for f in "$OUT"/runs/*.txt; do
  grep -h -E '^w[0-9a-z_]+ +[a-z0-9_x]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"
done | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tail -n 20 "$OUT/build.log" > "$OUT/build-tail.txt"; rm -f "$OUT/build.log"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"; grep -E "PASSED|FAILED" "$OUT/gtest.txt"; tail -2 "$OUT/memcheck.txt" "$OUT/racecheck.txt"
