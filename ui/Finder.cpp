#include "Finder.h"

#include "ExplorerSession.h"
#include "JobRunner.h"

#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QShortcut>
#include <QSignalBlocker>
#include <QStyle>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>

#include <utility>

namespace nearscape::ui {

Finder::Finder(ExplorerSession* session, QToolBar* bar)
    : QObject(bar), m_session(session), m_jobs(new JobRunner(this)) {
  m_field = new QLineEdit(bar);
  m_field->setObjectName(QStringLiteral("search"));
  m_field->setPlaceholderText(tr("Find an id or text (Ctrl+F)"));
  m_field->setClearButtonEnabled(true);
  m_field->setMinimumWidth(240);
  bar->addWidget(m_field);
  m_regexBox = new QCheckBox(tr("regex"), bar);
  m_regexBox->setObjectName(QStringLiteral("regex"));
  m_regexBox->setToolTip(tr("Match a regular expression instead of a plain substring"));
  bar->addWidget(m_regexBox);
  m_matchLabel = new QLabel(bar);
  m_matchLabel->setObjectName(QStringLiteral("matches"));
  m_matchLabel->setTextFormat(Qt::PlainText);
  m_matchLabel->setMinimumWidth(120);
  bar->addWidget(m_matchLabel);
  // A search over long values or with a costly expression can take seconds: it can be stopped.
  m_stop = new QToolButton(bar);
  m_stop->setObjectName(QStringLiteral("searchStop"));
  m_stop->setIcon(bar->style()->standardIcon(QStyle::SP_BrowserStop));
  m_stop->setToolTip(tr("Stop the search (Esc)"));
  m_stop->setAutoRaise(true);
  m_stop->setEnabled(false); // shown always: appearing, it would re-lay the bar and map
  bar->addWidget(m_stop);
  connect(m_stop, &QToolButton::clicked, this, &Finder::cancel);
  auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), m_field);
  escape->setContext(Qt::WidgetShortcut);
  connect(escape, &QShortcut::activated, this, &Finder::cancel);
  // Enabled while any search job runs (a stopped one may still be ending when the next starts).
  connect(m_jobs, &JobRunner::started, this, [this] { m_stop->setEnabled(true); });
  for (auto ended : {&JobRunner::finished, &JobRunner::cancelled})
    connect(m_jobs, ended, this, [this] { m_stop->setEnabled(m_jobs->busy()); });
  auto* typing = new QTimer(this); // search as one types, once the typing pauses
  typing->setSingleShot(true);
  typing->setInterval(150);
  connect(m_field, &QLineEdit::textEdited, typing, qOverload<>(&QTimer::start));
  connect(m_field, &QLineEdit::textChanged, this, [typing](const QString& text) {
    if (text.isEmpty()) // the clear button
      typing->start();
  });
  connect(typing, &QTimer::timeout, this,
          [this] { setSearch(m_field->text(), m_regexBox->isChecked()); });
  connect(m_regexBox, &QCheckBox::toggled, this,
          [this](bool on) { setSearch(m_field->text(), on); });
  connect(m_field, &QLineEdit::returnPressed, this, [this, typing] {
    typing->stop();
    // A search already asked for (or done) is not run again.
    if (m_field->text() != m_session->searchText() ||
        m_regexBox->isChecked() != m_session->searchRegex() ||
        (!m_pending && !m_session->searching() && !m_session->searchText().isEmpty()))
      setSearch(m_field->text(), m_regexBox->isChecked());
    goToFirstMatch();
  });
  // A long search says how far it got.
  connect(m_jobs, &JobRunner::progress, this, [this](double fraction, const QString&) {
    if (m_pending)
      m_matchLabel->setText(tr("searching… %1%").arg(int(100 * fraction)));
  });
  connect(m_jobs, &JobRunner::failed, this, [this](const QString&, const QString& message) {
    m_stop->setEnabled(m_jobs->busy());
    m_pending = false;
    m_matchLabel->setText(tr("search failed"));
    emit failed(tr("Find"), message);
  });
  // Other data, or other metadata: the search carries over and looks at the new columns.
  auto again = [this] {
    m_jobs->cancel();
    m_pending = m_goToFirstMatch = false;
    if (!m_field->text().isEmpty())
      setSearch(m_field->text(), m_regexBox->isChecked());
  };
  connect(m_session, &ExplorerSession::dataChanged, this, again);
  connect(m_session, &ExplorerSession::metadataChanged, this, again);
  // A search put in the model by another (a session restored) runs here.
  connect(m_session, &ExplorerSession::searchChanged, this, [this] {
    if (m_session->searchText() != m_field->text() ||
        m_session->searchRegex() != m_regexBox->isChecked())
      setSearch(m_session->searchText(), m_session->searchRegex());
  });
}

void Finder::focus() {
  m_field->setFocus();
  m_field->selectAll();
}

void Finder::setSearch(const QString& text, bool regex) {
  if (m_field->text() != text)
    m_field->setText(text);
  if (m_regexBox->isChecked() != regex) {
    const QSignalBlocker block(m_regexBox);
    m_regexBox->setChecked(regex);
  }
  m_session->setSearch(text, regex);
  m_goToFirstMatch = false;
  const auto dataset = m_session->dataset();
  if (text.isEmpty() || !dataset) {
    m_jobs->cancel();
    m_pending = false;
    m_matchLabel->clear();
    m_session->setMatches({}, false);
    emit finished();
    return;
  }
  // Every item's every column is looked at: in the background, so that typing and the map stay
  // responsive with millions of items. Starting a search stops the one running and drops its
  // result; the last matches stay shown until the new ones arrive.
  struct Found {
    std::vector<std::int64_t> matches;
    QString error; ///< an invalid regular expression
  };
  m_pending = true;
  m_matchLabel->setText(tr("searching…"));
  m_matchLabel->setToolTip({});
  const std::string needle = text.toStdString();
  const MatchMode mode = regex ? MatchMode::Regex : MatchMode::Substring;
  m_jobs->run<Found>(
      tr("Searching"),
      [dataset, needle, mode](JobControl& job) {
        Found found;
        try {
          found.matches = findItems(*dataset, needle, mode, job);
        } catch (const InvalidArgument& e) {
          found.error = QString::fromStdString(e.what());
        }
        return found;
      },
      [this, dataset](Found& found) {
        if (m_session->dataset() != dataset || !m_pending)
          return; // searched other data, or stopped (cancel) or cleared since
        m_pending = false;
        const std::size_t count = found.matches.size();
        if (found.error.isEmpty()) {
          m_matchLabel->setText(count == 1 ? tr("1 match") : tr("%L1 matches").arg(count));
        } else {
          m_matchLabel->setText(tr("invalid expression"));
          m_matchLabel->setToolTip(found.error); // the status bar's message goes away
          emit message(found.error, 8000);
        }
        m_session->setMatches(std::move(found.matches), true);
        if (std::exchange(m_goToFirstMatch, false))
          goToFirstMatch();
        emit finished();
      });
}

void Finder::cancel() {
  if (!m_pending)
    return;
  m_jobs->cancel(); // findItems looks for the stop before every item
  m_pending = m_goToFirstMatch = false;
  m_matchLabel->setText(tr("search stopped"));
  m_session->setMatches({}, false);
  emit finished();
}

void Finder::goToFirstMatch() {
  if (m_pending) {
    m_goToFirstMatch = true; // once the search ends
    return;
  }
  if (!m_session->matches().empty())
    emit firstMatch(m_session->matches().front());
}

} // namespace nearscape::ui
