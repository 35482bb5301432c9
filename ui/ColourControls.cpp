#include "ColourControls.h"

#include "ColorBar.h"
#include "Colors.h"
#include "ExplorationJobs.h"
#include "ExplorerSession.h"
#include "JobRunner.h"
#include "LegendPanel.h"
#include "MapPair.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QToolBar>
#include <QVBoxLayout>

#include <algorithm>

namespace nearscape::ui {
namespace {

QComboBox* addBox(QToolBar* bar, const QString& label, const QString& name, const QString& tip) {
  bar->addWidget(new QLabel(label, bar));
  auto* box = new QComboBox(bar);
  box->setObjectName(name);
  box->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  box->setToolTip(tip);
  bar->addWidget(box);
  return box;
}

} // namespace

ColourControls::ColourControls(ExplorerSession* session, MapPair* maps,
                               ExplorationJobs* exploration, QToolBar* bar)
    : QObject(bar), m_session(session), m_maps(maps), m_exploration(exploration),
      m_colourJobs(new JobRunner(this)), m_opacityJobs(new JobRunner(this)),
      m_sizeJobs(new JobRunner(this)) {
  m_colourBox = addBox(bar, tr(" Colour by "), QStringLiteral("colourBy"),
                       tr("Colour the map by the labels, any metadata column or a computed "
                          "column: categories get distinct colours, numbers a colour map"));
  // Items carry their colouring's name; the text differs only for "label" on data without labels.
  connect(m_colourBox, &QComboBox::activated, this,
          [this](int index) { setColourBy(m_colourBox->itemData(index).toString()); });
  m_opacityBox = addBox(bar, tr(" Opacity "), QStringLiteral("opacityBy"),
                        tr("Fade items by a numeric column: the largest value opaque, the "
                           "smallest faint"));
  m_opacityBox->addItem(tr("none"));
  connect(m_opacityBox, &QComboBox::textActivated, this,
          [this](const QString& name) { setOpacityBy(name); });
  m_sizeBox = addBox(bar, tr(" Size "), QStringLiteral("sizeBy"),
                     tr("Draw items larger by a numeric column: four sizes from its smallest "
                        "value to its largest"));
  m_sizeBox->addItem(tr("none"));
  connect(m_sizeBox, &QComboBox::textActivated, this,
          [this](const QString& name) { setSizeBy(name); });

  // The key: the legend (categories, with check boxes that hide them) or the colour bar
  // (numbers) with its range filter (items outside, or without a value, hidden).
  m_key = new QWidget;
  auto* layout = new QVBoxLayout(m_key);
  layout->setContentsMargins(0, 0, 0, 0);
  m_colorBar = new ColorBar(m_key);
  m_colorBar->hide();
  layout->addWidget(m_colorBar, 0, Qt::AlignTop);
  m_rangeFilter = new QWidget(m_key);
  auto* rows = new QVBoxLayout(m_rangeFilter);
  rows->setContentsMargins(4, 0, 4, 0);
  auto* scaleRow = new QHBoxLayout;
  m_scaleBox = new QComboBox(m_rangeFilter);
  m_scaleBox->setObjectName(QStringLiteral("colourScale"));
  m_scaleBox->setToolTip(tr("How values map to colours: auto (log for skewed positive values, "
                            "quantile for other skewed ones, else linear), linear, log or "
                            "quantile (equal counts per colour)"));
  for (const ColourScaleKind kind : {ColourScaleKind::Auto, ColourScaleKind::Linear,
                                     ColourScaleKind::Log, ColourScaleKind::Quantile})
    m_scaleBox->addItem(QString::fromLatin1(colourScaleName(kind).data()), int(kind));
  connect(m_scaleBox, &QComboBox::activated, this, [this](int index) {
    m_session->editColourScale(ColourScaleKind(m_scaleBox->itemData(index).toInt()));
  });
  scaleRow->addWidget(new QLabel(tr("Scale"), m_rangeFilter));
  scaleRow->addWidget(m_scaleBox, 1);
  rows->addLayout(scaleRow);
  auto* range = new QHBoxLayout;
  rows->addLayout(range);
  m_rangeFrom = new QDoubleSpinBox(m_rangeFilter);
  m_rangeTo = new QDoubleSpinBox(m_rangeFilter);
  m_rangeFrom->setObjectName(QStringLiteral("rangeFrom"));
  m_rangeTo->setObjectName(QStringLiteral("rangeTo"));
  range->addWidget(new QLabel(tr("Show from"), m_rangeFilter));
  range->addWidget(m_rangeFrom, 1);
  range->addWidget(new QLabel(tr("to"), m_rangeFilter));
  range->addWidget(m_rangeTo, 1);
  for (QDoubleSpinBox* box : {m_rangeFrom, m_rangeTo}) {
    box->setDecimals(3);
    box->setKeyboardTracking(false);
    connect(box, &QDoubleSpinBox::valueChanged, this, &ColourControls::filterEdited);
  }
  m_rangeFilter->hide();
  layout->addWidget(m_rangeFilter, 0, Qt::AlignTop);
  m_legendSearch = new QLineEdit(m_key);
  m_legendSearch->setObjectName(QStringLiteral("legendSearch"));
  m_legendSearch->setPlaceholderText(tr("Search the legend (Enter: show only these)"));
  m_legendSearch->setClearButtonEnabled(true);
  m_legendSearch->hide();
  layout->addWidget(m_legendSearch, 0, Qt::AlignTop);
  m_legend = new LegendPanel(m_key);
  layout->addWidget(m_legend, 1);
  connect(m_legendSearch, &QLineEdit::textChanged, m_legend, &LegendPanel::setFilterText);
  connect(m_legendSearch, &QLineEdit::returnPressed, m_legend, &LegendPanel::showOnlyListed);
  connect(m_legend, &LegendPanel::visibilityChanged, this, &ColourControls::filterEdited);

  // The model's changes.
  connect(session, &ExplorerSession::dataChanged, this, [this] {
    m_panelColumns.clear();
    reset();
  });
  connect(session, &ExplorerSession::metadataChanged, this, [this] {
    reset();
    m_maps->map()->setSizeClasses(m_sizeClasses);
  });
  connect(session, &ExplorerSession::metricChanged, this, [this] {
    m_panelColumns.clear(); // a comparison's overlap is of the old metric
    refreshChoices();
  });
  connect(session, &ExplorerSession::artefactsChanged, this, &ColourControls::refreshChoices);
  connect(session, &ExplorerSession::layoutChanged, this, &ColourControls::refreshChoices);
  connect(session, &ExplorerSession::mapDimChanged, this, [this] {
    refreshChoices();                // map trust is offered for refined maps
    if (colourBy() == trustColumn()) // it belongs to the other map: back to the labels
      setColourBy(QStringLiteral("label"));
  });
  connect(session, &ExplorerSession::colouringChanged, this, &ColourControls::apply);
  connect(session, &ExplorerSession::filterChanged, this, [this] {
    if (!m_colourPending.isEmpty())
      return; // the colouring's arrival shows it
    showFilter();
    restyle(); // a range filter rescales the colours to what it shows
    applyVisibility();
  });
  connect(session, &ExplorerSession::colourScaleChanged, this, &ColourControls::restyle);
  connect(session, &ExplorerSession::selectionChanged, this, &ColourControls::recolour);
  connect(session, &ExplorerSession::facetMaskChanged, this, &ColourControls::recolour);
  connect(session, &ExplorerSession::matchesChanged, this, &ColourControls::recolour);
}

void ColourControls::reset() {
  // Another data set's (or metadata's) columns, and work on them still under way.
  for (JobRunner* runner : {m_colourJobs, m_opacityJobs, m_sizeJobs})
    runner->cancel();
  m_colourPending.clear();
  m_opacityColumn.clear();
  m_opacityValues.clear();
  m_sizeColumn.clear();
  m_sizeClasses.clear();
  m_opacityPending = m_sizePending = false;
  m_scheme.reset();
  if (const auto& dataset = m_session->dataset())
    m_scheme = std::make_unique<ColourScheme>(labelScheme(*dataset));
  refreshChoices();
  showSchemeKey();
  recolour();
}

QStringList ColourControls::colourChoices() const {
  QStringList choices;
  if (!m_session->dataset())
    return choices;
  choices << QStringLiteral("label") << m_session->colourableColumns();
  if (const auto& artefacts = m_session->artefacts()) {
    choices << tr("distance to the %1th neighbour").arg(artefacts->graphK);
    if (m_session->mapRefined(m_session->mapDim()))
      choices << trustColumn();
    choices << outlierColumn();
  }
  for (const auto& [name, values] : m_panelColumns)
    choices << name;
  return choices;
}

QString ColourControls::colourBy() const {
  return m_scheme ? m_scheme->name : QString();
}

QString ColourControls::outlierColumn() {
  return tr("outlier score (LOF, exact 10-NN)");
}

QString ColourControls::trustColumn() {
  return tr("map trust (exact 10-NN kept)");
}

void ColourControls::addPanelColumn(const QString& name, std::vector<double> values) {
  m_panelColumns[name] = std::move(values);
  refreshChoices();
}

bool ColourControls::setColourBy(const QString& name) {
  if (!m_session->dataset() || !colourChoices().contains(name))
    return false;
  if (name != m_session->colouring())
    m_session->editColouring(name); // the model's signal shows it (apply)
  else if (name != colourBy() && name != m_colourPending)
    apply(name); // asked for before the column existed (a computed one, before the graph)
  return true;
}

void ColourControls::applyColouring() {
  apply(m_session->colouring());
}

void ColourControls::apply(const QString& name) {
  // A colouring asked for before and still under way is not wanted any more.
  m_colourPending.clear();
  m_colourJobs->cancel();
  const auto dataset = m_session->dataset();
  if (!dataset || !colourChoices().contains(name))
    return;
  showChoice(name);
  const auto& artefacts = m_session->artefacts();
  if (name == QStringLiteral("label")) {
    showScheme(std::make_unique<ColourScheme>(labelScheme(*dataset)));
  } else if (const int column = dataset->metadata.findColumn(name.toStdString()); column >= 0) {
    // A column is read whole (millions of items take seconds): in the background.
    m_colourPending = name;
    m_colourJobs->run<std::shared_ptr<ColourScheme>>(
        tr("Colouring by %1").arg(name),
        [dataset, column](JobControl& job) {
          return std::make_shared<ColourScheme>(columnScheme(*dataset, column, job));
        },
        [this, dataset, name](std::shared_ptr<ColourScheme>& scheme) {
          if (m_session->dataset() != dataset || m_colourPending != name)
            return; // asked for other data, or another colouring since
          m_colourPending.clear();
          showScheme(std::make_unique<ColourScheme>(std::move(*scheme)));
        });
  } else if (const auto panel = m_panelColumns.find(name); panel != m_panelColumns.end()) {
    showScheme(std::make_unique<ColourScheme>(numericScheme(name, panel->second)));
  } else if (name == outlierColumn()) {
    // The local outlier factor needs each item's exact 10-NN (the graph's, when it is exact):
    // computed in the background once per graph, then coloured.
    if (m_outliers.artefacts != artefacts.get() || m_outliers.values.empty()) {
      m_colourPending = name;
      m_exploration->computeOutliers([this, of = artefacts.get()](std::vector<float>& lof) {
        if (m_session->artefacts().get() != of)
          return; // computed for a graph no longer shown
        m_outliers.artefacts = of;
        m_outliers.values.assign(lof.begin(), lof.end());
        if (m_colourPending == outlierColumn())
          apply(outlierColumn());
      });
      return;
    }
    showScheme(std::make_unique<ColourScheme>(numericScheme(name, m_outliers.values)));
  } else if (name == trustColumn()) {
    // Map trust needs each item's exact 10-NN (the graph's, when it is exact) and the map's:
    // computed in the background once per map, then coloured.
    const int dim = m_session->mapDim();
    Trust& trust = m_trust[std::size_t(dim == 3)];
    const float* map = m_session->layout(dim).data();
    if (trust.map != map || trust.values.empty()) {
      m_colourPending = name;
      m_exploration->computeTrust(dim, [this, dataset, dim, map](LayoutQuality& q) {
        if (m_session->dataset() != dataset || m_session->layout(dim).data() != map)
          return; // computed for a map no longer shown
        Trust& computed = m_trust[std::size_t(dim == 3)];
        computed.map = map;
        computed.values.assign(q.perItem.begin(), q.perItem.end());
        computed.mean = q.overall;
        if (m_colourPending == trustColumn() && m_session->mapDim() == dim)
          apply(trustColumn());
      });
      return;
    }
    showScheme(std::make_unique<ColourScheme>(numericScheme(name, trust.values)));
    emit message(tr("Map trust: on average %1% of an item's exact 10 nearest neighbours are "
                    "among its 10 nearest on this map")
                     .arg(100 * trust.mean, 0, 'f', 1),
                 10000);
  } else { // the computed column: how far each item's k-th neighbour lies
    const MatrixView<float> d = artefacts->graph.distances.view();
    std::vector<double> values(std::size_t(d.rows));
    for (std::int64_t i = 0; i < d.rows; ++i)
      values[std::size_t(i)] = d.row(i)[d.cols - 1];
    showScheme(std::make_unique<ColourScheme>(numericScheme(name, values)));
  }
}

void ColourControls::showScheme(std::unique_ptr<ColourScheme> scheme) {
  m_scheme = std::move(scheme);
  m_paintedScale = ColourScaleKind::Auto; // numericScheme paints on the auto scale, unfiltered
  m_paintedRange.reset();
  showChoice(m_scheme->name);
  showSchemeKey();
  showFilter(); // what waited for this colouring (a session's hidden groups and range)
  restyle();
}

void ColourControls::restyle() {
  if (!m_scheme || !m_scheme->numeric) {
    recolour();
    return;
  }
  const ColourScaleKind asked = m_session->colourScale();
  const auto range = m_session->filter().range;
  if (asked != m_paintedScale || range != m_paintedRange) {
    paintNumeric(*m_scheme, asked, range);
    m_paintedScale = asked;
    m_paintedRange = range;
  }
  m_colorBar->setScale(m_scheme->name, m_scheme->scale);
  const QSignalBlocker block(m_scaleBox);
  m_scaleBox->setCurrentIndex(m_scaleBox->findData(int(asked)));
  m_scaleBox->setItemText(0, tr("auto (%1)").arg(colourScaleName(m_scheme->autoScale).data()));
  recolour();
}

void ColourControls::showSchemeKey() {
  if (!m_scheme) {
    m_legend->clear();
    m_legendSearch->hide();
    return;
  }
  const QSignalBlocker blockFrom(m_rangeFrom), blockTo(m_rangeTo);
  if (m_scheme->numeric) {
    m_legend->clear();
    m_legend->hide();
    m_legendSearch->hide();
    m_colorBar->setScale(m_scheme->name, m_scheme->scale);
    m_colorBar->show();
    // The filter starts at the whole range (the boxes span it and a margin, for typing).
    const double margin = std::max(1.0, m_scheme->maximum - m_scheme->minimum);
    for (QDoubleSpinBox* box : {m_rangeFrom, m_rangeTo})
      box->setRange(m_scheme->minimum - margin, m_scheme->maximum + margin);
    m_rangeFrom->setValue(m_scheme->minimum);
    m_rangeTo->setValue(m_scheme->maximum);
    m_rangeFilter->show();
  } else {
    m_colorBar->hide();
    m_rangeFilter->hide();
    m_legend->show();
    m_legend->setLabels(m_scheme->groupNames, m_scheme->groupCounts, m_scheme->groupColors);
    // A legend longer than a glance gets its search.
    constexpr std::size_t kSearchedFrom = 12;
    m_legendSearch->clear();
    m_legendSearch->setVisible(m_scheme->groupNames.size() > kSearchedFrom);
  }
}

void ColourControls::showFilter() {
  if (!m_scheme)
    return;
  const Filter& filter = m_session->filter();
  m_showingFilter = true;
  if (m_scheme->numeric) {
    const QSignalBlocker blockFrom(m_rangeFrom), blockTo(m_rangeTo);
    const auto [from, to] = filter.range.value_or(std::pair{m_scheme->minimum, m_scheme->maximum});
    m_rangeFrom->setMinimum(std::min(m_rangeFrom->minimum(), from));
    m_rangeTo->setMaximum(std::max(m_rangeTo->maximum(), to));
    m_rangeFrom->setValue(from);
    m_rangeTo->setValue(to);
  } else {
    for (int g = 0; g < int(m_scheme->groupNames.size()); ++g)
      m_legend->setLabelVisible(
          g, !filter.hidden.contains(QString::fromStdString(m_scheme->groupNames[std::size_t(g)])));
  }
  m_showingFilter = false;
}

void ColourControls::filterEdited() {
  if (m_showingFilter || !m_scheme || !m_colourPending.isEmpty())
    return;
  Filter filter;
  if (m_scheme->numeric) {
    const double from = m_rangeFrom->value(), to = m_rangeTo->value();
    if (from > m_scheme->minimum || to < m_scheme->maximum)
      filter.range = std::pair{from, to};
  } else {
    const std::vector<bool> shown = m_legend->visibleLabels();
    for (std::size_t g = 0; g < shown.size() && g < m_scheme->groupNames.size(); ++g)
      if (!shown[g])
        filter.hidden << QString::fromStdString(m_scheme->groupNames[g]);
  }
  m_session->editFilter(std::move(filter));
}

void ColourControls::applyVisibility() {
  const auto& dataset = m_session->dataset();
  const Filter& filter = m_session->filter();
  if (!dataset || !m_scheme || m_scheme->rgb.size() != std::size_t(3 * dataset->size())) {
    m_maps->setVisibleMask({});
    return;
  }
  const std::size_t n = std::size_t(dataset->size());
  if (m_scheme->numeric && m_scheme->values.size() == n && filter.range) {
    const auto [from, to] = *filter.range;
    std::vector<bool> visible(n);
    for (std::size_t i = 0; i < n; ++i)
      visible[i] = m_scheme->values[i] >= from && m_scheme->values[i] <= to; // NaN: hidden
    m_maps->setVisibleMask(std::move(visible));
    return;
  }
  if (m_scheme->numeric || m_scheme->group.size() != n || filter.hidden.isEmpty()) {
    m_maps->setVisibleMask({});
    return;
  }
  std::vector<bool> groupVisible(m_scheme->groupNames.size());
  for (std::size_t g = 0; g < groupVisible.size(); ++g)
    groupVisible[g] = !filter.hidden.contains(QString::fromStdString(m_scheme->groupNames[g]));
  std::vector<bool> visible(n);
  for (std::size_t i = 0; i < n; ++i)
    visible[i] = groupVisible[std::size_t(m_scheme->group[i])];
  m_maps->setVisibleMask(std::move(visible));
}

void ColourControls::recolour() {
  const auto& dataset = m_session->dataset();
  if (!dataset || !m_scheme)
    return;
  // Bright: the selection when there is one, else the search's matches; the rest fade.
  const std::vector<std::int64_t>& selection = m_session->selection();
  const std::vector<std::uint8_t> rgb =
      m_opacityValues.empty() ? m_scheme->rgb
                              : fadedBy(m_scheme->rgb, m_opacityValues, MapView::backgroundColor());
  m_shown = !selection.empty() ? dimmedExcept(rgb, selection, MapView::backgroundColor())
            : m_session->searching()
                ? dimmedExcept(rgb, m_session->matches(), MapView::backgroundColor())
                : rgb;
  // A facet filter dims what it leaves out (Embedding Atlas's cross-filtering), hiding nothing.
  if (!m_session->facetMask().empty())
    m_shown = dimmedWhere(m_shown, m_session->facetMask(), MapView::backgroundColor());
  m_maps->setColors(m_shown);
  applyVisibility();
}

void ColourControls::showChoice(const QString& name) {
  if (const int index = m_colourBox->findData(name); index >= 0)
    m_colourBox->setCurrentIndex(index);
}

void ColourControls::refreshChoices() {
  // The columns were found when the data or metadata was read (a column is read whole: not
  // here, on the GUI thread).
  const QString current = m_colourPending.isEmpty() ? colourBy() : m_colourPending;
  m_colourBox->clear();
  const auto& dataset = m_session->dataset();
  for (const QString& name : colourChoices())
    // Data without labels has no label column to colour by: the default reads as what it is.
    m_colourBox->addItem(name == QStringLiteral("label") && dataset && !dataset->hasLabels()
                             ? tr("none (no labels: one colour)")
                             : name,
                         name);
  showChoice(current);
  const QString opacity = opacityBy();
  m_opacityBox->clear();
  m_opacityBox->addItems(QStringList{tr("none")} + opacityChoices());
  if (!opacityChoices().contains(opacity))
    setOpacityBy(tr("none"));
  m_opacityBox->setCurrentText(opacity.isEmpty() ? tr("none") : opacity);
  const QString size = sizeBy();
  m_sizeBox->clear();
  m_sizeBox->addItems(QStringList{tr("none")} + opacityChoices());
  if (!opacityChoices().contains(size))
    setSizeBy(tr("none"));
  m_sizeBox->setCurrentText(size.isEmpty() ? tr("none") : size);
}

QStringList ColourControls::opacityChoices() const {
  return m_session->dataset() ? m_session->numericColumns() : QStringList();
}

bool ColourControls::setOpacityBy(const QString& name) {
  const auto dataset = m_session->dataset();
  if (!dataset)
    return false;
  if (name == tr("none") || name.isEmpty()) {
    m_opacityJobs->cancel();
    m_opacityPending = false;
    m_opacityColumn.clear();
    m_opacityValues.clear();
    recolour();
  } else {
    if (!opacityChoices().contains(name))
      return false;
    // The column is read in the background; the old fading stays until it arrives.
    m_opacityColumn = name;
    m_opacityPending = true;
    const int column = dataset->metadata.findColumn(name.toStdString());
    m_opacityJobs->run<std::vector<double>>(
        tr("Opacity by %1").arg(name),
        [dataset, column](JobControl& job) { return readColumn(*dataset, column, job).numbers; },
        [this, dataset, name](std::vector<double>& values) {
          if (m_session->dataset() != dataset || m_opacityColumn != name)
            return; // asked for other data, or another column since
          m_opacityPending = false;
          m_opacityValues = std::move(values);
          recolour();
        });
  }
  m_opacityBox->setCurrentText(m_opacityColumn.isEmpty() ? tr("none") : m_opacityColumn);
  return true;
}

bool ColourControls::setSizeBy(const QString& name) {
  const auto dataset = m_session->dataset();
  if (!dataset)
    return false;
  if (name == tr("none") || name.isEmpty()) {
    m_sizeJobs->cancel();
    m_sizePending = false;
    m_sizeColumn.clear();
    m_sizeClasses.clear();
    m_maps->map()->setSizeClasses(m_sizeClasses);
  } else {
    if (!opacityChoices().contains(name)) // the same numeric columns
      return false;
    // The column is read in the background; the old sizes stay until it arrives.
    m_sizeColumn = name;
    m_sizePending = true;
    const int column = dataset->metadata.findColumn(name.toStdString());
    m_sizeJobs->run<std::vector<std::uint8_t>>(
        tr("Size by %1").arg(name),
        [dataset, column](JobControl& job) {
          return sizeClasses(readColumn(*dataset, column, job).numbers);
        },
        [this, dataset, name](std::vector<std::uint8_t>& classes) {
          if (m_session->dataset() != dataset || m_sizeColumn != name)
            return; // asked for other data, or another column since
          m_sizePending = false;
          m_sizeClasses = std::move(classes);
          m_maps->map()->setSizeClasses(m_sizeClasses);
        });
  }
  m_sizeBox->setCurrentText(m_sizeColumn.isEmpty() ? tr("none") : m_sizeColumn);
  return true;
}

bool ColourControls::setShownRange(double from, double to) {
  if (!(from <= to))
    return false;
  const auto& dataset = m_session->dataset();
  if (!m_colourPending.isEmpty()) {
    // Waits for the colouring under way: computed columns are numbers; a metadata column is
    // when its every value is.
    const bool metadataColumn =
        dataset && dataset->metadata.findColumn(m_colourPending.toStdString()) >= 0;
    if (metadataColumn && !m_session->numericColumns().contains(m_colourPending))
      return false;
  } else if (!m_scheme || !m_scheme->numeric) {
    return false;
  }
  Filter filter;
  if (!m_colourPending.isEmpty() || from > m_scheme->minimum || to < m_scheme->maximum)
    filter.range = std::pair{from, to};
  m_session->editFilter(std::move(filter));
  return true;
}

std::optional<std::pair<double, double>> ColourControls::shownRange() const {
  if (m_colourPending.isEmpty() && (!m_scheme || !m_scheme->numeric))
    return std::nullopt;
  return m_session->filter().range;
}

bool ColourControls::pending() const {
  return !m_colourPending.isEmpty() || m_opacityPending || m_sizePending;
}

} // namespace nearscape::ui
