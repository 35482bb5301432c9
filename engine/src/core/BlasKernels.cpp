#include "nearscape/core/BlasKernels.h"

#include <cstdlib>
#include <cstring>
#include <initializer_list>

#if defined(__linux__)
#include <unistd.h>
#endif

extern "C" char* openblas_get_corename();

namespace nearscape {
#if defined(__linux__)
namespace {

/// The kernels OpenBLAS picks for the CPUs it knows well; anything else on a CPU with AVX2 is a
/// fallback (Prescott for unknown Intel models, Barcelona for unknown AMD families, Sandybridge).
bool isMatched(const char* name) {
  for (const char* good : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids"})
    if (std::strcmp(name, good) == 0)
      return true;
  return false;
}

/// Whether this process is the program itself, not the dynamic loader running it
/// (`ld-linux-x86-64.so.2 ./nearscape …`), whose restart would take the program's arguments for
/// the loader's.
bool runsAsItself() {
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0)
    return false;
  path[length] = '\0';
  const char* slash = std::strrchr(path, '/');
  return std::strncmp(slash ? slash + 1 : path, "ld-", 3) != 0;
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
#endif

const char* blasKernelsName() {
  return openblas_get_corename();
}

void restartWithMatchingBlasKernels(char** argv) {
#if defined(__linux__)
  if (std::getenv("OPENBLAS_CORETYPE") || isMatched(blasKernelsName()))
    return; // chosen by the user, or OpenBLAS knew the CPU
  const char* kernels = matchingKernels();
  if (!kernels || !runsAsItself())
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
