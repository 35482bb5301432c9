#!/usr/bin/env bash
# The README's test command: installs what is missing, builds (Release) and runs the whole test
# suite, GUI tests under Xvfb, in both configurations a user can have: the one this machine
# allows (CUDA when nvcc is present) and, when that one is CUDA, the CPU-only one a desktop
# without the CUDA toolkit builds. Exits non-zero on any failure.
#   scripts/test.sh [BUILD_DIR]      (default: build/test; the CPU-only build goes to BUILD_DIR-cpu)
#   NEARSCAPE_WITH_CUDA=OFF scripts/test.sh    the CPU-only configuration alone
set -euo pipefail
cd "$(dirname "$0")/.."
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

if [[ $NEARSCAPE_CUDA == ON ]]; then
  build_and_test "$build" ON "with CUDA"
  build_and_test "$build-cpu" OFF "CPU only"
  package_stage "$build-cpu"
else
  build_and_test "$build" OFF "CPU only"
  package_stage "$build"
fi
stage "hardening (fuzzing, ASan + UBSan, TSan)"; scripts/ci-hardening.sh || status=$?
stage ""
exit $status
