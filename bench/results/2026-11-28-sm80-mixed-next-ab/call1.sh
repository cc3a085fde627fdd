#!/bin/bash
# Device call 1: lowbit_cli of A = HEAD and of HEAD + each next-*.patch of
# ../2026-11-28-sm80-mixed-raw-decode-ab (S = sym wide loop, L = one-block loader,
# C = consecutive small tiles) and X = all three; a CPU-checked bench of S, L, C, X at m = 16;
# the sm80 / graph / int8 / gemv GPU tests and memcheck on the edge tests of X.
# Binaries to /tmp/abbin for call2.sh on the warm machine. Run from the repository root with .deps.
set -u
P=bench/results/2026-11-28-sm80-mixed-raw-decode-ab
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt; cat $OUT/gpu.txt
mkdir -p /tmp/abbin
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > /tmp/cfg.log 2>&1 || { tail -20 /tmp/cfg.log; exit 1; }
patches() { case $1 in A) ;; S) echo next-sym-wide-loop ;; L) echo next-loader-one-block ;; C) echo next-consecutive-small-tiles ;; X) echo next-sym-wide-loop next-loader-one-block next-consecutive-small-tiles ;; esac; }
for v in A S L C X; do
  for p in $(patches $v); do patch -p1 < $P/$p.patch > /dev/null || { echo "patch $v $p failed"; exit 1; }; done
  T=lowbit_cli; [ $v = X ] && T="lowbit_cli lowbit_gpu_tests"
  t0=$(date +%s); cmake --build build -j16 --target $T > /tmp/b$v.log 2>&1 || { tail -30 /tmp/b$v.log; exit 1; }
  cp build/lowbit /tmp/abbin/lowbit-$v; echo "$v built in $(( $(date +%s) - t0 )) s"
  if [ $v = X ]; then
    G=$(find build -name lowbit_gpu_tests -type f | head -1)
    t0=$(date +%s); $G --gtest_filter='sm80_mixed_gemm.*:graph_capture.*:sm80_int8_gemm.*:smxx_gemv.*' > $OUT/tests-X.txt 2>&1
    echo "X tests rc $? in $(( $(date +%s) - t0 )) s"; tail -1 $OUT/tests-X.txt; grep "FAILED " $OUT/tests-X.txt | head
    compute-sanitizer --tool memcheck --error-exitcode 9 $G --gtest_filter='sm80_mixed_gemm.n_at_tile_edges:sm80_mixed_gemm.k_at_pipeline_boundaries:sm80_mixed_gemm.small_shared_memory_variants:sm80_mixed_gemm.every_config_and_split_mode' > $OUT/memcheck-X.txt 2>&1
    echo "X memcheck rc $?"; tail -1 $OUT/memcheck-X.txt
  fi
  for p in $(patches $v | tr ' ' '\n' | tac); do patch -R -p1 < $P/$p.patch > /dev/null || { echo "reverse $v $p failed"; exit 1; }; done
done
git status --short | head
for v in S L C X; do
  t0=$(date +%s)
  /tmp/abbin/lowbit-$v bench --suite suite1 --m 16 --kernels '^(w4g128_f16|w4g128asym_bf16|w8_f16|w8_bf16)$' --json $OUT/check-$v.json > $OUT/check-$v.txt 2>&1; echo "check $v rc $? in $(( $(date +%s) - t0 )) s"
  python3 - $OUT/check-$v.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
recs = [r for r in d['records'] if isinstance(r.get('check'), dict)]
print('  checked', len(recs), 'not ok', [(r['variant'], r['m'], r['layer']) for r in recs if r['check'].get('passed') is False],
      'max rel err %.2e' % max(r['check'].get('rel_err', 0) for r in recs))
PY
done
