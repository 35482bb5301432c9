#pragma once
// With the context's log at debug level (nearscape-cli --log-level debug), the device time of
// each phase of one call, summed over its repeats and logged when the clock goes out of scope.
// Each mark synchronises the device, so it is a profiling aid only; otherwise a mark costs one
// branch.

#include "nearscape/core/Log.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

namespace nearscape::cuda {

class PhaseClock {
public:
  PhaseClock(const char* label, const Context& context)
      : m_label(label), m_context(context), m_on(logs(context, LogLevel::Debug)) {}
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
    if (!m_on)
      return;
    for (const auto& [phase, seconds] : m_seconds) {
      char line[160];
      std::snprintf(line, sizeof line, "%s (GPU %d) %-12s %8.2f ms", m_label, m_context.device,
                    phase.c_str(), seconds * 1e3);
      logMessage(m_context, LogLevel::Debug, line);
    }
  }

private:
  const char* m_label;
  const Context& m_context;
  bool m_on;
  std::chrono::steady_clock::time_point m_last = std::chrono::steady_clock::now();
  std::map<std::string, double> m_seconds;
};

} // namespace nearscape::cuda
