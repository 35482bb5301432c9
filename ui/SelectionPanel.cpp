#include "SelectionPanel.h"

#include "ExplorerSession.h"
#include "ItemStrip.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <iterator>
#include <map>

namespace nearscape::ui {

std::vector<std::int64_t> invertedSelection(const ExplorerSession& session) {
  std::vector<std::int64_t> rest;
  if (!session.dataset())
    return rest;
  const std::vector<std::int64_t>& selection = session.selection();
  std::size_t at = 0;
  for (std::int64_t i = 0; i < session.dataset()->size(); ++i) {
    if (at < selection.size() && selection[at] == i)
      ++at;
    else
      rest.push_back(i);
  }
  return rest;
}

std::vector<std::int64_t> grownSelection(const ExplorerSession& session) {
  std::vector<std::int64_t> grown = session.selection();
  const MatrixView<std::int32_t> ids = session.artefacts()->graph.ids.view();
  for (const std::int64_t item : session.selection())
    for (std::int64_t c = 0; c < ids.cols; ++c)
      if (ids.row(item)[c] >= 0)
        grown.push_back(ids.row(item)[c]);
  return grown;
}

std::vector<std::int64_t> drawnSelection(const std::vector<std::int64_t>& current,
                                         const std::vector<std::int64_t>& inside,
                                         Qt::KeyboardModifiers modifiers) {
  std::vector<std::int64_t> result;
  if (modifiers & Qt::ShiftModifier)
    std::set_union(current.begin(), current.end(), inside.begin(), inside.end(),
                   std::back_inserter(result));
  else if (modifiers & Qt::AltModifier)
    std::set_difference(current.begin(), current.end(), inside.begin(), inside.end(),
                        std::back_inserter(result));
  else
    result = inside;
  return result;
}

SelectionPanel::SelectionPanel(ExplorerSession* session, Thumbnailer* thumbnailer, QWidget* parent)
    : QWidget(parent), m_session(session) {
  auto* layout = new QVBoxLayout(this);
  m_summary = new QLabel(this);
  m_summary->setTextFormat(Qt::PlainText); // labels come from files
  m_summary->setWordWrap(true);
  m_summary->setObjectName(QStringLiteral("selectionSummary"));
  layout->addWidget(m_summary);
  auto* buttons = new QHBoxLayout;
  auto addButton = [&](const QString& text, const QString& tip, auto action) {
    auto* b = new QToolButton(this);
    b->setText(text);
    b->setToolTip(tip);
    connect(b, &QToolButton::clicked, this, action);
    buttons->addWidget(b);
  };
  // Each an undoable edit of the model's selection.
  addButton(tr("Clear"), tr("Select nothing"), [this] { m_session->editSelection({}); });
  addButton(tr("Invert"), tr("Select everything not selected"),
            [this] { m_session->editSelection(invertedSelection(*m_session)); });
  addButton(tr("+ Neighbours"), tr("Add each selected item's graph neighbours"), [this] {
    if (!m_session->artefacts())
      emit message(tr("The neighbours come from the kNN graph, which is not built yet."), 6000);
    else
      m_session->editSelection(grownSelection(*m_session));
  });
  addButton(tr("Export…"), tr("The selected items and their metadata, as TSV"),
            [this] { emit exportAsked(); });
  buttons->addStretch();
  layout->addLayout(buttons);
  m_list = new ItemStrip(false, this);
  m_list->setThumbnailer(thumbnailer);
  layout->addWidget(m_list, 1);
  connect(m_list, &ItemStrip::itemChosen, this,
          [this](std::int32_t item) { emit itemChosen(item); });
  connect(session, &ExplorerSession::selectionChanged, this, &SelectionPanel::refresh);
  connect(session, &ExplorerSession::dataChanged, this, &SelectionPanel::refresh);
  refresh();
}

void SelectionPanel::refresh() {
  const std::vector<std::int64_t>& selection = m_session->selection();
  const auto& dataset = m_session->dataset();
  if (selection.empty() || !dataset) {
    m_summary->setText(tr("Nothing selected. Choose Lasso (L) or Rectangle (R) in the toolbar "
                          "and drag on the map; Shift adds, Alt removes."));
    m_list->clear();
    return;
  }
  // How the selection splits by label: the most frequent first.
  std::map<std::string, std::int64_t> byLabel;
  for (const std::int64_t item : selection)
    ++byLabel[dataset->labelOf(item)];
  std::vector<std::pair<std::int64_t, std::string>> ranked;
  for (const auto& [label, count] : byLabel)
    ranked.push_back({-count, label});
  std::sort(ranked.begin(), ranked.end());
  QString text = selection.size() == 1 ? tr("1 item selected")
                                       : tr("%L1 items selected").arg(selection.size());
  for (std::size_t i = 0; i < ranked.size() && i < 8; ++i)
    text += QStringLiteral("\n  %1: %2")
                .arg(ranked[i].second.empty() ? tr("(no label)")
                                              : QString::fromStdString(ranked[i].second))
                .arg(-ranked[i].first);
  if (ranked.size() > 8)
    text += tr("\n  … %1 more labels").arg(ranked.size() - 8);
  m_summary->setText(text);
  constexpr std::size_t kListed = 500; // the list is for browsing; the export holds them all
  std::vector<std::int32_t> listed;
  for (std::size_t i = 0; i < selection.size() && i < kListed; ++i)
    listed.push_back(std::int32_t(selection[i]));
  m_list->setItems(*dataset, listed, std::vector<QString>(listed.size()));
}

} // namespace nearscape::ui
