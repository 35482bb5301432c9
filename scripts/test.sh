#!/usr/bin/env bash
# The README's test command: installs what is missing, builds (Release, with CUDA when nvcc is
# present) and runs the whole test suite, GUI tests under Xvfb. Exits non-zero on any failure.
#   scripts/test.sh [BUILD_DIR]      (default: build/test)
set -euo pipefail
cd "$(dirname "$0")/.."
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

stage configure
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNEARSCAPE_BUILD_TESTS=ON

stage build
cmake --build "$build" --parallel "$(nproc)"

stage tests
status=0
# The GUI tests need a display with OpenGL: Xvfb with Mesa's software renderer.
xvfb-run -a -s "-screen 0 1600x1000x24" \
  ctest --test-dir "$build" --output-on-failure --timeout 900 || status=$?
stage ""
echo "test-artifacts: $build/test-artifacts"
exit $status
