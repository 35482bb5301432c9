#pragma once
// What the window shows when a session's data cannot be opened (moved, deleted, unreadable, or
// changed since the session was saved): why, and a way to locate the file again, never a window
// that closes at once.

#include <QWidget>

class QLabel;
class QPushButton;

namespace nearscape::ui {

class MissingDataPage : public QWidget {
  Q_OBJECT
public:
  explicit MissingDataPage(QWidget* parent = nullptr);
  /// Says that the data of session `sessionPath` cannot be opened, and why (`reason`); `canGoBack`
  /// offers to go back to the data still open.
  void setProblem(const QString& sessionPath, const QString& dataPath, const QString& reason,
                  bool canGoBack);
  /// What the page says (tests and accessibility).
  QString text() const;

signals:
  /// The person asked to locate the data file (a file dialog follows).
  void locateAsked();
  /// The person gave up on the session.
  void dismissed();

private:
  QLabel* m_text;
  QPushButton* m_locate;
  QPushButton* m_back;
};

} // namespace nearscape::ui
