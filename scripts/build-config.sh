# Sourced by run.sh, test.sh and ci-hardening.sh: decides whether this machine builds the CUDA
# backend, and says why in one line, before anything else happens. Sets NEARSCAPE_CUDA to ON or
# OFF.
# The rule is CMake's own (cmake/NearscapeCuda.cmake): nvcc at /usr/local/cuda/bin or on PATH;
# NEARSCAPE_WITH_CUDA=OFF in the environment asks for the CPU-only build, as a desktop without
# the CUDA toolkit gets.
nearscape_build_config() {
  local nvcc=""
  if [[ -x /usr/local/cuda/bin/nvcc ]]; then
    nvcc=/usr/local/cuda/bin/nvcc
  else
    nvcc=$(command -v nvcc || true)
  fi
  if [[ "${NEARSCAPE_WITH_CUDA:-}" == "OFF" ]]; then
    NEARSCAPE_CUDA=OFF
    echo "configuration: CPU only (NEARSCAPE_WITH_CUDA=OFF was asked for); every feature runs on the CPU backend"
  elif [[ -n "$nvcc" ]]; then
    NEARSCAPE_CUDA=ON
    local version
    version=$("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p' | head -1)
    echo "configuration: CUDA ${version:-?} (nvcc found at $nvcc); the GPU is used when one is usable at run time, else the CPU"
  else
    NEARSCAPE_CUDA=OFF
    echo "configuration: CPU only (no CUDA toolkit: nvcc is neither at /usr/local/cuda/bin/nvcc nor on PATH); every feature runs on the CPU backend, only slower"
  fi
}

# Sets `launcher` to CMake's arguments that put C and C++ compiles through ccache when it is
# installed (install-deps.sh installs it), else to none. Paths are taken relative to the clone
# and the build folder is not hashed, so that one tree's objects serve another with the same
# commands (the CPU-only tree the CUDA tree's) and one clone's serve the next (CI's). CUDA
# sources are not cached.
nearscape_ccache_launcher() {
  launcher=()
  if command -v ccache > /dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
  fi
}
