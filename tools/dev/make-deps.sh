#!/usr/bin/env bash
# Copies the header-only dependencies (CLI11, nlohmann-json) from this machine's Debian
# packages into .deps/include so they can travel to the device machine, which lacks them.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .deps/include
cp -r /usr/include/CLI /usr/include/nlohmann .deps/include/
echo ".deps/include: $(du -sh .deps | cut -f1)"
