#!/usr/bin/env bash
# Installs Tessera's build dependencies from Debian 12 packages (nothing is downloaded at
# build time). Uses sudo when not run as root. Safe to run again.
# --fuzz also installs clang and its runtime libraries (libFuzzer, sanitizers), which the
# fuzz targets (fuzz/, -DTESSERA_FUZZ=ON) need; --lint installs clang-format and clang-tidy.
# OpenMPI lets `tessera search` run under mpirun; a build without it works (-DTESSERA_MPI=OFF).
set -euo pipefail
packages=(
  build-essential cmake
  libyaml-cpp-dev libboost-graph-dev libtbb-dev libprotobuf-dev protobuf-compiler
  libfmt-dev nlohmann-json3-dev libcli11-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin
)
for arg in "$@"; do
  case "$arg" in
    --fuzz) packages+=(clang libclang-rt-dev) ;;
    --lint) packages+=(clang-format clang-tidy) ;;
    *) echo "usage: $0 [--fuzz] [--lint]" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
