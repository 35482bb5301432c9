#include "ShortcutsDialog.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QTableWidget>
#include <QToolBar>
#include <QVBoxLayout>

#include <utility>
#include <vector>

namespace nearscape::ui {
namespace {

/// (where, action) for every action under `menu` that has a shortcut, submenus included.
void collect(QMenu& menu, const QString& path, std::vector<std::pair<QString, QAction*>>& found) {
  for (QAction* action : menu.actions()) {
    const QString name = QString(action->text()).remove(QLatin1Char('&'));
    if (QMenu* sub = action->menu())
      collect(*sub, path + QStringLiteral(" → ") + name, found);
    else if (!action->shortcuts().isEmpty())
      found.emplace_back(path + QStringLiteral(" → ") + name, action);
  }
}

} // namespace

ShortcutsDialog::ShortcutsDialog(QMainWindow& window)
    : QDialog(&window), m_table(new QTableWidget(this)) {
  setObjectName(QStringLiteral("shortcutsDialog"));
  setWindowTitle(tr("Keyboard Shortcuts"));
  std::vector<std::pair<QString, QAction*>> found;
  for (QAction* top : window.menuBar()->actions())
    if (top->menu())
      collect(*top->menu(), QString(top->text()).remove(QLatin1Char('&')), found);
  for (QToolBar* bar : window.findChildren<QToolBar*>())
    for (QAction* action : bar->actions())
      if (!action->shortcuts().isEmpty())
        found.emplace_back(tr("Map tool → %1").arg(action->text()), action);
  const std::pair<QString, QString> mouse[] = {
      {tr("Select an item"), tr("Click it")},
      {tr("Smoothest path from the selected item"), tr("Ctrl+click another")},
      {tr("Deselect"), tr("Click empty space")},
      {tr("Pan (3D: turn)"), tr("Drag; 3D: Shift+drag or the middle button pans")},
      {tr("Zoom"), tr("Wheel")},
      {tr("Lasso or rectangle: add, remove"), tr("Shift+drag, Alt+drag")},
  };
  m_table->setColumnCount(2);
  m_table->setHorizontalHeaderLabels({tr("What"), tr("Keys")});
  m_table->setRowCount(int(found.size() + std::size(mouse)));
  int row = 0;
  for (const auto& [what, action] : found) {
    QStringList keys;
    for (const QKeySequence& key : action->shortcuts())
      keys << key.toString(QKeySequence::NativeText);
    m_table->setItem(row, 0, new QTableWidgetItem(what));
    m_table->setItem(row++, 1, new QTableWidgetItem(keys.join(tr(" or "))));
  }
  for (const auto& [what, how] : mouse) {
    m_table->setItem(row, 0, new QTableWidgetItem(tr("Map: %1").arg(what)));
    m_table->setItem(row++, 1, new QTableWidgetItem(how));
  }
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->verticalHeader()->hide();
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setStretchLastSection(true);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_table);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);
  layout->addWidget(buttons);
  resize(560, 520);
}

} // namespace nearscape::ui
