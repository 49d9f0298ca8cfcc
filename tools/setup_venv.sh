#!/usr/bin/env bash
# Creates .venv (if missing) and installs the Python requirements given as arguments
# (default: requirements/build.txt). Skips pip when the requirement files did not change.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
reqs=("$@")
[[ ${#reqs[@]} -gt 0 ]] || reqs=(requirements/build.txt)
[[ -x .venv/bin/python ]] || python3 -m venv .venv
stamp=".venv/.requirements-$(cat "${reqs[@]}" requirements/*.txt | sha1sum | cut -c1-12)-$(echo "${reqs[@]}" | sha1sum | cut -c1-8)"
if [[ ! -f "$stamp" ]]; then
  args=()
  for r in "${reqs[@]}"; do args+=(-r "$r"); done
  .venv/bin/python -m pip install -q --disable-pip-version-check "${args[@]}"
  touch "$stamp"
fi
