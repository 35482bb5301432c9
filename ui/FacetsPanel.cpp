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
    : QWidget(parent), m_session(session), m_jobs(new JobRunner(this)),
      m_countJobs(new JobRunner(this)) {
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

bool FacetsPanel::pending() const {
  return m_jobs->busy() || m_countJobs->busy();
}

namespace {

/// What a count gives the panel: the model's mask, and each facet's counts and own brush.
struct FacetRecount {
  std::vector<std::uint8_t> mask; ///< empty: no brush applies
  std::int64_t items = 0, passing = 0;
  bool applied = false;
  std::vector<FacetCounts> counts;
  std::vector<std::optional<FacetBrush>> own;
  QString refused; ///< why the brushes could not apply (the map stays whole)
};

FacetRecount countFacets(const std::vector<FacetColumn>& columns,
                         const std::vector<FacetBrush>& brushes,
                         const std::vector<std::int64_t>& selection, JobControl& job) {
  FacetRecount r;
  FacetPass pass;
  r.applied = !brushes.empty();
  try {
    pass = facetPass(columns, brushes);
  } catch (const InvalidArgument& e) {
    // A brush from the command line or a session for columns these data lack: said once, and
    // the map stays whole.
    r.refused = QString::fromUtf8(e.what());
    pass = facetPass(columns, {});
    r.applied = false;
  }
  const std::size_t n = pass.failed.size();
  r.items = std::int64_t(n);
  if (r.applied)
    r.mask.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool passes = pass.passes(i);
    r.passing += passes;
    if (r.applied)
      r.mask[i] = passes;
  }
  for (int c = 0; c < int(columns.size()); ++c) {
    job.check();
    const FacetColumn& column = columns[std::size_t(c)];
    std::optional<FacetBrush> own;
    for (const FacetBrush& b : brushes)
      if (r.applied && b.column == column.name)
        own = b;
    r.counts.push_back(countFacet(columns, c, pass, selection));
    r.own.push_back(std::move(own));
  }
  return r;
}

} // namespace

void FacetsPanel::recount() {
  if (!m_columns) {
    m_session->setFacetMask({});
    return;
  }
  const std::shared_ptr<const std::vector<FacetColumn>> columns = m_columns;
  const std::vector<FacetBrush> brushes = m_session->facets();
  const std::vector<std::int64_t> selection = m_session->selection();
  m_countJobs->run<FacetRecount>(
      tr("Counting the facets"),
      [columns, brushes, selection](JobControl& job) {
        return countFacets(*columns, brushes, selection, job);
      },
      [this, columns, brushes, selection](FacetRecount& r) {
        // Newer columns or brushes start a newer count, which cancels this one; one that ended
        // first all the same is stale.
        if (m_columns != columns || m_session->facets() != brushes ||
            m_session->selection() != selection)
          return;
        if (!r.refused.isEmpty())
          emit failed(r.refused);
        m_passing = r.passing;
        m_session->setFacetMask(std::move(r.mask));
        for (std::size_t c = 0; c < columns->size(); ++c)
          m_charts[QString::fromStdString((*columns)[c].name)]->setCounts((*columns)[c],
                                                                          r.counts[c], r.own[c]);
        m_clear->setEnabled(!brushes.empty());
        QString summary = r.applied ? tr("%1 of %2 items pass the brushes (the rest are dimmed)")
                                          .arg(r.passing)
                                          .arg(r.items)
                                    : tr("%1 items · drag across a histogram or click a value to "
                                         "filter the map")
                                          .arg(r.items);
        if (!selection.empty())
          summary += tr(" · orange: the selection (%1)").arg(selection.size());
        m_summary->setText(summary);
      });
}

} // namespace nearscape::ui
