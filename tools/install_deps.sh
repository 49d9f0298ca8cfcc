#!/usr/bin/env bash
# Installs the system packages listed in third_party/debian-packages.txt with apt-get.
# Idempotent: when everything is installed already it only checks (a second or so) and exits.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mapfile -t pkgs < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$root/third_party/debian-packages.txt" | grep -v '^$')

missing=()
for p in "${pkgs[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install_deps: all ${#pkgs[@]} system packages present"
  exit 0
fi
echo "install_deps: installing ${missing[*]}"
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
