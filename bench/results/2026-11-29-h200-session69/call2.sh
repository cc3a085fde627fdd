#!/usr/bin/env bash
# Session 69, calls 1 and 2 (call 1's source tarball of 7627834 lacked bench/, so that build failed): the act-order GEMV on the index's 16-bit perm (827cb57) against 7627834.
# Builds this tree (everything, build-device: reused by the device check if the machine stays
# warm) and 7627834's `lowbit` (carried source, .deps/old/src.tar.xz) side by side, runs the
# act-order and pack tests, memcheck / racecheck on the GEMV's act-order tests, then
# `lowbit bench` Suite 1 alternating old / new, two rounds, and one CPU-checked round of new.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}; mkdir -p "$OUT/runs"
t0=$SECONDS; mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
deps=(-DLOWBIT_DEPS_DIR="$PWD/.deps")
mkdir -p /tmp/old && xz -dc .deps/old/src.tar.xz | tar -C /tmp -xf -
( cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a "${deps[@]}" &&
  cmake --build build-device -j 12 ) > "$OUT/build-new.log" 2>&1 &
pn=$!
( cmake -S /tmp/old -B /tmp/old/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a \
    -DLOWBIT_BUILD_TESTS=OFF "${deps[@]}" && cmake --build /tmp/old/build -j 6 --target lowbit ) > "$OUT/build-old.log" 2>&1 &
po=$!
wait $pn; echo "new build rc=$?" >> "$OUT/timing.txt"; mark built-new
NEW=build-device/lowbit
timeout 200 build-device/tests/lowbit_gpu_tests --gtest_filter='smxx_gemv.*act_order*:sm80_mixed_gemm.*act_order*:sm90_mixed_gemm.*act_order*' --gtest_brief=1 > "$OUT/tests.txt" 2>&1; echo "rc=$?" >> "$OUT/tests.txt"
timeout 60 build-device/tests/lowbit_cpu_tests --gtest_filter='pack_tiled*' --gtest_brief=1 >> "$OUT/tests.txt" 2>&1; echo "cpu rc=$?" >> "$OUT/tests.txt"
mark tests
wait $po; echo "old build rc=$?" >> "$OUT/timing.txt"; mark built-old
OLD=/tmp/old/build/lowbit
K='^(w4g128act_f16|w8g128act_f16|w4g128_f16)$'
for r in 1 2; do
  timeout 120 $OLD bench --suite suite1 --m 1,2,3,4 --kernels "$K" --no-check --reps 3 > "$OUT/runs/old-$r.txt" 2>&1; mark "old $r"
  timeout 120 $NEW bench --suite suite1 --m 1,2,3,4 --kernels "$K" --no-check --reps 3 > "$OUT/runs/new-$r.txt" 2>&1; mark "new $r"
done
timeout 150 $NEW bench --suite suite1 --m 1,2,4,8 --kernels '^(w4g128act_f16|w8g128act_f16)$' > "$OUT/runs/checked.txt" 2>&1; mark checked
{
  LOWBIT_TEST_SMALL=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 build-device/tests/lowbit_gpu_tests \
    --gtest_filter='smxx_gemv.*act_order*' --gtest_brief=1; echo "memcheck rc=$?"
  LOWBIT_TEST_SMALL=1 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 99 build-device/tests/lowbit_gpu_tests \
    --gtest_filter='smxx_gemv.tiled_layout_act_order*' --gtest_brief=1; echo "racecheck rc=$?"
} > "$OUT/san.txt" 2>&1
mark sanitize
for f in "$OUT"/runs/*.txt; do
  grep -h -E '^w[0-9a-z_]+ +[a-z0-9_x]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"
done | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tail -n 30 "$OUT/build-old.log" > "$OUT/build-old-tail.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs build-new.log build-old.log && rm -rf "$OUT/runs" "$OUT/build-new.log" "$OUT/build-old.log"
cat "$OUT/timing.txt"; tail -3 "$OUT/tests.txt"; grep -E 'SUMMARY|rc=' "$OUT/san.txt"
