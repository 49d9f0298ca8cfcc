#!/usr/bin/env bash
# The GPU check: on a host with an NVIDIA GPU (CUDA, Python with PyTorch, NumPy, pybind11,
# CMake and Ninja; no package registry), builds the CUDA build, then runs, most telling first:
#   1. the C++ tests;
#   2. the engine's and oneflow.cuda's tests on the GPU (CUDA ops queued on the device's stream,
#      ONEFLOW_ASYNC_CUDA=1, against ops launched from the calling thread and PyTorch);
#   3. the dispatch and training benchmarks, launched from the calling thread and queued;
#   4. the files with device-parametrised tests with CUDA ops queued (reported, not in the status);
#   5. the rest of the Python suite with ONEFLOW_TEST_DEVICE=cuda (tests that fail only for a
#      missing CUDA kernel are reported as xfailed: tests/python/conftest.py);
#   6. the other GPU benchmarks (quick), while time is left.
# Each stage has a time cap and gets at most what is left of GPU_CHECK_SECONDS (default 540), so a
# slow build shortens or skips the later stages instead of losing every log. The test suites run in
# parallel processes when pytest-xdist is present.
# System packages come from .debs/ (tools/fetch_gpu_debs.sh run beforehand on a machine with
# apt), unpacked into a prefix. Logs and results go to $OUT (or gpu_check_out/): check.log,
# suite.log (stage 5's whole report) and the benchmark tables (.md, .json) under bench-launched/,
# bench-queued/ and bench-other/.
# `gpu_check.sh build` stops after the build (for debugging sessions on the host).
# GPU_CHECK_STAGES (default 123456) names the stages to run, e.g. GPU_CHECK_STAGES=1245 for the
# tests alone; without stage 6, stage 5 may use all the time that is left.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-$root/gpu_check_out}"
mkdir -p "$out"
start=$(date +%s)
budget="${GPU_CHECK_SECONDS:-540}"
python="${PYTHON:-python3}"
stages="${GPU_CHECK_STAGES:-123456}"
want() { [[ "$stages" == *"$1"* ]]; }
log="$out/check.log"
exec > >(tee -a "$log") 2>&1
stamp() { echo "[gpu_check +$(($(date +%s) - start))s] $*"; }
left() { echo $((budget - ($(date +%s) - start))); }
# `within CAP CMD...`: runs CMD with a timeout of CAP seconds or what is left, whichever is less
# (skips it when under 20 seconds are left).
within() {
  local t=$1
  shift
  (($(left) - 5 < t)) && t=$(($(left) - 5))
  if ((t < 20)); then
    stamp "skipped (no time left): $*"
    return 124
  fi
  timeout "$t" "$@"
}

prefix=/tmp/oneflow-deps
if [[ -d .debs ]]; then
  mkdir -p "$prefix"
  for f in .debs/*.deb; do dpkg -x "$f" "$prefix"; done
  export CMAKE_PREFIX_PATH="$prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  libdir="$prefix/usr/lib/x86_64-linux-gnu"
  export LD_LIBRARY_PATH="$libdir:$libdir/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export CPATH="$prefix/usr/include:$prefix/usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}"
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
stamp "configure + build (CUDA)"
cmake -S . -B build-gpu -G Ninja -DONEFLOW_WITH_CUDA=ON -DPython_EXECUTABLE="$(command -v "$python")" \
  -DCMAKE_CUDA_ARCHITECTURES="${ONEFLOW_CUDA_ARCH:-90}" -DONEFLOW_PYTHON_OUTPUT_DIR="$root/python/oneflow" \
  -DONEFLOW_STATIC_LIBSTDCXX=ON \
  >"$out/configure.log" 2>&1 || { tail -40 "$out/configure.log"; exit 1; }
rm -f "$out/configure.log"
ninja -C build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$out/build.log" | head -60; exit 1; }
rm -f "$out/build.log"
stamp "build done"
[[ "${1:-}" == "build" ]] && exit 0 # `gpu_check.sh build`: only set up and build

rc=0
export PYTHONPATH="$root/python:$root/tests/python"
xdist=()
"$python" -c "import xdist" 2>/dev/null && xdist=(-n 6)
pytest_args=(-q -p no:cacheprovider -rfE --maxfail=30)
echo "module links: $(ldd python/oneflow/_oneflow_internal*.so | grep -E 'stdc\+\+|gomp|dnnl|cublas' | awk '{print $3}' | tr '\n' ' ')"

if want 1; then
  stamp "1. C++ tests"
  within 60 ctest --test-dir build-gpu --output-on-failure -j 8 2>&1 | tail -15
  [[ ${PIPESTATUS[0]} -eq 0 ]] || rc=1
fi

if want 2; then
  stamp "2. engine and oneflow.cuda tests on the GPU"
  ONEFLOW_TEST_DEVICE=cuda within 120 "$python" -m pytest tests/python/test_eager_engine.py \
    tests/python/test_cuda_api.py "${pytest_args[@]}" 2>&1 | tail -40
  [[ ${PIPESTATUS[0]} -eq 0 ]] || rc=1
fi

bench() { # bench NAME CAP ARGS...: one benchmark run into $out/NAME (tables only)
  local name=$1 cap=$2
  shift 2
  within "$cap" "$python" -m benchmarks run --device cuda --quick --out "$out/$name" "$@" 2>&1 | tail -16
  rm -f "$out/$name"/*.png
}
if [[ -d benchmarks ]] && want 3; then
  stamp "3. dispatch and training benchmarks: CUDA ops launched from the calling thread"
  bench bench-launched 80 --filter '^(dispatch|training)/'
  stamp "3. dispatch and training benchmarks: CUDA ops queued (ONEFLOW_ASYNC_CUDA=1)"
  ONEFLOW_ASYNC_CUDA=1 bench bench-queued 80 --filter '^(dispatch|training)/'
fi

if want 4; then
  stamp "4. device-parametrised tests with CUDA ops queued (ONEFLOW_ASYNC_CUDA=1; not in the status)"
  async_files=$(grep -l "def test.*device" tests/python/test_*.py | grep -v test_eager_engine)
  # shellcheck disable=SC2086
  ONEFLOW_ASYNC_CUDA=1 ONEFLOW_TEST_DEVICE=cuda within 90 "$python" -m pytest $async_files \
    "${pytest_args[@]}" "${xdist[@]}" 2>&1 | tail -30
  echo "queued-CUDA suite exit status: ${PIPESTATUS[0]}"
fi

if want 5; then
  stamp "5. whole Python suite on cuda (the engine's file ran in stage 2, alone: it counts threads"
  stamp "   and context switches, which parallel test processes disturb)"
  cap=180
  want 6 || cap=$(left)
  ONEFLOW_TEST_DEVICE=cuda within "$cap" "$python" -m pytest tests/python "${pytest_args[@]}" \
    --maxfail=100 "${xdist[@]}" --ignore=tests/python/test_eager_engine.py >"$out/suite.log" 2>&1
  status=$?
  tail -40 "$out/suite.log" # the whole report stays in suite.log
  ((status == 0)) || rc=1
fi

if [[ -d benchmarks ]] && want 6; then
  stamp "6. other GPU benchmarks (quick)"
  bench bench-other 120 --filter '^(elementwise|reduction|matmul)/'
fi
stamp "done (rc=$rc)"
exit $rc
