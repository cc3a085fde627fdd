#!/usr/bin/env bash
# Session 70, call 3: the act-order gather (sm80_mixed_gemm_aux.cu) staged in column chunks at
# every m, with PDL for it and sm90's maps kernel, against session 66's form without PDL, the same
# binary (LOWBIT_MIXED_ACT_GATHER / LOWBIT_MIXED_ACT_PDL / LOWBIT_MIXED_ACT_GEMM_PDL), two
# alternating rounds, W4 g128 f16 act-order Suite 1 (sm80_mixed_gemm at m = 16, sm90_mixed_gemm
# above); then the act-order and selection tests, memcheck on the new ones, and the GEMV rule at
# 2048 x 8192 m = 7 / 8 as built.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}; mkdir -p "$OUT/runs"
t0=$SECONDS; mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
{ cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a \
    -DLOWBIT_DEPS_DIR="$PWD/.deps" && cmake --build build-device -j 16; } > "$OUT/build.log" 2>&1
mark "built rc=$?"
L=build-device/lowbit
K='^w4g128act_f16$'
M=16,32,64,128,256,1024
arm() {  # name, env...
  local name=$1; shift
  env "$@" timeout 100 $L bench --suite suite1 --m $M --kernels "$K" --no-check --reps 3 > "$OUT/runs/$name-$r.txt" 2>&1
  mark "$name $r"
}
for r in 1 2; do
  arm old LOWBIT_MIXED_ACT_GATHER=0 LOWBIT_MIXED_ACT_PDL=0
  arm chunks LOWBIT_MIXED_ACT_PDL=0
  arm new
  arm newgemm LOWBIT_MIXED_ACT_GEMM_PDL=1
done
timeout 60 $L bench --suite suite1 --shapes 2048x8192 --m 7,8 --kernels "$K" > "$OUT/runs/rule-checked.txt" 2>&1; mark rule
timeout 100 $L bench --suite suite1 --m 16,64,256 --kernels '^w(4g128|8g128)act_f16$' > "$OUT/runs/checked.txt" 2>&1; mark checked
T=build-device/tests
F='sm80_mixed_gemm.act_order*:sm90_mixed_gemm.act_order*:smxx_gemv.tiled_layout_act_order*'
G=$T/lowbit_gpu_tests
timeout 200 $G --gtest_filter="$F" > "$OUT/gtest.txt" 2>&1; mark "gtest rc=$?"
LOWBIT_TEST_SMALL=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 $G \
  --gtest_filter='sm80_mixed_gemm.act_order_gather*:sm90_mixed_gemm.act_order_gather*' > "$OUT/memcheck.txt" 2>&1; mark "memcheck rc=$?"
for f in "$OUT"/runs/*.txt; do
  grep -h -E '^w[0-9a-z_]+ +[a-z0-9_x]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"
done | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tail -n 20 "$OUT/build.log" > "$OUT/build-tail.txt"; rm -f "$OUT/build.log"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"; tail -3 "$OUT/gtest.txt"; tail -3 "$OUT/memcheck.txt"
