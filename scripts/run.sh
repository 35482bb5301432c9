#!/usr/bin/env bash
# The README's run command: installs what is missing, builds Nearscape (Release) and starts it.
#   scripts/run.sh [PATH] [--meta FILE]     no PATH: Fashion-MNIST, the embedded default
#   NEARSCAPE_WITH_CUDA=OFF scripts/run.sh  the CPU-only build, even where nvcc exists
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/build-config.sh
nearscape_build_config
build=build/release
[[ $NEARSCAPE_CUDA == ON ]] || build=build/cpu
scripts/install-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNEARSCAPE_BUILD_TESTS=OFF \
  -DNEARSCAPE_WITH_CUDA="$NEARSCAPE_CUDA"
cmake --build "$build" --parallel "$(nproc)" --target nearscape nearscape-cli
# The second example data set (File → Open Example → debian-text) is built once, in the
# background so that the window opens at once; the menu offers it as soon as it exists.
log="${XDG_CACHE_HOME:-$HOME/.cache}/nearscape/make-debian-text.log"
mkdir -p "$(dirname "$log")"
nohup scripts/make-debian-text.sh >"$log" 2>&1 &
exec "$build"/app/nearscape "$@"
