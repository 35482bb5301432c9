#include "nearscape/core/JobControl.h"

#include "nearscape/core/Error.h"

#include <algorithm>

namespace nearscape {

void JobControl::check() const {
  if (stopRequested())
    throw Cancelled();
}

void JobControl::progress(double fraction, const std::string& message) {
  if (m_parent && !m_ownProgress) {
    m_parent->progress(m_from + (m_to - m_from) * std::clamp(fraction, 0.0, 1.0), message);
    return;
  }
  if (!m_callback)
    return;
  const auto now = std::chrono::steady_clock::now();
  if (fraction < 1.0 && now - m_last < m_minInterval)
    return;
  m_last = now;
  m_callback(fraction, message);
}

JobControl& noJobControl() {
  // Never stopped and without a callback, so sharing one instance across threads is harmless.
  static JobControl none;
  return none;
}

} // namespace nearscape
