#include "JobRunner.h"

#include "nearscape/core/Error.h"
#include "nearscape/io/MappedFile.h"

#include <QMetaObject>
#include <QPointer>

namespace nearscape::ui {

JobRunner::JobRunner(QObject* parent) : QObject(parent) {
  m_pool.setMaxThreadCount(2);
}

JobRunner::~JobRunner() {
  cancel();
  m_pool.waitForDone();
}

bool JobRunner::waitForDone(int msecs) {
  return m_pool.waitForDone(msecs);
}

bool JobRunner::stopAll(const std::vector<JobRunner*>& runners, int graceMs) {
  for (JobRunner* runner : runners)
    runner->cancel();
  bool stopped = true;
  for (JobRunner* runner : runners)
    stopped = runner->waitForDone(graceMs) && stopped;
  return stopped;
}

void JobRunner::cancel() {
  if (m_current)
    m_current->requestStop();
}

void JobRunner::start(const QString& title, std::function<void(JobControl&)> work,
                      std::function<void()> done) {
  cancel();
  const quint64 generation = ++m_generation;
  QPointer<JobRunner> self(this);
  auto job =
      std::make_shared<JobControl>([self, generation](double fraction, const std::string& message) {
        QMetaObject::invokeMethod(
            self.data(),
            [self, generation, fraction, text = QString::fromStdString(message)] {
              if (self && self->m_generation == generation)
                emit self->progress(fraction, text);
            },
            Qt::QueuedConnection);
      });
  m_current = job;
  ++m_running;
  emit started(title);
  const std::uint64_t inputsSince = inputsMark();
  m_pool.start(
      [self, job, title, work = std::move(work), done = std::move(done), generation, inputsSince] {
        enum class Outcome { Done, Cancelled, Failed } outcome = Outcome::Done;
        QString message;
        try {
          work(*job);
          throwIfInputsChanged(inputsSince); // a result read from a changed file is not used
        } catch (const Cancelled&) {
          outcome = Outcome::Cancelled;
        } catch (const std::exception& e) {
          // What a changed file made fail (a header of zeros) is reported as that change.
          const std::string changed = changedInputMessage(inputsSince);
          outcome = Outcome::Failed;
          message = QString::fromUtf8(changed.empty() ? e.what() : changed.c_str());
        } catch (...) {
          outcome = Outcome::Failed;
          message = QStringLiteral("unknown error");
        }
        if (!self)
          return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, title, outcome, message, done, generation] {
              if (!self)
                return;
              --self->m_running;
              const bool current = self->m_generation == generation;
              if (outcome == Outcome::Done && current) {
                done();
                emit self->finished(title);
              } else if (outcome == Outcome::Failed) {
                emit self->failed(title, message);
              } else {
                emit self->cancelled(title);
              }
            },
            Qt::QueuedConnection);
      });
}

} // namespace nearscape::ui
