// With NEARSCAPE_PROFILE set, the device time of each phase of one call, summed over its repeats
// and printed to stderr when the clock goes out of scope. Each mark synchronises the device, so
// it is a profiling aid only; unset, a mark costs one branch.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace nearscape::cuda {

class PhaseClock {
public:
  explicit PhaseClock(const char* label) : m_label(label) {}
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;

  bool on() const { return m_on; }

  void mark(const std::string& phase) {
    if (!m_on)
      return;
    cudaDeviceSynchronize();
    const auto now = std::chrono::steady_clock::now();
    m_seconds[phase] += std::chrono::duration<double>(now - m_last).count();
    m_last = now;
  }

  ~PhaseClock() {
    if (m_on)
      for (const auto& [phase, seconds] : m_seconds)
        std::fprintf(stderr, "%s %-12s %8.2f ms\n", m_label, phase.c_str(), seconds * 1e3);
  }

private:
  const char* m_label;
  bool m_on = std::getenv("NEARSCAPE_PROFILE") != nullptr;
  std::chrono::steady_clock::time_point m_last = std::chrono::steady_clock::now();
  std::map<std::string, double> m_seconds;
};

} // namespace nearscape::cuda
