#pragma once
// The search bar: finds items whose id or metadata matches a text (a regular expression when
// asked) in the background, and puts the matches in the model (ExplorerSession::matches); the
// map dims the rest. A new search stops the one running; Escape or the stop button stops it.

#include <QObject>
#include <QString>

#include <cstdint>

class QCheckBox;
class QLabel;
class QLineEdit;
class QToolBar;
class QToolButton;

namespace nearscape::ui {

class ExplorerSession;
class JobRunner;

class Finder : public QObject {
  Q_OBJECT
public:
  /// Adds the search field, the regex box, the match count and the stop button to `bar`, and
  /// follows `session`: other data or metadata runs the search again.
  Finder(ExplorerSession* session, QToolBar* bar);

  /// Searches (see MainWindow::setSearch); an empty text clears the search at once.
  void setSearch(const QString& text, bool regex);
  /// Stops the search under way; nothing while none runs.
  void cancel();
  /// Emits firstMatch for the first match (at once, or once the search under way ends).
  void goToFirstMatch();
  /// True while a search runs in the background.
  bool pending() const { return m_pending; }
  JobRunner* jobs() const { return m_jobs; }
  /// Puts the keyboard in the search field (Edit → Find).
  void focus();

signals:
  /// A search ended (found, stopped, cleared or failed): the model's matches are its.
  void finished();
  void firstMatch(std::int64_t item);
  void failed(const QString& title, const QString& message);
  void message(const QString& text, int msecs);

private:
  ExplorerSession* m_session;
  JobRunner* m_jobs;
  QLineEdit* m_field;
  QCheckBox* m_regexBox;
  QLabel* m_matchLabel;
  QToolButton* m_stop;           ///< stops the search under way (enabled while one runs)
  bool m_pending = false;        ///< a search runs in the background
  bool m_goToFirstMatch = false; ///< Enter was pressed while it runs
};

} // namespace nearscape::ui
