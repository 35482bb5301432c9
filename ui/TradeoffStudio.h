#pragma once
// The Trade-off Studio (View → Trade-off Studio, or the sweep dock's button): the sweep panel's
// study full size, in its own window. Every run (each press of Run sweep with other build
// parameters) overlaid in its own colour with its Pareto front, the exact search on the same
// queries as the reference line; queries per second and batch-1 latency (p50/p99) against
// recall on a nines axis; hover names a point (setting, recall, QPS, latency, build time,
// bytes), a click rings that setting's missed neighbours on the map; runs removed or cleared;
// the study exported as PNG and CSV.

#include <QImage>
#include <QString>
#include <QWidget>

class QLabel;
class QListWidget;
class QPushButton;

namespace nearscape::ui {

class StudyPlot;
class SweepPanel;

class TradeoffStudio : public QWidget {
  Q_OBJECT
public:
  /// A window over `panel`'s study (the panel runs the sweeps and keeps the runs).
  explicit TradeoffStudio(SweepPanel* panel, QWidget* parent = nullptr);

  StudyPlot* throughputPlot() const { return m_throughput; }
  StudyPlot* latencyPlot() const { return m_latency; }
  QListWidget* runList() const { return m_runs; }
  QPushButton* runButton() const { return m_run; }
  QPushButton* removeButton() const { return m_remove; }
  QPushButton* clearButton() const { return m_clear; }
  /// The hovered (else the chosen) point's description.
  QLabel* details() const { return m_details; }
  QLabel* statusLabel() const { return m_status; }

  /// The study as one picture: legend, throughput and latency side by side.
  QImage figure(const QSize& size = QSize(1600, 760)) const;
  /// Writes the study's CSV (every run's rows and the exact reference) or its picture (PNG),
  /// atomically. A failure is shown in a message box and the status line; returns success.
  bool exportCsv(const QString& path);
  bool exportPng(const QString& path);
  /// The last export's error, or empty.
  QString lastError() const { return m_lastError; }

private:
  /// Redraws from the panel's study: plots, run list, reference, next run.
  void refresh();
  void showDetails(int run, int row);
  bool reportFailure(const QString& path, const std::exception& e);

  SweepPanel* m_panel;
  StudyPlot* m_throughput;
  StudyPlot* m_latency;
  QListWidget* m_runs;
  QPushButton* m_run;
  QPushButton* m_cancel;
  QPushButton* m_remove;
  QPushButton* m_clear;
  QPushButton* m_exportPng;
  QPushButton* m_exportCsv;
  QLabel* m_next;
  QLabel* m_reference;
  QLabel* m_details;
  QLabel* m_status;
  std::pair<int, int> m_chosen{-1, -1};
  std::size_t m_runCount = 0;
  QString m_lastError;
};

} // namespace nearscape::ui
