#pragma once
// Runs engine jobs off the GUI thread: parameters in, result out, progress and failure as
// queued signals, cancellation through the job's JobControl. Worker threads never touch widgets.

#include "nearscape/core/JobControl.h"

#include <QObject>
#include <QString>
#include <QThreadPool>

#include <functional>
#include <memory>
#include <vector>

namespace nearscape::ui {

class JobRunner : public QObject {
  Q_OBJECT
public:
  explicit JobRunner(QObject* parent = nullptr);
  ~JobRunner() override;

  /// Runs `work` on a pool thread, then `done` on the GUI thread with its result. A thrown
  /// exception becomes failed(); a cancelled job emits cancelled(). One job at a time: starting
  /// one cancels the one running.
  template <typename Result>
  void run(const QString& title, std::function<Result(JobControl&)> work,
           std::function<void(Result&)> done) {
    auto result = std::make_shared<Result>();
    start(
        title, [work, result](JobControl& job) { *result = work(job); },
        [done, result] { done(*result); });
  }

  bool busy() const { return m_running > 0; }
  /// Blocks until no job runs (tests and shutdown), or at most `msecs` (−1: no limit).
  /// Returns whether no job runs.
  bool waitForDone(int msecs = -1);

public slots:
  /// Asks the running job to stop at its next check.
  void cancel();

  /// Stops `runners` and waits up to `graceMs` for each; false when one has not stopped (a job
  /// stuck in a call that cannot be interrupted: a blocking read, a driver call).
  static bool stopAll(const std::vector<JobRunner*>& runners, int graceMs);

signals:
  void started(const QString& title);
  void progress(double fraction, const QString& message);
  void finished(const QString& title);
  void failed(const QString& title, const QString& message);
  void cancelled(const QString& title);

private:
  void start(const QString& title, std::function<void(JobControl&)> work,
             std::function<void()> done);

  QThreadPool m_pool;
  std::shared_ptr<JobControl> m_current;
  int m_running = 0;
  quint64 m_generation = 0;
};

} // namespace nearscape::ui
