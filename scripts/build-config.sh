# Sourced by run.sh and test.sh: decides whether this machine builds the CUDA backend, and says
# why in one line, before anything else happens. Sets NEARSCAPE_CUDA to ON or OFF.
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
