#pragma once
/// @file JobControl.h
/// Progress reporting and cooperative cancellation for long engine calls.

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

namespace nearscape {

/// Passed to every long engine call. The engine calls `check()` between chunks of at most
/// ~100 ms of work and `progress()` as it goes; progress callbacks are rate-limited.
class JobControl {
public:
  /// fraction in [0, 1]; message says what is being done.
  using ProgressCallback = std::function<void(double fraction, const std::string& message)>;

  JobControl() = default;
  explicit JobControl(ProgressCallback callback,
                      std::chrono::milliseconds minInterval = std::chrono::milliseconds(50))
      : m_callback(std::move(callback)), m_minInterval(minInterval) {}

  /// A job that stops when `stopsWith` stops but reports its progress to `callback` alone — for
  /// parts of one job that run at once on several threads, whose progress the caller combines.
  JobControl(JobControl& stopsWith, ProgressCallback callback,
             std::chrono::milliseconds minInterval = std::chrono::milliseconds(50))
      : m_parent(&stopsWith), m_callback(std::move(callback)), m_minInterval(minInterval),
        m_ownProgress(true) {}

  /// Asks the job to stop at its next check (any thread).
  void requestStop() { m_stop.store(true, std::memory_order_relaxed); }
  bool stopRequested() const {
    return m_stop.load(std::memory_order_relaxed) || (m_parent && m_parent->stopRequested());
  }

  /// A job for one stage of this one, so that nested calls compose: the stage's progress 0 → 1
  /// is reported here as `from` → `to` (bars never jump back when a stage starts), and it stops
  /// when this job stops. It must not outlive this job.
  ///   JobControl truthStage = job.sub(0.0, 0.1); knnSearch(…, truthStage);
  JobControl sub(double from, double to) { return JobControl(this, from, to); }

  /// Throws Cancelled when a stop was requested.
  void check() const;

  /// Reports progress; calls the callback at most once per interval, and always for 1.0.
  void progress(double fraction, const std::string& message = {});

private:
  JobControl(JobControl* parent, double from, double to)
      : m_parent(parent), m_from(from), m_to(to) {}

  JobControl* m_parent = nullptr; ///< a stage's job reports to and stops with its parent
  double m_from = 0, m_to = 1;
  ProgressCallback m_callback;
  std::chrono::milliseconds m_minInterval{50};
  std::chrono::steady_clock::time_point m_last{};
  std::atomic<bool> m_stop{false};
  bool m_ownProgress = false; ///< progress goes to m_callback even with a parent
};

/// A JobControl that never stops and reports nothing, for callers without a job.
JobControl& noJobControl();

} // namespace nearscape
