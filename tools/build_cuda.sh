#!/usr/bin/env bash
# Compiles the CUDA build (-DONEFLOW_WITH_CUDA=ON) into build-cuda/ without running anything;
# used by CI on machines without a GPU. Needs nvcc; takes cuBLAS from the CUDA install or the
# nvidia-cublas wheel (requirements/cuda.txt).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if ! command -v nvcc >/dev/null 2>&1 && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "build_cuda: nvcc not found; skipping the CUDA build"
  exit 0
fi
export PATH="$PATH:/usr/local/cuda/bin"
bash tools/setup_venv.sh requirements/build.txt requirements/cuda.txt
BUILD_DIR=build-cuda bash tools/build.sh -DONEFLOW_WITH_CUDA=ON \
  -DONEFLOW_PYTHON_OUTPUT_DIR="$root/build-cuda/python" "${@}"
echo "build_cuda: CUDA build compiled"
