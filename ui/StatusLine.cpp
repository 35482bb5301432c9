#include "StatusLine.h"

#include "JobRunner.h"

#include "nearscape/Nearscape.h"

#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QRegularExpression>
#include <QStatusBar>
#include <QStringList>
#include <QStyle>
#include <QTimer>
#include <QToolButton>

#include <algorithm>

namespace nearscape::ui {

QString backendText(const Context& context) {
  const DeviceInfo device = queryDevice(context.device);
  const QString name = QString::fromStdString(device.name);
  return !device.usable || context.backend == Backend::Cpu
             ? QObject::tr("CPU, %1 threads").arg(effectiveThreads(context))
         : context.devices.size() > 1
             ? QObject::tr("%1 GPUs: %2").arg(context.devices.size()).arg(name)
             : QObject::tr("GPU: %1").arg(name);
}

StatusLine::StatusLine(QStatusBar* bar)
    : QObject(bar), m_bar(bar), m_summary(new QLabel(bar)), m_trust(new QLabel(bar)),
      m_progress(new QProgressBar(bar)), m_cancel(new QToolButton(bar)),
      m_warningButton(new QToolButton(bar)), m_showTimer(new QTimer(this)) {
  m_summary->setTextFormat(Qt::PlainText); // it quotes the file's name
  bar->addWidget(m_summary, 1);
  m_trust->setObjectName(QStringLiteral("mapTrust"));
  m_trust->hide();
  bar->addPermanentWidget(m_trust);
  m_progress->setRange(0, 1000);
  m_progress->setMaximumWidth(220);
  m_progress->setTextVisible(true);
  m_progress->hide();
  m_cancel->setText(tr("Cancel"));
  m_cancel->hide();
  bar->addPermanentWidget(m_progress);
  bar->addPermanentWidget(m_cancel);
  m_warningButton->setObjectName(QStringLiteral("warnings"));
  m_warningButton->setAutoRaise(true);
  // Its icon and text set now, at their final height: a permanent widget growing taller
  // re-lays the bar, which shows the summary again under a message.
  m_warningButton->setIcon(bar->style()->standardIcon(QStyle::SP_MessageBoxWarning));
  m_warningButton->setIconSize(QSize(16, 16));
  m_warningButton->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  m_warningButton->setText(tr("warning"));
  m_warningButton->hide();
  bar->addPermanentWidget(m_warningButton);
  connect(m_warningButton, &QToolButton::clicked, this, [this] {
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Reading the data"), m_warningText,
                                QMessageBox::Ok, m_bar->window());
    box->setTextFormat(Qt::PlainText); // it quotes the files
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  });
  // A progress bar only for work that lasts: it appears after ~150 ms.
  m_showTimer->setSingleShot(true);
  m_showTimer->setInterval(150);
  connect(m_showTimer, &QTimer::timeout, this, [this] {
    if (anyBusy()) {
      m_progress->show();
      m_cancel->show();
    }
  });
}

bool StatusLine::anyBusy() const {
  return std::any_of(m_runners.begin(), m_runners.end(),
                     [](JobRunner* runner) { return runner->busy(); });
}

void StatusLine::watch(JobRunner* runner) {
  m_runners.push_back(runner);
  connect(m_cancel, &QToolButton::clicked, runner, &JobRunner::cancel);
  connect(runner, &JobRunner::started, this, [this](const QString& title) {
    m_progress->setValue(0);
    m_progress->setFormat(title + QStringLiteral(" %p%"));
    m_showTimer->start();
  });
  connect(runner, &JobRunner::progress, this, [this](double fraction, const QString& message) {
    m_progress->setValue(int(std::clamp(fraction, 0.0, 1.0) * 1000));
    if (!message.isEmpty())
      m_progress->setFormat(
          progressFormat(message, m_progress->fontMetrics(), m_progress->maximumWidth() - 12));
  });
  auto hideProgress = [this] {
    if (!anyBusy()) {
      m_progress->hide();
      m_cancel->hide();
    }
  };
  connect(runner, &JobRunner::finished, this, hideProgress);
  connect(runner, &JobRunner::cancelled, this, [this, hideProgress](const QString& title) {
    hideProgress();
    m_bar->showMessage(tr("%1: cancelled").arg(title), 5000);
  });
  connect(runner, &JobRunner::failed, this,
          [this, hideProgress](const QString& title, const QString& message) {
            hideProgress();
            emit failed(title, message);
          });
}

QString progressFormat(const QString& message, const QFontMetrics& metrics, int width) {
  // A bar's format reads %p, %v and %m: a message's own "%" would be taken for one. Its own
  // trailing figure ("… 30.8%") gives way to the bar's, and the text is cut to fit one line
  // (a long one wrapped into "130.80%" in a narrow bar).
  QString text = message;
  text.remove(QRegularExpression(QStringLiteral("\\s*\\d+(\\.\\d+)?\\s*%\\s*$")));
  text.replace(QLatin1Char('%'), QStringLiteral("%%"));
  const QString suffix = QStringLiteral(" %p%");
  text =
      metrics.elidedText(text, Qt::ElideRight,
                         std::max(0, width - metrics.horizontalAdvance(QStringLiteral(" 100%"))));
  return text + suffix;
}

void StatusLine::setSummary(const QString& text) {
  m_summary->setText(text);
}

void StatusLine::setSummaryToolTip(const QString& text) {
  m_summary->setToolTip(text);
}

QString StatusLine::summary() const {
  return m_summary->text();
}

void StatusLine::showWarnings(const std::vector<std::string>& warnings) {
  QStringList lines;
  for (const std::string& warning : warnings)
    lines << QString::fromStdString(warning);
  // In the status bar for a while, and behind its warning sign until other data or metadata
  // is opened: a long message does not fit the bar.
  m_warningText = lines.join(QStringLiteral("\n"));
  // Rich text, escaped: the warnings quote the files, whose text could look like markup.
  m_warningButton->setToolTip(
      QStringLiteral("<p style='white-space:pre-wrap'>%1</p>").arg(m_warningText.toHtmlEscaped()));
  m_warningButton->setText(warnings.size() == 1 ? tr("warning")
                                                : tr("%1 warnings").arg(warnings.size()));
  m_warningButton->show();
  m_bar->showMessage(lines.join(QStringLiteral(" · ")), 30000);
}

void StatusLine::hideWarnings() {
  m_warningButton->hide();
}

void StatusLine::showMapTrust(int dim, double mean) {
  if (mean < 0) {
    m_trust->hide();
    return;
  }
  m_trust->setText(tr("map trust %1%").arg(100 * mean, 0, 'f', 1));
  m_trust->setToolTip(tr("On average %1% of an item's exact 10 nearest neighbours are among its "
                         "10 nearest on the %2-D map")
                          .arg(100 * mean, 0, 'f', 1)
                          .arg(dim));
  m_trust->show();
}

void StatusLine::showMessage(const QString& text, int msecs) {
  m_bar->showMessage(text, msecs);
}

} // namespace nearscape::ui
