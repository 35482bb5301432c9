#include "nearscape/pipeline/Explore.h"

#include "nearscape/core/Error.h"
#include "nearscape/core/Log.h"
#include "nearscape/gpu/Devices.h"
#include "nearscape/knn/CrossNearest.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <string>

namespace nearscape {
namespace {

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// Shares of the pipeline's progress, by how long each stage usually takes (fashion-mnist, CPU).
constexpr double kGraphWeight = 9, kNeighboursWeight = 0.5, kStartWeight = 0.5, kMapWeight = 8,
                 kForestWeight = 1;

/// Hands out consecutive job.sub ranges in proportion to the weights of the stages that run.
class StageRanges {
public:
  StageRanges(JobControl& job, double totalWeight) : m_job(job), m_total(totalWeight) {}
  JobControl next(double weight) {
    const double from = m_done / m_total;
    m_done += weight;
    const double to = m_done / m_total;
    return m_job.sub(from, to > 1.0 - 1e-9 ? 1.0 : to); // the last stage ends at 1 exactly
  }

private:
  JobControl& m_job;
  double m_total;
  double m_done = 0;
};

void expectMapShape(const Matrix<float>& m, std::int64_t n, int dim, const char* what) {
  NEARSCAPE_EXPECTS(m.rows() == n && m.cols() == dim,
                    std::string("the supplied ") + what + " is " + std::to_string(m.rows()) +
                        " × " + std::to_string(m.cols()) + ", expected " + std::to_string(n) +
                        " × " + std::to_string(dim));
}

} // namespace

std::string_view exploreStageName(ExploreStage stage) {
  switch (stage) {
  case ExploreStage::Graph:
    return "graph";
  case ExploreStage::Neighbours:
    return "neighbours";
  case ExploreStage::Map:
    return "map";
  case ExploreStage::Forest:
    return "forest";
  }
  return "?";
}

Exploration explore(const MatrixView<float>& data, const ExploreParams& params,
                    const Context& context, JobControl& job, const ExploreStages& stages) {
  const std::int64_t n = data.rows;
  const int dim = params.layout.dim;
  NEARSCAPE_EXPECTS(n >= 2,
                    "exploring needs at least 2 items (the data has " + std::to_string(n) + ")");
  NEARSCAPE_EXPECTS(!params.map || dim == 2 || dim == 3, "the map's dimension must be 2 or 3");
  auto finished = [&](ExploreStage stage, const Exploration& e) {
    if (stages.onStage)
      stages.onStage(stage, e);
  };
  StageRanges ranges(job, kGraphWeight + (params.neighbours ? kNeighboursWeight : 0) +
                              (params.map ? kStartWeight + kMapWeight : 0) +
                              (params.forest ? kForestWeight : 0));
  job.check();
  Exploration e;
  e.method = params.method;

  // While the GPU builds the graph, the host's cores compute the map's start (PCA): it needs
  // only the data (fashion-mnist on an H100 host: 0.1–0.4 s of the pipeline's time). Its job
  // stops with ours but reports nothing (our stages report in order). Declared before the
  // future, so that the future (which waits for the PCA) goes first.
  JobControl* pcaJobAddress = nullptr;
  JobControl pcaJob(
      [&job, &pcaJobAddress](double, const std::string&) {
        if (job.stopRequested())
          pcaJobAddress->requestStop();
      },
      std::chrono::milliseconds(0));
  pcaJobAddress = &pcaJob;
  PcaParams pcaParams = params.pca;
  pcaParams.components = dim;
  std::future<Matrix<float>> earlyStart;

  JobControl graphStage = ranges.next(kGraphWeight);
  graphStage.progress(0.0, "kNN graph");
  auto t = std::chrono::steady_clock::now();
  if (auto supplied = stages.graph ? stages.graph(e) : std::nullopt) {
    NEARSCAPE_EXPECTS(supplied->ids.rows() == n && supplied->distances.rows() == n &&
                          supplied->ids.cols() == supplied->distances.cols(),
                      "the supplied graph does not match the data's " + std::to_string(n) +
                          " rows");
    e.graph = std::move(*supplied);
    e.graphSupplied = true;
  } else {
    // The graph's plan resolves the backend once, for the PCA's overlap and the build alike.
    const GraphPlan plan = planKnnGraph(params.method, n, data.cols, params.k, context);
    // (A map or start that a hook supplies later makes this work wasted: rare, as a cached map
    // comes with its cached graph.)
    if (params.map && plan.backend == Backend::Cuda)
      earlyStart = std::async(std::launch::async, [&] {
        return computePca(data, pcaParams, context, pcaJob).coordinates;
      });
    e.graph =
        buildKnnGraph(data, params.k, params.metric, plan, context, graphStage, params.nnDescent);
    e.method = graphBuiltBy(e.graph);
  }
  e.seconds.graph = secondsSince(t);
  graphStage.progress(1.0, "kNN graph");
  finished(ExploreStage::Graph, e);
  job.check();

  if (params.neighbours) {
    JobControl stage = ranges.next(kNeighboursWeight);
    stage.progress(0.0, "exact neighbours");
    t = std::chrono::steady_clock::now();
    e.neighbours = std::make_shared<ExactKnnIndex>(data, params.metric, context);
    e.seconds.neighbours = secondsSince(t);
    stage.progress(1.0, "exact neighbours");
    finished(ExploreStage::Neighbours, e);
    job.check();
  }

  if (params.map) {
    JobControl startStage = ranges.next(kStartWeight);
    JobControl mapStage = ranges.next(kMapWeight);
    t = std::chrono::steady_clock::now();
    if (auto supplied = stages.map ? stages.map(e) : std::nullopt) {
      expectMapShape(*supplied, n, dim, "map");
      e.map = std::move(*supplied);
      e.mapSupplied = true;
    } else {
      startStage.progress(0.0, "map: PCA");
      if (auto start = stages.start ? stages.start(e) : std::nullopt) {
        expectMapShape(*start, n, dim, "start of the map");
        e.start = std::move(*start);
        e.startSupplied = true;
      } else if (earlyStart.valid()) {
        e.start = earlyStart.get();
      } else {
        e.start = computePca(data, pcaParams, context, startStage).coordinates;
      }
      e.seconds.start = secondsSince(t);
      startStage.progress(1.0, "map: PCA");
      job.check();
      t = std::chrono::steady_clock::now();
      e.map = layoutGraph(e.graph.ids.view(), e.graph.distances.view(), e.start.view(),
                          params.layout, context, mapStage, stages.onLayout);
    }
    e.seconds.map = secondsSince(t);
    mapStage.progress(1.0, "map");
    finished(ExploreStage::Map, e);
    job.check();
  }

  if (params.forest) {
    JobControl stage = ranges.next(kForestWeight);
    stage.progress(0.0, "spanning forest");
    t = std::chrono::steady_clock::now();
    LogLaps lap(context, "explore: forest:");
    e.undirected = symmetrizeKnnGraph(e.graph.ids.view(), e.graph.distances.view(), params.metric);
    lap("symmetrised");
    JobControl forestStage = stage.sub(params.bridge ? 0.5 : 0.0, 1.0);
    if (params.bridge) {
      JobControl bridgeStage = stage.sub(0.0, 0.5);
      // On the CPU: each round is a few scans of the data (knn/CrossNearest.h), which a
      // device's launches and transfers would not repay.
      Context cpu = context;
      cpu.backend = Backend::Cpu;
      ComponentBridges joined =
          bridgeComponents(e.undirected, nearestOutside(data, params.metric, cpu), bridgeStage);
      e.bridges = std::move(joined.edges);
      e.bridgesExact = joined.exact;
      e.undirected = withEdges(e.undirected, e.bridges);
    }
    lap("bridged");
    std::future<void> beside; // waits in its destructor, should the forest throw
    if (stages.besideForest)
      beside = std::async(std::launch::async, [&] { stages.besideForest(e.undirected); });
    e.forest = std::make_shared<SpanningForest>(e.undirected, context, forestStage);
    if (beside.valid())
      beside.get();
    lap("edges (" + e.forest->builtOn() + ") and rooted");
    e.seconds.forest = secondsSince(t);
    stage.progress(1.0, "spanning forest");
    finished(ExploreStage::Forest, e);
    job.check();
  }
  return e;
}

} // namespace nearscape
