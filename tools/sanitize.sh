#!/usr/bin/env bash
# Builds the core and the C++ tests with sanitizers into their own folder and runs ctest there.
#   bash tools/sanitize.sh asan   # AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer
#                                 # (build-asan/; part of CI): the C++ tests, then the Python tests
#                                 # in $ONEFLOW_ASAN_PYTESTS against an instrumented extension
#   bash tools/sanitize.sh tsan   # ThreadSanitizer (build-tsan/): the C++ tests
# Any report fails the run: ASan/LSan exit non-zero, UBSan halts on the first error, TSan exits
# non-zero on a race. Extra arguments go to ctest (e.g. -R Allocator).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mode="${1:-asan}"
shift || true
case "$mode" in
  asan) sanitize="address,undefined" ;;
  tsan) sanitize="thread" ;;
  *) echo "sanitize.sh: expected asan or tsan, got '$mode'" >&2; exit 2 ;;
esac
build="build-$mode"
SECONDS=0
python_ext=OFF
[[ "$mode" == asan ]] && python_ext=ON
# The instrumented build compiles with -g, and with -g ccache adds the working directory to each
# object's hash, so a clone at another path would rebuild everything (about 20 minutes on two
# cores). Sources and include paths are already made relative (CCACHE_BASEDIR in build.sh); only
# DW_AT_comp_dir may then name the folder of the build that filled the cache.
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
BUILD_DIR="$build" bash tools/build.sh -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DONEFLOW_SANITIZE="$sanitize" -DONEFLOW_BUILD_PYTHON="$python_ext" \
  -DONEFLOW_PYTHON_OUTPUT_DIR="$root/$build/python/oneflow"
echo "sanitize.sh: the instrumented build took $SECONDS s"
export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$root/tools/sanitizers/lsan.supp:print_suppressions=0"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tools/sanitizers/tsan.supp"
if [[ "$mode" == tsan ]]; then
  # libgomp is not instrumented, so TSan cannot see its barriers: OpenMP regions run on one thread
  # here and the races TSan looks for are those between the project's own threads.
  export OMP_NUM_THREADS=1
fi
echo "== C++ tests under $sanitize"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
echo "sanitize.sh: C++ tests clean under $sanitize"
[[ "$mode" == asan ]] || exit 0

# The Python package with the instrumented extension next to it, run by an uninstrumented
# interpreter: the sanitizer runtimes are preloaded, and leak checking is off because CPython
# keeps its own objects alive until exit by design.
pkg="$build/python/oneflow"
[[ -d "$pkg" ]] && find "$pkg" -name '*.py' -delete
(cd python/oneflow && find . -name '*.py' -not -path '*/__pycache__/*' -print0 |
  xargs -0 -I{} install -D -m 644 {} "$root/$pkg/{}")
# Every Python test file except those that start their own interpreters from python/ (examples,
# fuzzing, exit and interrupts, benchmark smoke runs), measure resident memory, or fork DataLoader
# workers (GCC 12's ASan allocator can be left locked in a child forked while another thread
# allocates, and the worker then hangs).
default_tests=$(ls tests/python/test_*.py |
  grep -v -E 'test_(examples|fuzz|exit_interrupts|benchmarks_smoke|memory|data)\.py' |
  tr '\n' ' ')
tests="${ONEFLOW_ASAN_PYTESTS:-$default_tests}"
echo "== Python tests under $sanitize: $tests"
# allocator_may_return_null: an allocation too large for ASan's allocator returns null, as the
# system's does, so the out-of-memory tests see oneflow's OutOfMemoryError instead of an abort.
# shellcheck disable=SC2086
LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" \
  ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0:allocator_may_return_null=1" \
  PYTHONPATH="$root/$build/python:$root/tests/python" \
  .venv/bin/python -m pytest -q -p no:cacheprovider --capture=sys $tests
echo "sanitize.sh: Python tests clean under $sanitize"
