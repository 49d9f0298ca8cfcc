#!/usr/bin/env bash
# Checks that `pip install .` works in a fresh virtual environment and that the installed package
# computes a gradient (run by CI after the tests).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$(mktemp -d)/venv"
python3 -m venv "$venv"
# A fixed build folder under the checkout and ccache's base there: the compiler sees the same
# relative paths from any clone, so a fresh clone elsewhere (CI) hits the objects of earlier runs
# instead of compiling the project again in a random temporary folder (about 7 minutes).
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
  --config-settings=build-dir="$root/build-pip" "$root"
cd "$(mktemp -d)"
"$venv/bin/python" - <<'PY'
import numpy as np
import oneflow as flow

x = flow.randn(3, 4, requires_grad=True)
(x.relu() @ flow.ones(4, 2)).sum().backward()
assert np.array_equal(x.grad.numpy(), (x.detach().numpy() > 0) * 2.0), x.grad
print("check_pip_install: pip install . works;", flow.__file__)
PY
rm -rf "$(dirname "$venv")"
