#pragma once
// The graph index (internal): a fixed-degree search graph over the base, searched best-first.

#include "index/IndexCommon.h"
#include "index/ReorderedGraph.h"
#include "io/ChecksummedFile.h"

#include <memory>

namespace nearscape::gpu {
class GraphSearcher;
}

namespace nearscape::index {

class GraphIndex final : public AnnIndex {
public:
  /// The build parameters described, their ranges and defaults resolved for n rows.
  static std::vector<IndexParameter> buildParameters(std::int64_t n);
  /// Reflection: `values` by name as typed parameters, and back (parseIndexBuildParams).
  static GraphIndexParams parseBuild(const ParameterValues& values);
  static ParameterValues describe(const GraphIndexParams& params);
  static GraphSearchParams parseSearch(const ParameterValues& values);
  static ParameterValues describe(const GraphSearchParams& params);
  static std::unique_ptr<GraphIndex> build(const MatrixView<float>& base, Metric metric,
                                           const GraphIndexParams& params, const Context& context,
                                           JobControl& job);
  /// From a verified index file whose header says kind "graph".
  static std::unique_ptr<GraphIndex> load(const io::ChecksummedFile& file,
                                          const MatrixView<float>& base, Metric metric,
                                          const Context& context);
  ~GraphIndex() override;

  std::string_view kind() const override { return "graph"; }
  std::vector<IndexParameter> searchParameters() const override;
  IndexBuildParams buildParams() const override;
  KnnResult search(const MatrixView<float>& queries, int k, const IndexSearchParams& params,
                   JobControl& job) const override;
  std::uint64_t bytes() const override;
  Metric metric() const override { return m_metric; }
  Backend backend() const override { return m_backend; }
  std::int64_t size() const override { return m_vectors.view.rows; }
  std::int64_t dim() const override { return m_vectors.view.cols; }

  /// Whether the CPU walk uses its relabelled copy of the rows and graph (ReorderedGraph.h): on
  /// after build and load where the index searches on the CPU; off gives the copy's memory back
  /// and walks the base as given, with the same results (ties of equal distance aside).
  /// Throws std::bad_alloc.
  void setReordered(bool on);

  /// The search graph, n × degree (for tests and the GUI).
  MatrixView<std::int32_t> graph() const {
    return {m_graph.data(), size(), std::int64_t(m_degree)};
  }

protected:
  std::vector<Section> sections() const override;

private:
  GraphIndex(const MatrixView<float>& base, Metric metric, const Context& context);
  /// The upper layer: a seeded sample and its own pruned graph; half of its edges also go into
  /// the sampled nodes' rows (SearchGraph.h, long-range edges).
  void buildUpperLayer(JobControl& job);
  void attachDevice();
  /// The CPU walk's relabelled copy (ReorderedGraph.h), when the index searches on the CPU.
  void reorderForCpu();
  KnnResult searchCpu(const MatrixView<float>& queries, int k, int ef, int upperEf, int degree,
                      int entries, bool quantized, int threads, JobControl& job) const;

  WorkingVectors m_vectors;
  Metric m_metric;
  Context m_context;
  Backend m_backend = Backend::Cpu;
  int m_degree = 0;
  int m_buildK = 0;
  std::vector<std::int32_t> m_graph; ///< n × degree
  /// The upper layer (HNSW's idea, one level): a seeded random sample of ~8·√n nodes and their
  /// graph (sample-local ids, degree m_degree). A search first walks it from its first
  /// `entries` nodes, then starts the full graph from what it found: on clustered data a walk
  /// from random entries would stay in the clusters it starts in.
  std::vector<std::int32_t> m_sample;
  std::vector<std::int32_t> m_upper;
  /// The CPU search's copy of the rows and graph in breadth-first order (null when on a GPU).
  std::unique_ptr<ReorderedGraph> m_reordered;
  std::unique_ptr<gpu::GraphSearcher> m_device;
  std::vector<std::unique_ptr<gpu::GraphSearcher>>
      m_replicas; ///< on the other GPUs (MultiDevice.h)
};

} // namespace nearscape::index
