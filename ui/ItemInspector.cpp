#include "ItemInspector.h"

#include "ExplorerSession.h"
#include "ItemStrip.h"
#include "JobRunner.h"
#include "MapPair.h"
#include "nearscape/core/Sampling.h"
#include "nearscape/layout/FarInMap.h"

#include <QMessageBox>

#include <algorithm>

namespace nearscape::ui {

ItemInspector::ItemInspector(ExplorerSession* session, MapPair* maps, ItemStrip* neighbours,
                             ItemStrip* path, JobRunner* jobs, QWidget* dialogParent)
    : QObject(dialogParent), m_session(session), m_maps(maps), m_neighbours(neighbours),
      m_pathStrip(path), m_jobs(jobs), m_dialogParent(dialogParent) {
  connect(session, &ExplorerSession::dataChanged, this, &ItemInspector::clear);
  // Clicked while the graph was being built: list them now.
  connect(session, &ExplorerSession::artefactsChanged, this, [this] {
    if (m_waitsForGraph && m_session->artefacts() && m_session->selectedItem() >= 0)
      selectItem(m_session->selectedItem());
  });
}

void ItemInspector::clear() {
  m_neighbours->clear();
  m_pathStrip->clear();
  m_shownOf = -1;
  m_shownIds.clear();
  m_shownDistances.clear();
  m_maps->setOverlay(m_session->selectedItem(), {}, {});
}

void ItemInspector::selectItem(std::int64_t item) {
  const auto dataset = m_session->dataset();
  if (!dataset || item < 0 || item >= dataset->size())
    return;
  m_session->setSelectedItem(item);
  m_session->setPath({});
  m_pathStrip->clear();
  m_neighbours->clear();
  m_maps->setOverlay(item, {}, {});
  const auto artefacts = m_session->artefacts();
  m_waitsForGraph = !artefacts;
  if (!artefacts) {
    emit message(
        tr("Item %1 selected; its neighbours appear once the kNN graph is built.").arg(item), 8000);
    return;
  }
  // Exact neighbours in the original space, off the GUI thread; the item itself is dropped.
  const int shown = m_shown;
  m_jobs->run<KnnResult>(
      tr("Neighbours of %1").arg(item),
      [artefacts, dataset, item, shown](JobControl& job) {
        const int k = int(std::min<std::int64_t>(shown + 1, dataset->size()));
        return artefacts->index->search({dataset->vectors.row(item), 1, dataset->dim()}, k, job);
      },
      [this, item, dataset, shown](KnnResult& nn) {
        if (m_session->selectedItem() != item || m_session->dataset() != dataset)
          return;
        std::vector<std::int32_t> ids;
        std::vector<float> distances;
        std::vector<QString> captions;
        for (std::int64_t c = 0; c < nn.ids.cols() && int(ids.size()) < shown; ++c) {
          if (nn.ids.row(0)[c] == item)
            continue;
          ids.push_back(nn.ids.row(0)[c]);
          distances.push_back(nn.distances.row(0)[c]);
          captions.push_back(tr("distance %1").arg(double(nn.distances.row(0)[c]), 0, 'g', 4));
        }
        // Where the map lies: true neighbours the map places worst, by its own standard (its
        // worst-kept fifth of neighbour links), are marked and linked to it by faint lines.
        const std::vector<std::int32_t> far = farInMap(item, ids);
        for (std::size_t i = 0; i < ids.size(); ++i)
          if (std::find(far.begin(), far.end(), ids[i]) != far.end())
            captions[i] += tr(" · far in map");
        m_neighbours->setItems(*dataset, ids, captions);
        m_shownOf = item;
        m_shownIds = ids;
        m_shownDistances = std::move(distances);
        if (!m_session->path().nodes.empty())
          return; // a path is on screen: keep its overlay and message
        m_maps->setOverlay(item, ids, {}, far);
        emit message(
            tr("Item %1: its %2 exact nearest neighbours%3. Ctrl+click another item for the "
               "smoothest path.")
                .arg(item)
                .arg(ids.size())
                .arg(far.empty() ? QString()
                                 : tr(", %1 of them far in the map (faint lines)").arg(far.size())),
            8000);
      });
}

std::vector<std::int32_t>
ItemInspector::farInMap(std::int64_t item, const std::vector<std::int32_t>& neighbours) const {
  const int dim = m_session->mapDim();
  const auto& dataset = m_session->dataset();
  if (!m_session->mapRefined(dim) || neighbours.empty() || !dataset)
    return {};
  const std::vector<float>& map = m_session->layout(dim);
  const MatrixView<float> positions{map.data(), dataset->size(), dim};
  if (m_farLimit.map != map.data() || m_farLimit.size != map.size()) {
    // Once per map: the links of a seeded sample of items to their graph neighbours (up to
    // ten each) set the limit; 128 items × one pass over the map.
    const auto artefacts = m_session->artefacts();
    if (!artefacts || artefacts->graph.ids.cols() < 1)
      return {};
    const KnnResult& graph = artefacts->graph;
    const auto k = std::min<std::int64_t>(10, graph.ids.cols());
    std::vector<std::int64_t> sample;
    std::vector<std::int32_t> links;
    for (const std::int64_t s : seededSample(dataset->size(), 128, 42))
      if (std::all_of(graph.ids.row(s), graph.ids.row(s) + k,
                      [&](std::int32_t id) { return id >= 0 && id < dataset->size(); })) {
        sample.push_back(s);
        links.insert(links.end(), graph.ids.row(s), graph.ids.row(s) + k);
      }
    if (sample.empty())
      return {};
    m_farLimit = {
        map.data(), map.size(),
        farInMapRankLimit(positions, sample, {links.data(), std::int64_t(sample.size()), k})};
  }
  const std::vector<std::int64_t> ranks = mapRanks(positions, item, neighbours);
  std::vector<std::int32_t> far;
  for (std::size_t i = 0; i < neighbours.size(); ++i)
    if (ranks[i] > m_farLimit.limit)
      far.push_back(neighbours[i]);
  return far;
}

void ItemInspector::showPathTo(std::int64_t item) {
  const auto artefacts = m_session->artefacts();
  const auto dataset = m_session->dataset();
  const std::int64_t from = m_session->selectedItem();
  if (!artefacts || from < 0 || item < 0 || item >= dataset->size())
    return;
  GraphPath path = minimaxPath(*artefacts->forest, std::int32_t(from), std::int32_t(item));
  if (!path.found()) {
    m_session->setPath({});
    const int components = int(artefacts->forest->treeCount());
    emit message(
        tr("Items %1 and %2 lie in different components of the kNN graph.").arg(from).arg(item),
        8000);
    auto* ask = new QMessageBox(
        QMessageBox::Question, tr("No path"),
        tr("Items %1 and %2 lie in different components of the kNN graph (%3 components).\n\n"
           "Join the components with their exact nearest cross-component edges and try again?")
            .arg(from)
            .arg(item)
            .arg(components),
        QMessageBox::Yes | QMessageBox::No, m_dialogParent);
    ask->setAttribute(Qt::WA_DeleteOnClose);
    connect(ask, &QMessageBox::finished, this, [this, item](int result) {
      if (result == QMessageBox::Yes)
        emit bridgeAsked(item);
    });
    ask->open();
    emit componentsDisconnected(from, item, components);
    return;
  }
  std::vector<QString> captions;
  std::vector<bool> bottleneck;
  for (std::size_t i = 0; i < path.nodes.size(); ++i) {
    captions.push_back(i == 0 ? tr("start")
                              : tr("step %1").arg(double(path.steps[i - 1]), 0, 'g', 4));
    bottleneck.push_back(i > 0 && std::int64_t(i - 1) == path.bottleneckIndex);
  }
  m_pathStrip->setItems(*dataset, path.nodes, captions, bottleneck);
  m_maps->setOverlay(from, {}, path.nodes);
  emit message(tr("Smoothest path %1 → %2: %3 steps, largest step %4 (bold)")
                   .arg(from)
                   .arg(item)
                   .arg(path.steps.size())
                   .arg(double(path.bottleneck), 0, 'g', 4),
               10000);
  m_session->setPath(std::move(path));
}

void ItemInspector::showMissed(std::int64_t query, const std::vector<std::int32_t>& missed,
                               const QString& setting) {
  const auto& dataset = m_session->dataset();
  if (!dataset || query < 0 || query >= dataset->size())
    return;
  std::vector<QString> captions(missed.size(), tr("missed by %1").arg(setting));
  m_neighbours->setItems(*dataset, missed, captions);
  m_maps->setOverlay(query, missed, {});
  m_session->setPath({});
  m_pathStrip->clear();
  emit message(missed.empty()
                   ? tr("%1 finds every true neighbour of item %2.").arg(setting).arg(query)
                   : tr("%1 misses %2 true neighbours of item %3: listed and ringed.")
                         .arg(setting)
                         .arg(missed.size())
                         .arg(query),
               10000);
}

} // namespace nearscape::ui
