#!/usr/bin/env bash
# The README's test command: from a fresh Debian machine, installs the system and Python
# packages, builds, and runs every test (GoogleTest through ctest, then pytest).
# ONEFLOW_TEST_DEVICE=cuda runs the same suites on a GPU (see tools/gpu_check.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash tools/install_deps.sh
bash tools/setup_venv.sh requirements/test.txt
bash tools/build.sh
echo "== C++ tests (ctest)"
ctest --test-dir build --output-on-failure -j "$(nproc)"
echo "== Python tests (pytest)"
PYTHONPATH="$root/python:$root/tests/python" .venv/bin/python -m pytest tests/python -q
