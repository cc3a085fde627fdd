#!/usr/bin/env bash
# Fetches DeepGEMM for the Suite 2 side-by-side figures (tools/dev/deepgemm_suite2.py) into
# .deps/deepgemm.tar.xz, which travels to the device machine (no network there) with
# `carry: [".deps"]`.
#
# DeepGEMM is not on PyPI as a usable package (the `deep_gemm` sdist there has no kernel
# headers). sgl-kernel's wheels ship a build of it; version 0.1.5 (May 2025) carries the
# Python-JIT DeepGEMM of ANCHORS.md's "May 2025 release": the Python package, the kernel headers
# (deep_gemm/*.cuh) and CUTLASS / CuTe. Its JIT compiles with nvcc and loads the kernel with
# ctypes and cuda-python's driver bindings, so no torch C++ ABI is involved (the later C++-JIT
# builds, e.g. sgl-kernel 0.3.21's, are torch extensions for torch 2.9 and fail on the device's
# torch 2.11). cuda-bindings (CUDA 13) and cuda-pathfinder come along as unpacked wheels.
# lowbit does not link or copy any of it: DeepGEMM is a peer timed beside lowbit, as cuBLASLt is.
set -euo pipefail
cd "$(dirname "$0")/../.."
version="${SGL_KERNEL_VERSION:-0.1.5}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fetch() {
  python3 -m pip download --quiet --only-binary=:all: --python-version 3.12 \
    --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 -d "$tmp" "$@"
}
fetch --no-deps "sgl-kernel==${version}"
fetch "cuda-bindings==13.0.*"
rm -rf .deps/deepgemm
mkdir -p .deps/deepgemm/site
python3 - "$tmp" .deps/deepgemm/site <<'PY'
import glob, sys, zipfile
tmp, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(glob.glob(f"{tmp}/sgl_kernel-*.whl")[0]) as z:
    names = [n for n in z.namelist() if n.startswith("deep_gemm/")]
    if not any(n.endswith("deep_gemm/include/deep_gemm/fp8_gemm.cuh") for n in names):
        sys.exit("this sgl-kernel wheel has no Python-JIT DeepGEMM (deep_gemm/include/deep_gemm/fp8_gemm.cuh)")
    z.extractall(dest, names)
for wheel in glob.glob(f"{tmp}/cuda_*.whl"):
    with zipfile.ZipFile(wheel) as z:
        z.extractall(dest)
PY
# cuda-bindings ships its Cython sources and generated C++ (~94 MB: driver.cpp, runtime.cpp,
# *.pyx / *.pxd); only the compiled modules run. Without them the tarball is 3.7 MB instead of
# 7.3, which keeps the tree the device call carries under its 64 MiB.
find .deps/deepgemm/site/cuda \( -name '*.cpp' -o -name '*.pyx' -o -name '*.pxd' -o -name '*.pxi' \) -delete
XZ_OPT="-6 -T0" tar -C .deps/deepgemm -cJf .deps/deepgemm.tar.xz site
rm -rf .deps/deepgemm
echo ".deps/deepgemm.tar.xz: $(du -h .deps/deepgemm.tar.xz | cut -f1) (sgl-kernel ${version}'s DeepGEMM, cuda-bindings)"
