#include "FacetsPanel.h"

#include "ExplorerSession.h"
#include "FacetChart.h"
#include "JobRunner.h"
#include "nearscape/core/Error.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

namespace nearscape::ui {

FacetsPanel::FacetsPanel(ExplorerSession* session, QWidget* parent)
    : QWidget(parent), m_session(session), m_jobs(new JobRunner(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* top = new QHBoxLayout;
  m_summary = new QLabel(tr("Open data to see its columns"), this);
  m_summary->setObjectName(QStringLiteral("facetsSummary"));
  m_summary->setWordWrap(true);
  top->addWidget(m_summary, 1);
  m_clear = new QPushButton(tr("Clear all"), this);
  m_clear->setObjectName(QStringLiteral("facetsClear"));
  m_clear->setToolTip(tr("Take every facet's brush away: the whole map again"));
  m_clear->setEnabled(false);
  connect(m_clear, &QPushButton::clicked, this, [this] { m_session->editFacets({}); });
  top->addWidget(m_clear);
  layout->addLayout(top);
  m_search = new QLineEdit(this);
  m_search->setObjectName(QStringLiteral("facetsSearch"));
  m_search->setPlaceholderText(tr("Find a column"));
  m_search->setClearButtonEnabled(true);
  connect(m_search, &QLineEdit::textChanged, this, [this](const QString& text) {
    for (const auto& [name, chart] : m_charts)
      chart->setVisible(text.isEmpty() || name.contains(text, Qt::CaseInsensitive));
  });
  layout->addWidget(m_search);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  m_list = new QWidget(scroll);
  m_listLayout = new QVBoxLayout(m_list);
  m_listLayout->setContentsMargins(0, 0, 0, 0);
  m_listLayout->setSpacing(2);
  m_listLayout->addStretch(1);
  scroll->setWidget(m_list);
  layout->addWidget(scroll, 1);

  connect(session, &ExplorerSession::dataChanged, this, &FacetsPanel::readColumns);
  connect(session, &ExplorerSession::metadataChanged, this, &FacetsPanel::readColumns);
  connect(session, &ExplorerSession::facetsChanged, this, &FacetsPanel::recount);
  connect(session, &ExplorerSession::selectionChanged, this, &FacetsPanel::recount);
}

FacetChart* FacetsPanel::chart(const QString& column) const {
  const auto found = m_charts.find(column);
  return found == m_charts.end() ? nullptr : found->second;
}

void FacetsPanel::brush(const QString& column, const std::optional<FacetBrush>& brush) {
  std::vector<FacetBrush> brushes;
  for (const FacetBrush& b : m_session->facets())
    if (b.column != column.toStdString())
      brushes.push_back(b);
  if (brush)
    brushes.push_back(*brush);
  m_session->editFacets(std::move(brushes));
}

void FacetsPanel::readColumns() {
  for (const auto& [name, chart] : m_charts)
    chart->deleteLater();
  m_charts.clear();
  m_columns.reset();
  const auto dataset = m_session->dataset();
  if (!dataset) {
    m_summary->setText(tr("Open data to see its columns"));
    return;
  }
  m_summary->setText(tr("Reading the columns…"));
  // Every column read whole: in the background (millions of items take seconds).
  m_jobs->run<std::shared_ptr<const std::vector<FacetColumn>>>(
      tr("Reading the facets"),
      [dataset](JobControl& job) {
        return std::make_shared<const std::vector<FacetColumn>>(readFacetColumns(*dataset, job));
      },
      [this, dataset](std::shared_ptr<const std::vector<FacetColumn>>& columns) {
        if (m_session->dataset() != dataset)
          return; // other data since
        m_columns = columns;
        for (const FacetColumn& column : *m_columns) {
          auto* chart = new FacetChart(m_list);
          const QString name = QString::fromStdString(column.name);
          chart->setObjectName(QStringLiteral("facet:") + name);
          m_charts[name] = chart;
          m_listLayout->insertWidget(m_listLayout->count() - 1, chart);
          connect(chart, &FacetChart::brushed, this, &FacetsPanel::brush);
        }
        recount();
      });
}

void FacetsPanel::recount() {
  if (!m_columns) {
    m_session->setFacetMask({});
    return;
  }
  const std::vector<FacetColumn>& columns = *m_columns;
  const std::vector<FacetBrush>& brushes = m_session->facets();
  FacetPass pass;
  bool applied = !brushes.empty();
  try {
    pass = facetPass(columns, brushes);
  } catch (const InvalidArgument& e) {
    // A brush from the command line or a session for columns these data lack: said once, and
    // the map stays whole.
    emit failed(QString::fromUtf8(e.what()));
    pass = facetPass(columns, {});
    applied = false;
  }
  const std::size_t n = pass.failed.size();
  m_passing = 0;
  std::vector<std::uint8_t> mask;
  if (applied)
    mask.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool passes = pass.passes(i);
    m_passing += passes;
    if (applied)
      mask[i] = passes;
  }
  m_session->setFacetMask(std::move(mask));
  const std::vector<std::int64_t>& selection = m_session->selection();
  for (int c = 0; c < int(columns.size()); ++c) {
    const FacetColumn& column = columns[std::size_t(c)];
    std::optional<FacetBrush> own;
    for (const FacetBrush& b : brushes)
      if (applied && b.column == column.name)
        own = b;
    m_charts[QString::fromStdString(column.name)]->setCounts(
        column, countFacet(columns, c, pass, selection), own);
  }
  m_clear->setEnabled(!brushes.empty());
  QString summary =
      applied ? tr("%1 of %2 items pass the brushes (the rest are dimmed)").arg(m_passing).arg(n)
              : tr("%1 items · drag across a histogram or click a value to "
                   "filter the map")
                    .arg(n);
  if (!selection.empty())
    summary += tr(" · orange: the selection (%1)").arg(selection.size());
  m_summary->setText(summary);
}

} // namespace nearscape::ui
