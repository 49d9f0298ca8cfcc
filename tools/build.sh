#!/usr/bin/env bash
# Configures and builds the core, the C++ tests and the Python extension into build/ (or $BUILD_DIR)
# with Ninja and ccache. Extra arguments go to cmake (e.g. -DONEFLOW_WITH_CUDA=ON).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build="${BUILD_DIR:-build}"
python="${PYTHON:-$root/.venv/bin/python}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Paths under the checkout are hashed relative to the build directory, so a fresh clone elsewhere
# (CI) hits the cache its earlier builds filled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
cmake -S . -B "$build" -G Ninja -DPython_EXECUTABLE="$python" "$@" >/dev/null
ninja -C "$build" -j "${JOBS:-$(nproc)}"
