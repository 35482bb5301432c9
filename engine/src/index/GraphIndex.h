#pragma once
// The graph index (internal): a fixed-degree search graph over the base, searched best-first.

#include "index/IndexCommon.h"
#include "io/ChecksummedFile.h"

#include <memory>

namespace nearscape::cuda {
class DeviceGraphSearch;
}

namespace nearscape::index {

class GraphIndex final : public AnnIndex {
public:
  static std::vector<IndexParameter> buildParameters(std::int64_t n);
  static std::unique_ptr<GraphIndex> build(const MatrixView<float>& base, Metric metric,
                                           const ParameterValues& values, const Context& context,
                                           JobControl& job);
  /// From a verified index file whose header says kind "graph".
  static std::unique_ptr<GraphIndex> load(const io::ChecksummedFile& file,
                                          const MatrixView<float>& base, Metric metric,
                                          const Context& context);
  ~GraphIndex() override;

  std::string_view kind() const override { return "graph"; }
  std::vector<IndexParameter> searchParameters() const override;
  ParameterValues buildValues() const override;
  KnnResult search(const MatrixView<float>& queries, int k, const ParameterValues& params,
                   JobControl& job) const override;
  std::uint64_t bytes() const override;
  Metric metric() const override { return m_metric; }
  Backend backend() const override { return m_backend; }
  std::int64_t size() const override { return m_vectors.view.rows; }
  std::int64_t dim() const override { return m_vectors.view.cols; }

  /// The search graph, n × degree (for tests and the GUI).
  MatrixView<std::int32_t> graph() const {
    return {m_graph.data(), size(), std::int64_t(m_degree)};
  }

protected:
  std::vector<Section> sections() const override;

private:
  GraphIndex(const MatrixView<float>& base, Metric metric, const Context& context);
  /// Long-range edges from a seeded sample (SearchGraph.h), whose first nodes become the entries.
  void addLongRangeEdges(JobControl& job);
  void attachDevice();
  KnnResult searchCpu(const MatrixView<float>& queries, int k, int ef, int degree, int entries,
                      JobControl& job) const;

  WorkingVectors m_vectors;
  Metric m_metric;
  Context m_context;
  Backend m_backend = Backend::Cpu;
  int m_degree = 0;
  int m_buildK = 0;
  std::vector<std::int32_t> m_graph;   ///< n × degree
  std::vector<std::int32_t> m_entries; ///< seeded entry points, the first `entries` are used
  std::unique_ptr<cuda::DeviceGraphSearch> m_device;
};

} // namespace nearscape::index
