#pragma once
// The exploration's background jobs: the kNN graph, the refined map and the spanning forest of
// the model's data (read back from the artefact cache when computed before), the map of the
// other dimension, joining the graph's components, and the exact 10-NN that map trust and the
// outlier scores stand on. Results go into the model (ExplorerSession::setArtefacts, setLayout).

#include "ExplorerSession.h"

#include <QObject>

#include <functional>
#include <memory>

namespace nearscape::ui {

class JobRunner;
class MapView;

/// True when `graph` is the exact kNN graph (its neighbours are the true ones, so map trust and
/// the outlier scores need not compute them again).
bool isExactGraph(const KnnResult& graph);

class ExplorationJobs : public QObject {
  Q_OBJECT
public:
  /// Streams the refining map's positions to `map` while it shows that map's dimension.
  ExplorationJobs(ExplorerSession* session, MapView* map, QObject* parent = nullptr);

  void setContext(const Context& context) { m_context = context; }
  void setCache(const ArtefactCache& cache) { m_cache = cache; }
  /// The graph's k and method asked for (Edit → Preferences).
  void setGraph(int k, GraphMethod method) {
    m_graphK = k;
    m_method = method;
  }

  /// Computes the graph, the map of the model's dimension and the forest of the model's data
  /// (stopping one under way); explored follows. One item: no graph, single emitted at once.
  void start();
  /// Refines the map of `dim` dimensions from its PCA view through the existing kNN graph.
  void startLayout(int dim);
  /// Joins the graph's components with their exact nearest cross-component edges, then `then`.
  void bridgeComponents(std::function<void()> then);
  /// Map trust of the refined map of `dim` dimensions; `done` on the GUI thread.
  void computeTrust(int dim, std::function<void(LayoutQuality&)> done);
  /// Map trust of the refined map of `dim` dimensions where it costs no search (the graph is
  /// exact: its 10-NN are the truth); its mean arrives through trustComputed.
  void computeTrustIfCheap(int dim);
  /// The local outlier factor of every item over its exact 10-NN; `done` on the GUI thread.
  void computeOutliers(std::function<void(std::vector<float>&)> done);
  /// Stops the pipeline's job under way.
  void cancel();

  JobRunner* pipelineJobs() const { return m_pipeline; }
  JobRunner* trustJobs() const { return m_trust; }

signals:
  /// The graph, a refined map and the forest of the model's data are in the model.
  void explored(const std::shared_ptr<const Artefacts>& artefacts);
  /// A layout finished refining (the model holds it).
  void layoutFinished(int dim);
  /// Map trust of the refined map of `dim` dimensions was computed: its mean (0–1).
  void trustComputed(int dim, double mean);
  /// The data has one item: there is nothing to explore.
  void single();
  void message(const QString& text, int msecs);

private:
  ExplorerSession* m_session;
  MapView* m_map;
  Context m_context;
  ArtefactCache m_cache{ArtefactCache::defaultFolder(), ArtefactCache::kDefaultMaxBytes};
  int m_graphK = 15;
  GraphMethod m_method = GraphMethod::Auto;
  JobRunner* m_pipeline;
  JobRunner* m_trust; ///< map trust and outliers: their exact neighbours, beside the other jobs
};

} // namespace nearscape::ui
