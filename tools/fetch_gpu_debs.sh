#!/usr/bin/env bash
# Downloads (without installing) the Debian packages that tools/gpu_check.sh unpacks on a GPU
# host that reaches no package registry. They land in .debs/ (git-ignored) and travel with the
# working tree.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$root/.debs"
cd "$root/.debs"
pkgs=(libdnnl2 libdnnl-dev libgtest-dev libopenblas0 libopenblas0-pthread libopenblas-dev
      libopenblas-pthread-dev libgfortran5 libsleef3 libsleef-dev libprotobuf32 libprotobuf-lite32
      libprotobuf-dev libprotoc32 protobuf-compiler libgloo0 libgloo-dev libhiredis0.14 libibverbs1
      libnl-3-200 libnl-route-3-200)
have=1
for p in "${pkgs[@]}"; do ls "${p}"_*.deb >/dev/null 2>&1 || have=0; done
if [[ $have -eq 1 ]]; then echo "fetch_gpu_debs: .debs/ complete"; exit 0; fi
apt-get download "${pkgs[@]}"
ls -la
