#!/bin/bash
# Device: build the trace build of sm80_mixed_gemm, trace W4 g128 f16 Suite-1 layers at m = 16.
set -u
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > /tmp/cfg.log 2>&1 || { tail -20 /tmp/cfg.log; exit 1; }
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli > /tmp/b.log 2>&1 || { tail -30 /tmp/b.log; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
for m in ${MS:-16}; do
for shape in 6144x4096 4096x4096 28672x4096 4096x14336; do
  LOWBIT_MIXED_TRACE_FILE=$OUT/w4-$shape-m$m.bin ./build/lowbit bench --shapes $shape --m $m --kernels '^w4g128_f16$' --no-check --reps 3 > $OUT/w4-$shape-m$m.log 2>&1 || tail -3 $OUT/w4-$shape-m$m.log
  grep -h "w4g128_f16" $OUT/w4-$shape-m$m.log | head -2
done; done
LOWBIT_MIXED_GEMM_PDL=0 LOWBIT_MIXED_TRACE_FILE=$OUT/w4-4096x4096-m16-nopdl.bin ./build/lowbit bench --shapes 4096x4096 --m 16 --kernels '^w4g128_f16$' --no-check --reps 3 > $OUT/nopdl.log 2>&1
LOWBIT_MIXED_GEMM_PDL=1 LOWBIT_MIXED_TRACE_FILE=$OUT/w4-28672x4096-m16-pdl.bin ./build/lowbit bench --shapes 28672x4096 --m 16 --kernels '^w4g128_f16$' --no-check --reps 3 > $OUT/pdl.log 2>&1
python3 ab10/mtrace.py $OUT/*.bin | tee $OUT/steps.txt
cd $OUT && xz -T8 *.bin
