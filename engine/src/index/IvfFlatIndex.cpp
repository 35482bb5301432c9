#include "index/IvfFlatIndex.h"

#include "gpu/Dispatch.h"
#include "gpu/MultiDevice.h"
#include "index/IndexDevice.h"
#include "nearscape/cluster/KMeans.h"
#include "nearscape/core/Dataset.h"
#include "nearscape/core/Error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

namespace nearscape::index {

IvfFlatIndex::IvfFlatIndex(Metric metric, const Context& context)
    : m_metric(metric), m_context(context) {}

IvfFlatIndex::~IvfFlatIndex() = default;

void IvfFlatIndex::attachDevice() {
  // Searches run where the lists live: the device, or (no GPU, or too little memory) the host.
  gpu::onGpuOrCpu<gpu::IndexDevice>(
      m_context,
      [&](gpu::IndexDevice& gpu) {
        auto make = [&](const Context& on) {
          return gpu.makeIvfSearcher(
              MatrixView<float>{m_centroids.data(), m_nlist, m_d}, m_offsets.data(), m_ids.data(),
              MatrixView<float>{m_vectors.data(), m_n, m_d}, coarseMetric(), on);
        };
        m_device = make(gpu::primaryDevice(m_context));
        m_replicas = gpu::makeReplicas<gpu::IvfSearcher>(m_context, make);
      },
      [] {});
}

std::vector<IndexParameter> IvfFlatIndex::buildParameters(std::int64_t n) {
  const double maxLists = double(std::max<std::int64_t>(1, std::min<std::int64_t>(n, 1 << 20)));
  const double lists = std::clamp(std::round(4.0 * std::sqrt(double(n))), 1.0, maxLists);
  return {
      {"nlist", "k-means lists (4·√n by default)", 1, maxLists, lists, true, true},
      {"iterations", "k-means iterations", 1, 100, 10, true, true},
      {"kmeans_pp", "1: k-means++ seeding; 0: random rows", 0, 1, 0, true, true},
  };
}

IvfFlatParams IvfFlatIndex::parseBuild(const ParameterValues& values) {
  rejectUnknown({"nlist", "iterations", "kmeans_pp"}, values, "ivf build");
  IvfFlatParams params;
  params.nlist = integerParameter(values, "nlist");
  params.iterations = integerParameter(values, "iterations").value_or(params.iterations);
  if (const auto plusPlus = integerParameter(values, "kmeans_pp")) {
    if (*plusPlus != 0 && *plusPlus != 1)
      throw InvalidArgument("kmeans_pp = " + std::to_string(*plusPlus) +
                            " is out of range: an integer in [0, 1]");
    params.kmeansPlusPlus = *plusPlus == 1;
  }
  return params;
}

ParameterValues IvfFlatIndex::describe(const IvfFlatParams& params) {
  ParameterValues values = {{"iterations", params.iterations},
                            {"kmeans_pp", params.kmeansPlusPlus ? 1 : 0}};
  if (params.nlist)
    values["nlist"] = *params.nlist;
  return values;
}

IvfSearchParams IvfFlatIndex::parseSearch(const ParameterValues& values) {
  rejectUnknown({"nprobe"}, values, "ivf search");
  IvfSearchParams params;
  params.nprobe = integerParameter(values, "nprobe");
  return params;
}

ParameterValues IvfFlatIndex::describe(const IvfSearchParams& params) {
  ParameterValues values;
  if (params.nprobe)
    values["nprobe"] = *params.nprobe;
  return values;
}

std::unique_ptr<IvfFlatIndex> IvfFlatIndex::build(const MatrixView<float>& base, Metric metric,
                                                  const IvfFlatParams& params,
                                                  const Context& context, JobControl& job) {
  const auto t0 = std::chrono::steady_clock::now();
  NEARSCAPE_EXPECTS(!base.empty(), "the data is empty");
  const auto known = buildParameters(base.rows);
  std::unique_ptr<IvfFlatIndex> index(new IvfFlatIndex(metric, context));
  index->m_n = base.rows;
  index->m_d = base.cols;
  index->m_nlist = resolveParameter(known, "nlist", params.nlist);
  index->m_iterations = resolveParameter(known, "iterations", params.iterations);
  index->m_plusPlus = params.kmeansPlusPlus;
  KMeansParams kp;
  kp.clusters = index->m_nlist;
  kp.iterations = index->m_iterations;
  kp.plusPlus = index->m_plusPlus;
  KMeansResult km = kmeans(base, kp, metric, context, job);
  index->m_centroids.assign(km.centroids.data(),
                            km.centroids.data() + km.centroids.rows() * base.cols);
  job.check();
  index->fillLists(base, job);
  index->attachDevice();
  index->m_buildSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return index;
}

void IvfFlatIndex::fillLists(const MatrixView<float>& base, JobControl& job) {
  const int threads = effectiveThreads(m_context);
  const WorkingVectors work(base, m_metric, threads);
  const std::vector<std::int32_t> list = nearestCentroids(
      work.view, {m_centroids.data(), m_nlist, m_d}, 1, coarseMetric(), m_context, job);
  m_offsets.assign(std::size_t(m_nlist) + 1, 0);
  for (const std::int32_t j : list)
    ++m_offsets[std::size_t(j) + 1];
  for (int j = 0; j < m_nlist; ++j)
    m_offsets[std::size_t(j) + 1] += m_offsets[std::size_t(j)];
  m_ids.resize(std::size_t(m_n));
  std::vector<std::int64_t> fill(m_offsets.begin(), m_offsets.end() - 1);
  for (std::int64_t i = 0; i < m_n; ++i) // in id order: each list ascending by id
    m_ids[std::size_t(fill[std::size_t(list[std::size_t(i)])]++)] = std::int32_t(i);
  m_vectors.resize(std::size_t(m_n) * std::size_t(m_d));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t r = 0; r < m_n; ++r)
    std::memcpy(m_vectors.data() + r * m_d, work.view.row(m_ids[std::size_t(r)]),
                std::size_t(m_d) * sizeof(float));
}

std::vector<IndexParameter> IvfFlatIndex::searchParameters() const {
  return {{"nprobe", "lists scanned per query", 1, double(m_nlist), std::min(8.0, double(m_nlist)),
           true, true}};
}

IndexBuildParams IvfFlatIndex::buildParams() const {
  return IvfFlatParams{m_nlist, m_iterations, m_plusPlus};
}

std::uint64_t IvfFlatIndex::bytes() const {
  if (m_device)
    return m_device->bytes(); // the index's working copy lives on the device
  return (m_centroids.size() + m_vectors.size()) * 4 + m_ids.size() * 4 + m_offsets.size() * 8;
}

KnnResult IvfFlatIndex::search(const MatrixView<float>& queries, int k,
                               const IndexSearchParams& params, JobControl& job) const {
  const auto t0 = std::chrono::steady_clock::now();
  checkSearch(queries, k, m_n, m_d);
  const auto given = searchParamsOf<IvfSearchParams>(params, kind());
  const int nprobe = resolveParameter(searchParameters(), "nprobe", given.nprobe);
  Context searchContext = m_context;
  searchContext.threads = given.threads.value_or(m_context.threads);
  const WorkingVectors q(queries, m_metric, effectiveThreads(searchContext));
  KnnResult r;
  if (m_device && k <= gpu::kIvfMaxK) {
    std::vector<std::int32_t> ids(std::size_t(queries.rows) * std::size_t(k));
    std::vector<float> scores(ids.size());
    if (gpu::tryOnDevice(m_context, [&] {
          gpu::searchOnReplicas(*m_device, m_replicas, queries.rows, job,
                                [&](const gpu::IvfSearcher& device, std::int64_t r0,
                                    std::int64_t r1, JobControl& partJob) {
                                  device.search({q.view.row(r0), r1 - r0, m_d}, k, nprobe,
                                                ids.data() + r0 * k, scores.data() + r0 * k,
                                                partJob);
                                });
        })) {
      for (float& score : scores)
        score = reportedDistance(m_metric, score);
      r = searchResult(std::move(ids), std::move(scores), queries.rows, k, Backend::Cuda,
                       m_context);
    }
  }
  if (r.ids.empty())
    r = searchCpu(q, k, nprobe, searchContext, job);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

KnnResult IvfFlatIndex::searchCpu(const WorkingVectors& q, int k, int nprobe,
                                  const Context& context, JobControl& job) const {
  const int threads = effectiveThreads(context);
  const MatrixView<float> queries = q.view;
  std::vector<std::int32_t> ids(std::size_t(queries.rows) * std::size_t(k));
  std::vector<float> dists(ids.size());
  constexpr std::int64_t kBatch = 4096; // queries between cancellation checks
  for (std::int64_t b0 = 0; b0 < queries.rows; b0 += kBatch) {
    job.check();
    const std::int64_t b1 = std::min(queries.rows, b0 + kBatch);
    const MatrixView<float> batch{q.view.row(b0), b1 - b0, m_d};
    const std::vector<std::int32_t> probes = nearestCentroids(
        batch, {m_centroids.data(), m_nlist, m_d}, nprobe, coarseMetric(), context);
#pragma omp parallel num_threads(threads)
    {
      TopK best(k);
#pragma omp for schedule(dynamic, 4)
      for (std::int64_t i = b0; i < b1; ++i) {
        if (job.stopRequested()) // many lists probed: a batch lasts seconds; stop within it
          continue;
        const float* query = q.view.row(i);
        const std::int32_t* lists = probes.data() + (i - b0) * nprobe;
        for (int p = 0; p < nprobe; ++p) {
          const std::int64_t r0 = m_offsets[std::size_t(lists[p])],
                             r1 = m_offsets[std::size_t(lists[p]) + 1];
          for (std::int64_t r = r0; r < r1; ++r) {
            const float s = workingScore(m_metric, query, m_vectors.data() + r * m_d, m_d);
            if (s <= best.worst())
              best.push(s, m_ids[std::size_t(r)]);
          }
        }
        best.emit(m_metric, ids.data() + i * k, dists.data() + i * k);
      }
    }
    job.check(); // queries skipped after a stop: never return them
    job.progress(double(b1) / double(queries.rows), "ivf search");
  }
  return searchResult(std::move(ids), std::move(dists), queries.rows, k, Backend::Cpu, m_context);
}

std::vector<AnnIndex::Section> IvfFlatIndex::sections() const {
  return {{m_centroids.data(), m_centroids.size() * 4}};
}

std::unique_ptr<IvfFlatIndex> IvfFlatIndex::load(const io::ChecksummedFile& file,
                                                 const MatrixView<float>& base, Metric metric,
                                                 const Context& context) {
  const nlohmann::json& build = file.header.at("build");
  std::unique_ptr<IvfFlatIndex> index(new IvfFlatIndex(metric, context));
  index->m_n = base.rows;
  index->m_d = base.cols;
  index->m_nlist = build.at("nlist").get<int>();
  index->m_iterations = build.at("iterations").get<int>();
  index->m_plusPlus = build.at("kmeans_pp").get<int>() != 0;
  const std::size_t cells = std::size_t(index->m_nlist) * std::size_t(base.cols);
  if (index->m_nlist < 1 || index->m_nlist > base.rows || file.bodySize != cells * 4)
    throw FormatError("the ivf index's sizes do not match its file");
  index->m_centroids.resize(cells);
  std::memcpy(index->m_centroids.data(), file.body, cells * 4);
  requireFinite({index->m_centroids.data(), index->m_nlist, base.cols}, "the index's centroids");
  index->m_buildSeconds = file.header.value("build_seconds", 0.0);
  index->fillLists(base); // the lists follow from the centroids and the base
  index->attachDevice();
  return index;
}

} // namespace nearscape::index
