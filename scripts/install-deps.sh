#!/usr/bin/env bash
# Installs every Debian package Nearscape needs to build, test and run its demo data.
# Does nothing (and needs no network) when all of them are already present.
#   scripts/install-deps.sh            build + tests + demo data
#   scripts/install-deps.sh --bench    also the CPU peers used by nearscape-bench
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ pkg-config
  # engine
  libeigen3-dev libopenblas-dev libhdf5-dev zlib1g-dev libdeflate-dev libxxhash-dev nlohmann-json3-dev libcli11-dev
  libre2-dev
  # nearscape-cli under mpirun (optional at build time, as CUDA; CI tests it)
  libopenmpi-dev openmpi-bin
  # ui
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-qpa-plugins libgl-dev libvtk9-dev
  libgl1-mesa-dri libglx-mesa0 fonts-dejavu-core
  # the Python module (python/; NEARSCAPE_BUILD_PYTHON)
  pybind11-dev python3-dev
  # tests (GUI under a virtual display) and the data generator
  xvfb xauth python3-numpy python3-h5py python3-pytest
  # the Python module's notebook side under test: plot_map (matplotlib), as_frame (pandas)
  python3-matplotlib python3-pandas
  # the hardening step (scripts/ci-hardening.sh): clang's libFuzzer and sanitizer runtimes, LLVM's
  # OpenMP (with its TSan tool, Archer), ccache
  clang libclang-rt-14-dev libomp-dev ccache
  # the format check (scripts/check-format.sh)
  clang-format
  # the package's checks (scripts/test.sh's package stage)
  desktop-file-utils appstream lintian
  # demo data: Fashion-MNIST, and fastText for the debian-text set
  dataset-fashion-mnist fasttext
)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(python3-faiss python3-hnswlib python3-pynndescent umap-learn)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
# English long descriptions too: the debian-text demo set is built from them.
$sudo apt-get update -o Acquire::Languages=en
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
