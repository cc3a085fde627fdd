#!/usr/bin/env bash
# Session 65, sixth device call: sm90_mixed_gemm's stream-K tail (sm90 v23), built on the
# development machine and carried in .deps/sk/sk.tar.xz: lowbit-sk / lowbit_gpu_tests-sk (the
# working tree with the tail), lowbit-base (f681ce0's tree: the kernels before it).
# 1. the sm90 mixed / selection / graph tests; memcheck and racecheck on the tail's tests (small);
# 2. Suite 1 at m = 33 / 64 / 128 and n x 4096 layers from one wave to two at m = 64, W4 g128 f16
#    and W8 per-channel f16: base, the new build's default (the model), the new build with the tail
#    wherever valid (LOWBIT_SM90_MIXED_SK=1), two rounds; then a CPU-checked run of the tail plans.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/sk
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/sk/sk.tar.xz | tar -C /tmp/sk -xf - || exit 1
mark unpacked
T=/tmp/sk/lowbit_gpu_tests-sk
$T --gtest_filter='sm90_mixed_gemm.*:graph_capture.*:smxx_gemv.public*:sm80_mixed_gemm.public*' > "$OUT/tests.txt" 2>&1
echo "rc=$?" >> "$OUT/tests.txt"; tail -4 "$OUT/tests.txt"
mark tests
for tool in memcheck racecheck; do
  LOWBIT_TEST_SMALL=1 compute-sanitizer --tool $tool $T --gtest_filter='sm90_mixed_gemm.stream_k*:sm90_mixed_gemm.deterministic*' \
    > "$OUT/sanitize-$tool.txt" 2>&1
  echo "rc=$?" >> "$OUT/sanitize-$tool.txt"; tail -3 "$OUT/sanitize-$tool.txt"
done
mark sanitizers
k='^(w4g128_f16|w8_f16)$'
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25 --kernels "$k")
ws=16896x4096,19712x4096,22528x4096,25344x4096,28672x4096,31232x4096,33792x4096
one() {  # arm binary [env]
  local arm=$1 bin=$2; shift 2
  env "$@" $bin bench "${b[@]}" --m 33,64,128 > "$OUT/runs/s1-$arm-$r.txt" 2>&1
  env "$@" $bin bench "${b[@]}" --m 64 --shapes $ws > "$OUT/runs/w-$arm-$r.txt" 2>&1
}
for r in 1 2; do
  one base /tmp/sk/lowbit-base
  one model /tmp/sk/lowbit-sk
  one sk /tmp/sk/lowbit-sk LOWBIT_SM90_MIXED_SK=1
  mark "round $r"
done
LOWBIT_SM90_MIXED_SK=1 /tmp/sk/lowbit-sk bench --suite suite1 --m 1,33,64,128 --kernels '^(w4g128_f16|w4g128_bf16|w4g128asym_f16|w8_f16|w8_bf16)$' \
  --shapes 6144x4096,19712x4096,28672x4096,4096x14336 > "$OUT/runs/checked.txt" 2>&1
mark checked
for f in "$OUT"/runs/s1-*.txt "$OUT"/runs/w-*.txt; do grep -h -E '^w[48](g128)?_f16 +[a-z0-9_]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
grep -E '^w[48]' "$OUT/runs/checked.txt" | awk '{print $1, $2, $3, $6, $(NF-2), $(NF-1), $NF}' > "$OUT/checked.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
mark done
cat "$OUT/timing.txt"
