#pragma once
// The Selection dock: how the model's selection splits by label, buttons to clear, invert,
// grow (by the kNN graph's neighbours) or export it, and its items to browse.

#include <QWidget>

#include <cstdint>
#include <vector>

class QLabel;

namespace nearscape::ui {

class ExplorerSession;
class ItemStrip;
class Thumbnailer;

/// Everything not in the model's selection (the data's other items).
std::vector<std::int64_t> invertedSelection(const ExplorerSession& session);
/// The model's selection and the kNN-graph neighbours of its items (the graph must exist).
std::vector<std::int64_t> grownSelection(const ExplorerSession& session);

/// A selection drawn on the map (`inside`) combined with `current`: Shift adds, Alt removes,
/// else it replaces (both sorted).
std::vector<std::int64_t> drawnSelection(const std::vector<std::int64_t>& current,
                                         const std::vector<std::int64_t>& inside,
                                         Qt::KeyboardModifiers modifiers);

class SelectionPanel : public QWidget {
  Q_OBJECT
public:
  SelectionPanel(ExplorerSession* session, Thumbnailer* thumbnailer, QWidget* parent = nullptr);

signals:
  void itemChosen(std::int64_t item);
  /// Export… was pressed (the window asks where).
  void exportAsked();
  void message(const QString& text, int msecs);

private:
  void refresh();

  ExplorerSession* m_session;
  QLabel* m_summary;
  ItemStrip* m_list;
};

} // namespace nearscape::ui
