#pragma once
// The engine's door to BLAS (Debian's OpenBLAS). Threads are set per call because OpenBLAS keeps
// its thread count in a global.

#include <cblas.h>

extern "C" void openblas_set_num_threads(int threads);

namespace nearscape::blas {

/// Sets how many threads the following BLAS calls use.
inline void setThreads(int threads) {
  openblas_set_num_threads(threads < 1 ? 1 : threads);
}

} // namespace nearscape::blas
