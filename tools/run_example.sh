#!/usr/bin/env bash
# The README's main job: from a fresh Debian machine, installs what the build needs, builds, and
# trains a LeNet-style CNN on scikit-learn's 8x8 handwritten digits, with a progress bar and a
# summary line (test accuracy, time, throughput). Extra arguments go to the example.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash tools/install_deps.sh
bash tools/setup_venv.sh requirements/examples.txt
bash tools/build.sh
PYTHONPATH="$root/python" .venv/bin/python examples/digits_mlp.py --model lenet "$@"
