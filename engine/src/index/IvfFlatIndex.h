#pragma once
// IVF-Flat (internal): k-means lists holding the full vectors; a search scans the nprobe lists
// whose centroids are nearest the query (the Faiss paper's IVF, without compression).

#include "index/IndexCommon.h"
#include "io/ChecksummedFile.h"

#include <memory>

namespace nearscape::gpu {
class IvfSearcher;
}

namespace nearscape::index {

class IvfFlatIndex final : public AnnIndex {
public:
  ~IvfFlatIndex() override;
  /// The build parameters described, their ranges and defaults resolved for n rows.
  static std::vector<IndexParameter> buildParameters(std::int64_t n);
  /// Reflection: `values` by name as typed parameters, and back (parseIndexBuildParams).
  static IvfFlatParams parseBuild(const ParameterValues& values);
  static ParameterValues describe(const IvfFlatParams& params);
  static IvfSearchParams parseSearch(const ParameterValues& values);
  static ParameterValues describe(const IvfSearchParams& params);
  static std::unique_ptr<IvfFlatIndex> build(const MatrixView<float>& base, Metric metric,
                                             const IvfFlatParams& params, const Context& context,
                                             JobControl& job);
  static std::unique_ptr<IvfFlatIndex> load(const io::ChecksummedFile& file,
                                            const MatrixView<float>& base, Metric metric,
                                            const Context& context);

  std::string_view kind() const override { return "ivf"; }
  std::vector<IndexParameter> searchParameters() const override;
  IndexBuildParams buildParams() const override;
  KnnResult search(const MatrixView<float>& queries, int k, const IndexSearchParams& params,
                   JobControl& job) const override;
  std::uint64_t bytes() const override;
  Metric metric() const override { return m_metric; }
  Backend backend() const override { return m_device ? Backend::Cuda : Backend::Cpu; }
  std::int64_t size() const override { return m_n; }
  std::int64_t dim() const override { return m_d; }

protected:
  std::vector<Section> sections() const override;

private:
  IvfFlatIndex(Metric metric, const Context& context);
  /// Uploads the lists when the context resolves to CUDA (the CPU keeps them too).
  void attachDevice();
  KnnResult searchCpu(const WorkingVectors& q, int k, int nprobe, const Context& context,
                      JobControl& job) const;
  /// Fills the lists from the centroids: assignment, counting sort, vectors copied list by list.
  /// Throws Cancelled (the assignment sees `job`'s stop).
  void fillLists(const MatrixView<float>& base, JobControl& job = noJobControl());
  /// Squared L2 for L2; −dot for inner product and cosine (vectors normalised for cosine).
  Metric coarseMetric() const { return m_metric == Metric::L2 ? Metric::L2 : Metric::InnerProduct; }

  Metric m_metric;
  Context m_context;
  std::int64_t m_n = 0, m_d = 0;
  int m_nlist = 0, m_iterations = 0;
  bool m_plusPlus = false;
  std::vector<float> m_centroids;      ///< nlist × d
  std::vector<std::int64_t> m_offsets; ///< nlist + 1: list j is rows [offsets[j], offsets[j+1])
  std::vector<std::int32_t> m_ids;     ///< n: base id of each list row
  std::vector<float> m_vectors; ///< n × d in list order (working form: normalised for cosine)
  std::unique_ptr<gpu::IvfSearcher> m_device;
  std::vector<std::unique_ptr<gpu::IvfSearcher>> m_replicas; ///< on the other GPUs (MultiDevice.h)
};

} // namespace nearscape::index
