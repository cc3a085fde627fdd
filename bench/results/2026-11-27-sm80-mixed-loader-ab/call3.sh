#!/bin/bash
# Device: build C (the tree: interleaved weight copies), B (kWInterleave = false), A (HEAD:
# ab11/B.patch reversed from B); then three alternating rounds of A, B, C.
set -u
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt
mkdir -p /tmp/abbin
F=src/cuda/mixed_gemm/sm80_mixed_gemm.cuh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > /tmp/cfg.log 2>&1 || { tail -20 /tmp/cfg.log; exit 1; }
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli > /tmp/bC.log 2>&1 || { tail -30 /tmp/bC.log; exit 1; }
cp build/lowbit /tmp/abbin/lowbit-C; echo "C built in $(( $(date +%s) - t0 )) s"
sed -i 's/static constexpr bool kWInterleave = true;/static constexpr bool kWInterleave = false;/' $F
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli > /tmp/bB.log 2>&1 || { tail -30 /tmp/bB.log; exit 1; }
cp build/lowbit /tmp/abbin/lowbit-B; echo "B built in $(( $(date +%s) - t0 )) s"
patch -R -p1 < ab11/B.patch > /dev/null || { echo "reverse patch failed"; exit 1; }
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli > /tmp/bA.log 2>&1 || { tail -30 /tmp/bA.log; exit 1; }
cp build/lowbit /tmp/abbin/lowbit-A; echo "A built in $(( $(date +%s) - t0 )) s"
K='^(w4g128_f16|w4g128_bf16|w8_f16)$'
cd /tmp/abbin
for r in 1 2 3; do for v in A B C; do
  ./lowbit-$v bench --suite suite1 --m 16,24,32 --kernels "$K" --no-check --json /tmp/$v$r.json > /tmp/$v$r.log 2>&1 || { echo "bench $v$r failed"; tail -5 /tmp/$v$r.log; }
  python3 $OLDPWD/ab11/summ.py /tmp/$v$r.json $v$r >> $OUT/sums.txt
done; done
python3 - $OUT/sums.txt <<'PY'
import sys, collections
s = collections.defaultdict(list)
for line in open(sys.argv[1]):
    t, v, m, tot = line.split()[:4]
    s[(v, int(m), t[0])].append(float(tot))
for (v, m) in sorted(set((k[0], k[1]) for k in s)):
    a, b, c = s[(v, m, 'A')], s[(v, m, 'B')], s[(v, m, 'C')]
    mean = lambda x: sum(x) / len(x)
    print("%-14s %3d  A %-16s B %-16s C %-16s  B-A %+.2f  C-A %+.2f" % (v, m, ' '.join('%.1f' % x for x in a), ' '.join('%.1f' % x for x in b), ' '.join('%.1f' % x for x in c), mean(b) - mean(a), mean(c) - mean(a)))
PY
