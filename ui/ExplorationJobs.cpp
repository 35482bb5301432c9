#include "ExplorationJobs.h"

#include "JobRunner.h"
#include "MapView.h"

#include <QPointer>
#include <QTimer>

#include <mutex>

namespace nearscape::ui {
namespace {

/// The artefact cache's key of a kNN graph: everything that shapes it.
std::string graphKey(GraphMethod method, int k, std::uint64_t seed) {
  return "method=" + std::string(graphMethodName(method)) + ",k=" + std::to_string(k) +
         ",seed=" + std::to_string(seed);
}

/// The key of a map refined from that graph (its start, the PCA view, is the data's own).
std::string mapKey(const std::string& graphKey, Metric metric, int dim) {
  return graphKey + ",metric=" + std::string(metricName(metric)) + ",dim=" + std::to_string(dim) +
         ",layout=default";
}

/// The explore pipeline as the GUI runs it: the preferred graph, a map that refines visibly.
ExploreParams guiExploreParams(int graphK, GraphMethod method, Metric metric, int dim) {
  ExploreParams params;
  params.metric = metric;
  params.k = graphK;
  params.method = method;
  params.layout.dim = dim;
  params.layout.reportEvery = 5;
  return params;
}

/// A stage hook that supplies `result` (already at hand: the graph of an earlier exploration).
template <typename T> auto supply(const T& result) {
  return [result](const nearscape::Exploration&) { return std::optional<T>(result); };
}

/// The explore pipeline's hooks for the map of `dim` dimensions (run on a job's thread): read
/// back from the artefact cache under `key` or stored there once computed, started from the PCA
/// view `start`, its positions streamed to `map` while the model shows `dim` of that data.
void addMapStages(ExploreStages& stages, const QPointer<ExplorerSession>& session,
                  const QPointer<MapView>& map, const std::shared_ptr<const Dataset>& dataset,
                  const ArtefactCache& cache, const std::string& key, int dim,
                  const std::shared_ptr<const std::vector<float>>& start) {
  const std::string what = "map" + std::to_string(dim) + "d";
  stages.map = [dataset, cache, what, key, dim](const nearscape::Exploration&) {
    return cache.loadMatrix(*dataset, what, key, dim);
  };
  stages.start = [dataset, start, dim](const nearscape::Exploration&) {
    return std::optional(Matrix<float>(start->data(), dataset->size(), dim, start)); // a view
  };
  // The refining map's positions for the screen: one slot holding the latest, handed over when
  // the GUI thread gets to it. However slow the screen (millions of points), at most one copy
  // waits: intermediate ones are overwritten, never queued.
  struct Latest {
    std::mutex mutex;
    std::vector<float> positions;
    bool posted = false; ///< a hand-over is queued and has not taken the slot yet
  };
  auto latest = std::make_shared<Latest>();
  stages.onLayout = [session, map, dataset, dim, latest](const MatrixView<float>& positions,
                                                         double) {
    {
      const std::lock_guard lock(latest->mutex);
      latest->positions.assign(positions.data, positions.data + positions.rows * positions.cols);
      if (latest->posted)
        return;
      latest->posted = true;
    }
    QMetaObject::invokeMethod(
        session.data(),
        [session, map, dataset, dim, latest] {
          std::vector<float> taken;
          {
            const std::lock_guard lock(latest->mutex);
            taken.swap(latest->positions);
            latest->posted = false;
          }
          if (session && map && session->dataset() == dataset && session->mapDim() == dim)
            map->movePoints(taken, !map->userMovedCamera());
        },
        Qt::QueuedConnection);
  };
  stages.onStage = [dataset, cache, what, key](ExploreStage stage,
                                               const nearscape::Exploration& e) {
    if (stage == ExploreStage::Map && !e.mapSupplied)
      cache.storeMatrix(*dataset, what, key, e.map.view());
  };
}

/// Each item's exact `k` nearest neighbours: the graph's when it is exact and long enough, else
/// computed.
KnnResult exactNeighbours(const Dataset& dataset, const KnnResult& graph, int k, Metric metric,
                          const Context& context, JobControl& job) {
  if (isExactGraph(graph) && graph.ids.cols() >= k)
    return graph;
  return knnGraph(dataset.vectors.view(), k, metric, context, job);
}

} // namespace

bool isExactGraph(const KnnResult& graph) {
  return graph.report.exact(); // STEP's graph too: exact, so never built a second time
}

ExplorationJobs::ExplorationJobs(ExplorerSession* session, MapView* map, QObject* parent)
    : QObject(parent), m_session(session), m_map(map), m_pipeline(new JobRunner(this)),
      m_trust(new JobRunner(this)) {}

void ExplorationJobs::cancel() {
  m_pipeline->cancel();
}

void ExplorationJobs::start() {
  auto dataset = m_session->dataset();
  if (!dataset)
    return;
  if (dataset->size() < 2) { // no neighbours to find: the PCA map is all there is
    QTimer::singleShot(0, this, &ExplorationJobs::single);
    return;
  }
  const int graphK = int(std::min<std::int64_t>(m_graphK, dataset->size() - 1));
  const GraphMethod askedMethod = m_method;
  const Context context = m_context;
  const Metric metric = m_session->metric();
  const int dim = m_session->mapDim();
  // One copy of the start, shared by the job and the layout it starts (no copies at 10M items).
  const auto start = std::make_shared<const std::vector<float>>(m_session->pcaView(dim));
  QPointer<ExplorerSession> session(m_session);
  QPointer<MapView> map(m_map);
  m_pipeline->run<std::shared_ptr<Artefacts>>(
      tr("Exploring"),
      [dataset, context, start, dim, session, map, graphK, askedMethod, metric,
       cache = m_cache](JobControl& job) {
        auto e = std::make_shared<Artefacts>();
        e->dataset = dataset;
        e->graphK = graphK;
        e->metric = metric;
        e->layoutDim = dim;
        // The map and the paths need a kNN graph: exact where that is the cheaper way (small data
        // sets), NN-Descent beyond (GNND on a GPU). Clicked items always get exact neighbours.
        // What was computed for this data before comes back from the cache, verified.
        const GraphPlan plan =
            planKnnGraph(askedMethod, dataset->size(), dataset->dim(), graphK, context);
        e->method = plan.method;
        // Auto keeps its own key: on a GPU it may take STEP's exact graph where the shape says
        // NN-Descent (clustered data), which only the data tells.
        e->graphKey = graphKey(askedMethod == GraphMethod::Auto ? askedMethod : e->method, graphK,
                               context.seed);
        // Which NN-Descent the summary names: the plan's backend (resolved once, by the plan).
        e->graphMethod = e->method == GraphMethod::Exact ? "exact"
                         : plan.backend == Backend::Cuda ? "GNND"
                                                         : "NN-Descent";
        ExploreStages stages;
        addMapStages(stages, session, map, dataset, cache, mapKey(e->graphKey, metric, dim), dim,
                     start);
        stages.graph = [&](const nearscape::Exploration&) {
          return cache.loadGraph(*dataset, metric, e->graphKey);
        };
        stages.onStage = [&, storeMap = stages.onStage](ExploreStage stage,
                                                        const nearscape::Exploration& so) {
          if (stage == ExploreStage::Graph && !so.graphSupplied)
            cache.storeGraph(*dataset, metric, e->graphKey, so.graph);
          storeMap(stage, so);
        };
        nearscape::Exploration done = nearscape::explore(
            dataset->vectors.view(),
            guiExploreParams(graphK, askedMethod == GraphMethod::Auto ? askedMethod : e->method,
                             metric, dim),
            context, job, stages);
        if (!done.graphSupplied && done.method != e->method) { // auto found clusters that prune
          e->method = done.method;
          e->graphMethod = "exact (STEP)";
        }
        e->graph = std::move(done.graph);
        e->graphCached = done.graphSupplied;
        e->index = std::move(done.neighbours);
        e->layout.assign(done.map.data(), done.map.data() + done.map.view().size());
        e->layoutCached = done.mapSupplied;
        e->forest = std::move(done.forest);
        e->graphSeconds = done.seconds.graph + done.seconds.neighbours;
        e->layoutSeconds = done.seconds.start + done.seconds.map;
        e->mstSeconds = done.seconds.forest;
        return e;
      },
      [this](std::shared_ptr<Artefacts>& e) {
        if (e->dataset != m_session->dataset())
          return;
        if (e->layoutCached && m_session->mapDim() == e->layoutDim) // nothing streamed it
          m_map->movePoints(e->layout, !m_map->userMovedCamera());
        // Kept once, in the model: the artefacts themselves no longer need it.
        m_session->setLayout(e->layoutDim, std::move(e->layout));
        const std::shared_ptr<const Artefacts> artefacts = e;
        m_session->setArtefacts(artefacts);
        emit layoutFinished(artefacts->layoutDim);
        emit explored(artefacts);
        if (!m_session->mapRefined(m_session->mapDim())) // turned to the other dimension
          startLayout(m_session->mapDim());
      });
}

void ExplorationJobs::startLayout(int dim) {
  const auto current = m_session->artefacts();
  const auto dataset = m_session->dataset();
  if (!current || !dataset)
    return;
  const Context context = m_context;
  const auto start = std::make_shared<const std::vector<float>>(m_session->pcaView(dim));
  QPointer<ExplorerSession> session(m_session);
  QPointer<MapView> map(m_map);
  m_pipeline->run<std::vector<float>>(
      tr("Mapping in %1D").arg(dim),
      [current, dataset, context, start, dim, session, map, cache = m_cache](JobControl& job) {
        // The map alone, from the exploration's graph.
        ExploreParams params =
            guiExploreParams(current->graphK, current->method, current->metric, dim);
        params.neighbours = false;
        params.forest = false;
        ExploreStages stages;
        addMapStages(stages, session, map, dataset, cache,
                     mapKey(current->graphKey, current->metric, dim), dim, start);
        stages.graph = supply(current->graph);
        const Matrix<float> positions =
            nearscape::explore(dataset->vectors.view(), params, context, job, stages).map;
        return std::vector<float>(positions.data(), positions.data() + positions.view().size());
      },
      [this, dataset, dim](std::vector<float>& layout) {
        if (m_session->dataset() != dataset)
          return;
        if (m_session->mapDim() == dim)
          m_map->movePoints(layout, !m_map->userMovedCamera());
        m_session->setLayout(dim, std::move(layout));
        emit layoutFinished(dim);
      });
}

void ExplorationJobs::bridgeComponents(std::function<void()> then) {
  const auto current = m_session->artefacts();
  if (!current)
    return;
  m_pipeline->run<std::shared_ptr<Artefacts>>(
      tr("Joining components"),
      [current, context = m_context](JobControl& job) {
        auto e = std::make_shared<Artefacts>(*current);
        // The forest again, of the graph with its components joined.
        ExploreParams params = guiExploreParams(e->graphK, e->method, e->metric, e->layoutDim);
        params.neighbours = false;
        params.map = false;
        params.bridge = true;
        ExploreStages stages;
        stages.graph = supply(e->graph);
        nearscape::Exploration joined =
            nearscape::explore(e->dataset->vectors.view(), params, context, job, stages);
        e->forest = std::move(joined.forest);
        return e;
      },
      [this, then](std::shared_ptr<Artefacts>& e) {
        if (e->dataset != m_session->dataset())
          return;
        m_session->setArtefacts(e);
        emit message(tr("Components joined: the graph is connected."), 5000);
        then();
      });
}

void ExplorationJobs::computeTrust(int dim, std::function<void(LayoutQuality&)> done) {
  const auto current = m_session->artefacts();
  const auto dataset = m_session->dataset();
  if (!current || !dataset)
    return;
  auto positions = std::make_shared<std::vector<float>>(m_session->layout(dim));
  m_trust->run<LayoutQuality>(
      tr("Map trust"),
      [dataset, current, context = m_context, positions, dim](JobControl& job) {
        constexpr int k = 10;
        const KnnResult truth =
            exactNeighbours(*dataset, current->graph, k, current->metric, context, job);
        return layoutQuality(truth.ids.view(), {positions->data(), dataset->size(), dim}, k,
                             effectiveThreads(context));
      },
      [this, dim, dataset, done = std::move(done)](LayoutQuality& q) {
        if (m_session->dataset() == dataset)
          emit trustComputed(dim, q.overall);
        done(q);
      });
}

void ExplorationJobs::computeTrustIfCheap(int dim) {
  const auto current = m_session->artefacts();
  if (current && current->graph.report.exact() && current->graph.ids.cols() >= 10 &&
      m_session->mapRefined(dim))
    computeTrust(dim, [](LayoutQuality&) {});
}

void ExplorationJobs::computeOutliers(std::function<void(std::vector<float>&)> done) {
  const auto current = m_session->artefacts();
  const auto dataset = m_session->dataset();
  if (!current || !dataset)
    return;
  m_trust->run<std::vector<float>>(
      tr("Outlier scores"),
      [dataset, current, context = m_context](JobControl& job) {
        constexpr int k = 10;
        const KnnResult truth =
            exactNeighbours(*dataset, current->graph, k, current->metric, context, job);
        return distinctLocalOutlierFactor(dataset->vectors.view(), k, current->metric, context, job,
                                          &truth)
            .scores;
      },
      std::move(done));
}

} // namespace nearscape::ui
