#pragma once
// What the window shows before any data is open: how to open a file, and where the examples come
// from — never an error dialog on a first start without the example data installed.

#include <QWidget>

class QLabel;
class QPushButton;

namespace nearscape::ui {

class WelcomePage : public QWidget {
  Q_OBJECT
public:
  explicit WelcomePage(QWidget* parent = nullptr);
  /// Refreshes whether the examples are installed (and which package brings them).
  void refresh();

signals:
  void openFileAsked();
  void openExampleAsked();

private:
  QLabel* m_examples;
  QPushButton* m_example;
};

} // namespace nearscape::ui
