#!/bin/bash
# Device call 3: build E (the tree: HEAD + opaque lane_x + consecutive 8-bit t16 copies) with
# the GPU tests, run the sm80 tests and memcheck on the edge tests; build A (HEAD); three
# alternating rounds A / E; then racecheck and synccheck (device-check.sh's RACE_FILTER) on E's
# GPU tests.
set -u
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt
mkdir -p /tmp/abbin
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > /tmp/cfg.log 2>&1 || { tail -20 /tmp/cfg.log; exit 1; }
TF='sm80_mixed_gemm.*:graph_capture.*:sm80_int8_gemm.*:smxx_gemv.*'
EDGE='sm80_mixed_gemm.n_at_tile_edges:sm80_mixed_gemm.k_at_pipeline_boundaries:sm80_mixed_gemm.small_shared_memory_variants:sm80_mixed_gemm.every_config_and_split_mode'
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli lowbit_gpu_tests > /tmp/bE.log 2>&1 || { tail -30 /tmp/bE.log; exit 1; }
echo "E built in $(( $(date +%s) - t0 )) s"
cp build/lowbit /tmp/abbin/lowbit-E
T=$(find build -name lowbit_gpu_tests -type f | head -1); cp $T /tmp/abbin/tests-E
t0=$(date +%s); /tmp/abbin/tests-E --gtest_filter="$TF" > $OUT/tests-E.txt 2>&1; echo "E tests rc $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/tests-E.txt; grep "FAILED " $OUT/tests-E.txt | head
t0=$(date +%s); compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/abbin/tests-E --gtest_filter="$EDGE" > $OUT/memcheck-E.txt 2>&1; echo "E memcheck rc $? in $(( $(date +%s) - t0 )) s"; tail -1 $OUT/memcheck-E.txt
patch -R -p1 < ab12/E.patch > /dev/null || { echo "reverse failed"; exit 1; }
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli > /tmp/bA.log 2>&1 || { tail -30 /tmp/bA.log; exit 1; }
cp build/lowbit /tmp/abbin/lowbit-A; echo "A built in $(( $(date +%s) - t0 )) s"
patch -p1 < ab12/E.patch > /dev/null
K='^(w4g128_f16|w4g128_bf16|w8_f16|w8g128_f16)$'
cd /tmp/abbin
t0=$(date +%s)
for r in 1 2 3; do for v in A E; do
  ./lowbit-$v bench --suite suite1 --m 12,16 --kernels "$K" --no-check --json /tmp/$v$r.json > /tmp/$v$r.log 2>&1 || { echo "bench $v$r failed"; tail -5 /tmp/$v$r.log; }
  python3 $OLDPWD/ab12/summ.py /tmp/$v$r.json $v$r >> $OUT/sums.txt
done; done
echo "rounds in $(( $(date +%s) - t0 )) s"
python3 - $OUT/sums.txt <<'PY'
import sys, collections
s = collections.defaultdict(list)
for line in open(sys.argv[1]):
    t, v, m, tot = line.split()[:4]
    s[(v, int(m), t[0])].append(float(tot))
mean = lambda x: sum(x) / len(x)
for (v, m) in sorted(set((k[0], k[1]) for k in s)):
    a, e = s[(v, m, 'A')], s[(v, m, 'E')]
    print("%-14s %3d  A %-18s E %-18s  E-A %+.2f" % (v, m, ' '.join('%.1f' % x for x in a), ' '.join('%.1f' % x for x in e), mean(e) - mean(a)))
PY
./lowbit-E bench --suite suite1 --m 9,16 --kernels '^(w4g128_f16|w4g128asym_bf16|w8_f16|w8_bf16|w8g128_f16)$' --json /tmp/chkE.json > /tmp/chkE.log 2>&1; echo "check E rc $?"
python3 - /tmp/chkE.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
recs = [r for r in d['records'] if isinstance(r.get('check'), dict)]
print('checked', len(recs), 'not ok', [(r['variant'], r['m'], r['layer']) for r in recs if r['check'].get('passed') is False],
      'max rel err %.2e' % max(r['check'].get('rel_err', 0) for r in recs))
PY
cd $OLDPWD
mkdir -p build/tests && cp /tmp/abbin/tests-E build/tests/lowbit_gpu_tests
mkdir -p $OUT/race
OUT=$OUT/race PREBUILT=build STEPS=sanitize SANITIZE_TOOLS="racecheck synccheck" SANITIZE_TIMEOUT=200 LOWBIT_COMMIT="E (HEAD + ab12/E.patch)" bash tools/device-check.sh > /dev/null 2>&1
cat $OUT/race/report.md | tail -4
