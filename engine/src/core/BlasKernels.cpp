#include "nearscape/core/BlasKernels.h"

#include <cstdlib>
#include <cstring>
#include <initializer_list>

#if defined(__linux__)
#include <unistd.h>
#endif

extern "C" char* openblas_get_corename();

namespace nearscape {
namespace {

/// The cores OpenBLAS falls back to when it does not know the CPU: kernels without AVX.
bool isFallback(const char* name) {
  for (const char* old : {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom"})
    if (std::strcmp(name, old) == 0)
      return true;
  return false;
}

/// The kernels this CPU can run, best first; nullptr when none is better than the fallback.
const char* matchingKernels() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
#endif
  return nullptr;
}

} // namespace

const char* blasKernelsName() {
  return openblas_get_corename();
}

void restartWithMatchingBlasKernels(char** argv) {
#if defined(__linux__)
  if (std::getenv("OPENBLAS_CORETYPE") || !isFallback(blasKernelsName()))
    return; // chosen by the user, or OpenBLAS knew the CPU
  const char* kernels = matchingKernels();
  if (!kernels)
    return;
  // Set before the restart, so that the new process does not restart again.
  if (setenv("OPENBLAS_CORETYPE", kernels, 1) != 0)
    return;
  execv("/proc/self/exe", argv);
  unsetenv("OPENBLAS_CORETYPE"); // the restart failed: go on as we are
#else
  (void)argv;
#endif
}

} // namespace nearscape
