#pragma once
// The status bar: the summary (data, metric, backend, timings), a progress bar and Cancel for
// the jobs that last, and the warning sign behind which what opening noticed is listed.

#include <QObject>
#include <QString>

#include <string>
#include <vector>

class QFontMetrics;
class QLabel;
class QProgressBar;
class QStatusBar;
class QTimer;
class QToolButton;

namespace nearscape {
struct Context;
}

namespace nearscape::ui {

class JobRunner;

/// The progress bar's format for a job's `message`: one line of at most `width` pixels in
/// `metrics`, then the bar's own percentage (the message's trailing one dropped, its "%"
/// escaped as "%%").
QString progressFormat(const QString& message, const QFontMetrics& metrics, int width);

/// The summary's name of the backend `context` runs on ("CPU, 8 threads", "GPU: NAME", …).
QString backendText(const Context& context);

class StatusLine : public QObject {
  Q_OBJECT
public:
  /// Adds its widgets to `bar`.
  explicit StatusLine(QStatusBar* bar);

  /// Shows `runner`'s progress (after ~150 ms) and lets Cancel stop it; its failures are
  /// reported through `failed`.
  void watch(JobRunner* runner);
  void setSummary(const QString& text);
  void setSummaryToolTip(const QString& text);
  QString summary() const;
  /// Shows what opening noticed (Dataset::warnings) in the bar and behind its sign.
  void showWarnings(const std::vector<std::string>& warnings);
  void hideWarnings();
  void showMessage(const QString& text, int msecs);
  /// Shows the refined map's trust (the mean share of exact 10-NN kept, 0–1) beside the summary;
  /// a negative mean hides it.
  void showMapTrust(int dim, double mean);

signals:
  /// A watched job failed.
  void failed(const QString& title, const QString& message);

private:
  bool anyBusy() const;

  QStatusBar* m_bar;
  QLabel* m_summary;
  QLabel* m_trust; ///< "map trust 12.3%", once computed
  QProgressBar* m_progress;
  QToolButton* m_cancel;
  QToolButton* m_warningButton; ///< shown while the data read has warnings; a click lists them
  QString m_warningText;        ///< those warnings, one a line
  std::vector<JobRunner*> m_runners;
  QTimer* m_showTimer;
};

} // namespace nearscape::ui
