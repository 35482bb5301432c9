#pragma once
// Help → Keyboard Shortcuts: every menu and tool bar action that has a key, read from the window
// itself (so the list cannot drift from what the keys do), and what the mouse does on the map.

#include <QDialog>

class QMainWindow;
class QTableWidget;

namespace nearscape::ui {

class ShortcutsDialog : public QDialog {
  Q_OBJECT
public:
  /// Lists the shortcuts of `window`'s menus and tool bars as they are now.
  explicit ShortcutsDialog(QMainWindow& window);
  QTableWidget* table() const { return m_table; }

private:
  QTableWidget* m_table;
};

} // namespace nearscape::ui
