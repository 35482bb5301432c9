#!/usr/bin/env bash
# The README's test command: installs what is missing, builds (Release) and runs the whole test
# suite, GUI tests under Xvfb, in both configurations a user can have: the one this machine
# allows (CUDA when nvcc is present) and, when that one is CUDA, the CPU-only one a desktop
# without the CUDA toolkit builds. Exits non-zero on any failure.
#   scripts/test.sh [--full] [BUILD_DIR]   (default: build/test; the CPU-only build goes to
#                                           BUILD_DIR-cpu)
#   NEARSCAPE_WITH_CUDA=OFF scripts/test.sh    the CPU-only configuration alone
# --full (what CI runs, .ci/run) adds the slow checks: the CUDA sources compiled for the
# package's oldest and newest GPU architectures, and the hardening builds (fuzzing, ASan + UBSan
# with the GUI monkey, TSan). Without it the command stays quick for a person with a warm ccache.
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
if [[ ${1:-} == --full ]]; then
  full=1
  shift
fi
source scripts/build-config.sh
nearscape_build_config
build=${1:-build/test}
stage_start=$SECONDS
stage() { # prints how long the previous stage took, then names the next
  local now=$SECONDS
  if [[ -n "${current_stage:-}" ]]; then
    printf '== %s: %ds\n' "$current_stage" $((now - stage_start))
  fi
  current_stage=$1
  stage_start=$now
  if [[ -n "$1" ]]; then
    printf '== %s\n' "$1"
  fi
}

stage packages
scripts/install-deps.sh

status=0
stage "format (.clang-format)"
scripts/check-format.sh || status=$?

# The CPU-only tree takes the CUDA tree's engine and CLI objects from ccache.
nearscape_ccache_launcher

# build_and_test DIR CUDA(ON|OFF) NAME
build_and_test() {
  local dir=$1 cuda=$2 name=$3
  stage "configure ($name)"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNEARSCAPE_BUILD_TESTS=ON \
    -DNEARSCAPE_WITH_CUDA="$cuda" "${launcher[@]}"
  stage "build ($name)"
  cmake --build "$dir" --parallel "$(nproc)"
  stage "tests ($name)"
  # The GUI tests need a display with OpenGL: Xvfb with Mesa's software renderer.
  xvfb-run -a -s "-screen 0 1600x1000x24" \
    ctest --test-dir "$dir" --output-on-failure --timeout 900 || status=$?
  echo "test-artifacts ($name): $dir/test-artifacts"
}

# The package as a user gets it: built from the CPU-only tree (quick: everything is built
# already; the CUDA package's multi-architecture plugin takes far longer and is checked by hand on
# the GPU machine, docs/benchmarks.md), installed, run from /usr/bin, removed.
package_stage() {
  local dir=$1
  stage "package (from $dir)"
  scripts/check-package.sh "$dir" || status=$?
}

# The package's CUDA plugin is built for every architecture of the package preset's list, which
# takes too long here; this compiles the CUDA sources (nvcc's warnings are errors) for the list's
# oldest and newest, where code under __CUDA_ARCH__ differs most, and links the plugin alone.
package_architectures_stage() {
  local dir=$1 archs
  archs=$(python3 -c 'import json
preset = next(p for p in json.load(open("CMakePresets.json"))["configurePresets"]
              if p["name"] == "package")
archs = preset["cacheVariables"]["CMAKE_CUDA_ARCHITECTURES"].split(";")
print(archs[0] + ";" + archs[-1])')
  stage "CUDA sources for the package's oldest and newest architectures ($archs)"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" \
    -DNEARSCAPE_BUILD_TESTS=OFF -DNEARSCAPE_BUILD_APP=OFF -DNEARSCAPE_BUILD_BENCH=OFF \
    -DNEARSCAPE_WITH_MPI=OFF "${launcher[@]}" > /dev/null || status=$?
  cmake --build "$dir" --parallel "$(nproc)" --target nearscape_cuda || status=$?
}

if [[ $NEARSCAPE_CUDA == ON ]]; then
  build_and_test "$build" ON "with CUDA"
  if ((full)); then
    package_architectures_stage "$build-archs"
  fi
  build_and_test "$build-cpu" OFF "CPU only"
  package_stage "$build-cpu"
else
  build_and_test "$build" OFF "CPU only"
  package_stage "$build"
fi
if ((full)); then
  stage "hardening (fuzzing, ASan + UBSan with the GUI monkey, TSan)"
  scripts/ci-hardening.sh || status=$?
fi
stage ""
exit $status
