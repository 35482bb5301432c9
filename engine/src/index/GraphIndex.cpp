#include "index/GraphIndex.h"

#include "gpu/Dispatch.h"
#include "gpu/MultiDevice.h"
#include "index/IndexDevice.h"
#include "index/SearchGraph.h"
#include "nearscape/core/Dataset.h"
#include "nearscape/core/Error.h"
#include "nearscape/core/Log.h"
#include "nearscape/core/Sampling.h"
#include "nearscape/knn/NnDescent.h"
#include "util/Hash.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace nearscape::index {
namespace {

constexpr int kMaxEntries = 256;

std::string rowsScoredText(std::int64_t scored, std::int64_t upper, std::int64_t queries) {
  char text[96];
  std::snprintf(text, sizeof text, "%.1f rows scored a query (%.1f in the upper layer)",
                double(scored) / double(std::max<std::int64_t>(1, queries)),
                double(upper) / double(std::max<std::int64_t>(1, queries)));
  return text;
}

/// A best-first search's candidate pool (SONG §3's bounded priority queue and top list in one
/// sorted array, as CAGRA keeps its "internal top-k"): the `capacity` best nodes seen, each
/// flagged once expanded.
class Pool {
public:
  explicit Pool(int capacity) : m_capacity(capacity) { m_items.reserve(std::size_t(capacity) + 1); }
  void clear() { m_items.clear(), m_cursor = 0; }
  bool full() const { return int(m_items.size()) == m_capacity; }
  float worst() const { return m_items.back().score; }
  void insert(float score, std::int32_t id) {
    if (full() && !(score < m_items.back().score ||
                    (score == m_items.back().score && id < m_items.back().id)))
      return;
    std::size_t at = m_items.size();
    while (at > 0 && (score < m_items[at - 1].score ||
                      (score == m_items[at - 1].score && id < m_items[at - 1].id)))
      --at;
    m_items.insert(m_items.begin() + std::ptrdiff_t(at), {score, id, false});
    if (int(m_items.size()) > m_capacity)
      m_items.pop_back();
    m_cursor = std::min(m_cursor, at);
  }
  /// (score, id) of every node held, best first.
  std::vector<std::pair<float, std::int32_t>> items() const {
    std::vector<std::pair<float, std::int32_t>> out;
    for (const Item& i : m_items)
      out.push_back({i.score, i.id});
    return out;
  }
  int size() const { return int(m_items.size()); }
  /// Every node's score replaced by `score(id)`, the order restored (by score, then id).
  template <typename Score> void rescore(Score&& score) {
    for (Item& item : m_items)
      item.score = score(item.id);
    std::sort(m_items.begin(), m_items.end(), [](const Item& a, const Item& b) {
      return a.score < b.score || (a.score == b.score && a.id < b.id);
    });
  }
  /// The best node not yet expanded (marking it expanded), or −1.
  std::int32_t next() {
    while (m_cursor < m_items.size() && m_items[m_cursor].expanded)
      ++m_cursor;
    if (m_cursor == m_items.size())
      return -1;
    m_items[m_cursor].expanded = true;
    return m_items[m_cursor].id;
  }
  void emit(Metric metric, int k, std::int32_t* ids, float* distances) const {
    for (int j = 0; j < k; ++j) {
      const bool has = j < int(m_items.size());
      ids[j] = has ? m_items[std::size_t(j)].id : -1;
      distances[j] = has ? reportedDistance(metric, m_items[std::size_t(j)].score)
                         : std::numeric_limits<float>::infinity();
    }
  }

private:
  struct Item {
    float score;
    std::int32_t id;
    bool expanded;
  };
  int m_capacity;
  std::vector<Item> m_items;
  std::size_t m_cursor = 0;
};

/// Per-thread visited marks: a stamp per node, bumped per query (no clearing between queries).
class Visited {
public:
  explicit Visited(std::int64_t n) : m_stamps(std::size_t(n), 0) {}
  void nextQuery() {
    if (++m_stamp == 0) {
      std::fill(m_stamps.begin(), m_stamps.end(), 0);
      m_stamp = 1;
    }
  }
  /// True the first time `id` is seen in this query.
  bool visit(std::int32_t id) {
    std::uint32_t& s = m_stamps[std::size_t(id)];
    if (s == m_stamp)
      return false;
    s = m_stamp;
    return true;
  }

private:
  std::vector<std::uint32_t> m_stamps;
  std::uint32_t m_stamp = 0;
};

/// NN-Descent for a search graph: the graph is pruned afterwards and need not be as good as a kNN
/// graph people look at, so half the usual sample (measured on fashion-mnist, k = 32: 27 s
/// instead of 38 s, the same recall/QPS front).
NnDescentParams buildGraphParams(int k) {
  NnDescentParams p;
  p.sampleSize = std::max(8, k / 2);
  p.delta = 0.005; // a search graph needs no last iterations of refinement
  return p;
}

} // namespace

std::vector<IndexParameter> GraphIndex::buildParameters(std::int64_t n) {
  const double maxDegree = double(std::max<std::int64_t>(1, std::min<std::int64_t>(256, n - 1)));
  return {
      {"degree", "edges per node of the search graph", 1, maxDegree, std::min(32.0, maxDegree),
       true, true},
      // build_k = degree by default: on fashion-mnist (2 cores) 32/32 builds in 28 s and gives
      // more QPS at recall 0.995 than 24/32 or 32/64 (docs/benchmarks.md).
      {"build_k", "neighbours per node of the kNN graph it is pruned from (≥ degree)", 1,
       std::max(1.0, std::min(512.0, double(n - 1))), std::min(32.0, std::max(1.0, double(n - 1))),
       true, true},
  };
}

GraphIndexParams GraphIndex::parseBuild(const ParameterValues& values) {
  rejectUnknown({"degree", "build_k"}, values, "graph build");
  return {integerParameter(values, "degree"), integerParameter(values, "build_k")};
}

ParameterValues GraphIndex::describe(const GraphIndexParams& params) {
  ParameterValues values;
  if (params.degree)
    values["degree"] = *params.degree;
  if (params.buildK)
    values["build_k"] = *params.buildK;
  return values;
}

GraphSearchParams GraphIndex::parseSearch(const ParameterValues& values) {
  rejectUnknown({"ef", "degree", "entries", "upper_ef", "quantized"}, values, "graph search");
  return {integerParameter(values, "ef"),        integerParameter(values, "degree"),
          integerParameter(values, "entries"),   integerParameter(values, "upper_ef"),
          integerParameter(values, "quantized"), {}};
}

ParameterValues GraphIndex::describe(const GraphSearchParams& params) {
  ParameterValues values;
  if (params.ef)
    values["ef"] = *params.ef;
  if (params.degree)
    values["degree"] = *params.degree;
  if (params.entries)
    values["entries"] = *params.entries;
  if (params.upperEf)
    values["upper_ef"] = *params.upperEf;
  if (params.quantized)
    values["quantized"] = *params.quantized;
  return values;
}

GraphIndex::GraphIndex(const MatrixView<float>& base, Metric metric, const Context& context)
    : m_vectors(base, metric, effectiveThreads(context)), m_metric(metric), m_context(context) {}

GraphIndex::~GraphIndex() = default;

std::unique_ptr<GraphIndex> GraphIndex::build(const MatrixView<float>& base, Metric metric,
                                              const GraphIndexParams& params,
                                              const Context& context, JobControl& job) {
  const auto t0 = std::chrono::steady_clock::now();
  NEARSCAPE_EXPECTS(base.rows >= 2, "a graph index needs at least 2 items");
  const auto known = buildParameters(base.rows);
  const int degree = resolveParameter(known, "degree", params.degree);
  const int buildK = std::max(degree, resolveParameter(known, "build_k", params.buildK));
  std::unique_ptr<GraphIndex> index(new GraphIndex(base, metric, context));
  index->m_degree = degree;
  index->m_buildK = int(std::min<std::int64_t>(buildK, base.rows - 1));

  // The kNN graph, the cheaper way for this size (the crossover of `method = auto`).
  // Stages of the build's progress, so that the graph's own 0 → 1 is the first 90% here.
  JobControl graphStage = job.sub(0.0, 0.9);
  graphStage.progress(0.0, "kNN graph");
  LogLaps lap(context, "graph index:");
  const KnnResult knn = buildKnnGraph(base, index->m_buildK, metric, GraphMethod::Auto, context,
                                      graphStage, buildGraphParams(index->m_buildK));
  lap("kNN graph (" + knn.report.describe() + ")");
  job.check();
  JobControl searchGraphStage = job.sub(0.9, 1.0);
  searchGraphStage.progress(0.0, "search graph");
  index->m_graph = optimiseSearchGraph(knn.ids.view(), degree, context);
  lap("pruned");
  index->buildUpperLayer(searchGraphStage);
  lap("upper layer");
  index->attachDevice();
  lap("device copy");
  index->reorderForCpu();
  lap("reordered");
  index->m_buildSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  job.progress(1.0, "graph index built");
  return index;
}

void GraphIndex::buildUpperLayer(JobControl& job) {
  const std::int64_t n = size(), d = dim();
  const std::int64_t count = std::min<std::int64_t>(
      n, std::max<std::int64_t>(kMaxEntries, std::llround(8.0 * std::sqrt(double(n)))));
  m_sample.clear();
  for (const std::int64_t r : seededSample(n, count, m_context.seed ^ 0x5a3b1eull))
    m_sample.push_back(std::int32_t(r));
  // Sorted ids would put the entries (the first of the sample) in one corner: shuffle, seeded.
  for (std::size_t i = m_sample.size(); i > 1; --i)
    std::swap(m_sample[i - 1], m_sample[std::size_t(mixBits(m_context.seed + i) % i)]);
  m_upper.assign(std::size_t(count) * std::size_t(m_degree), -1);
  if (count < 3)
    return;
  std::vector<float> rows(std::size_t(count) * std::size_t(d));
  for (std::int64_t s = 0; s < count; ++s)
    std::memcpy(rows.data() + s * d, m_vectors.view.row(m_sample[std::size_t(s)]),
                std::size_t(d) * 4);
  const int k = int(std::min<std::int64_t>(count - 1, 2 * std::int64_t(m_degree)));
  const KnnResult knn =
      knnGraph({rows.data(), count, d}, k,
               m_metric == Metric::L2 ? Metric::L2 : Metric::InnerProduct, m_context, job);
  const int upperDegree = std::min(m_degree, k);
  const std::vector<std::int32_t> upper =
      optimiseSearchGraph(knn.ids.view(), upperDegree, m_context);
  for (std::int64_t s = 0; s < count; ++s)
    std::copy(upper.begin() + s * upperDegree, upper.begin() + (s + 1) * upperDegree,
              m_upper.begin() + s * m_degree);
  index::addLongRangeEdges(m_graph, m_degree, m_sample, m_upper, m_degree);
}

void GraphIndex::attachDevice() {
  // Searches run where the index lives: the device, or (no GPU, or too little memory) the host.
  m_backend = gpu::onGpuOrCpu<gpu::IndexDevice>(
      m_context,
      [&](gpu::IndexDevice& gpu) {
        auto make = [&](const Context& on) {
          return gpu.makeGraphSearcher(m_vectors.view, m_graph.data(), m_degree, m_sample.data(),
                                       m_upper.data(), int(m_sample.size()), m_metric, on);
        };
        m_device = make(gpu::primaryDevice(m_context));
        m_replicas = gpu::makeReplicas<gpu::GraphSearcher>(m_context, make);
        return Backend::Cuda;
      },
      [] { return Backend::Cpu; });
}

void GraphIndex::reorderForCpu() {
  setReordered(m_backend == Backend::Cpu);
}

void GraphIndex::setReordered(bool on) {
  m_reordered.reset();
  if (on)
    m_reordered = std::make_unique<ReorderedGraph>(
        m_vectors.view, m_graph, m_degree, m_sample,
        breadthFirstOrder(m_graph, size(), m_degree, m_sample), effectiveThreads(m_context));
}

std::vector<IndexParameter> GraphIndex::searchParameters() const {
  const double maxQueue = m_backend == Backend::Cuda ? double(gpu::kGraphSearchMaxQueue)
                                                     : double(std::min<std::int64_t>(4096, size()));
  std::vector<IndexParameter> known = {
      {"ef", "candidates kept during the search (at least k)", 1, maxQueue,
       std::min(64.0, maxQueue), true, true},
      {"degree", "edges of each node followed", 1, double(m_degree), double(m_degree), true, true},
      {"entries", "entry points of the upper layer's walk", 1,
       double(std::min<std::size_t>(kMaxEntries, m_sample.size())),
       std::min(16.0, double(m_sample.size())), true, true},
  };
  if (m_backend == Backend::Cpu) {
    known.push_back({"upper_ef", "candidates kept during the upper layer's walk (default: ef)", 1,
                     maxQueue, std::min(64.0, maxQueue), true, true});
    // On by default where the codes are exact (8-bit integer columns: the same walk, a quarter
    // of the bytes); elsewhere their rounding may cost recall at a small ef.
    const bool exactCodes = m_reordered && m_reordered->codes.exact();
    known.push_back({"quantized",
                     "1: the walk scores 8-bit codes of the rows and re-ranks its pool in "
                     "float32; 0: it scores float32 rows (default: 1 where the codes are exact)",
                     0, 1, exactCodes ? 1.0 : 0.0, true, true});
  }
  return known;
}

IndexBuildParams GraphIndex::buildParams() const {
  return GraphIndexParams{m_degree, m_buildK};
}

std::uint64_t GraphIndex::bytes() const {
  return (m_graph.size() + m_sample.size() + m_upper.size()) * 4 + m_vectors.bytes() +
         (m_reordered ? m_reordered->bytes() : 0);
}

KnnResult GraphIndex::search(const MatrixView<float>& queries, int k,
                             const IndexSearchParams& params, JobControl& job) const {
  const auto t0 = std::chrono::steady_clock::now();
  checkSearch(queries, k, size(), dim());
  const auto given = searchParamsOf<GraphSearchParams>(params, kind());
  const auto known = searchParameters();
  const int ef = std::max(k, resolveParameter(known, "ef", given.ef));
  const int degree = resolveParameter(known, "degree", given.degree);
  const int entries = resolveParameter(known, "entries", given.entries);
  if (given.upperEf && m_backend != Backend::Cpu)
    throw InvalidArgument(
        "upper_ef is a parameter of the CPU's walk; this index searches on the GPU");
  const int upperEf =
      given.upperEf ? std::min(ef, resolveParameter(known, "upper_ef", given.upperEf)) : ef;
  if (given.quantized && m_backend != Backend::Cpu)
    throw InvalidArgument(
        "quantized is a parameter of the CPU's walk; this index searches on the GPU");
  const bool quantized =
      m_backend == Backend::Cpu && resolveParameter(known, "quantized", given.quantized) == 1;
  Context searchContext = m_context;
  searchContext.threads = given.threads.value_or(m_context.threads);
  const int threads = effectiveThreads(searchContext);
  KnnResult r;
  if (m_device && ef <= gpu::kGraphSearchMaxQueue) {
    const WorkingVectors q(queries, m_metric, threads);
    std::vector<std::int32_t> ids(std::size_t(queries.rows) * std::size_t(k));
    std::vector<float> scores(ids.size());
    if (gpu::tryOnDevice(m_context, [&] {
          gpu::searchOnReplicas(*m_device, m_replicas, queries.rows, job,
                                [&](const gpu::GraphSearcher& device, std::int64_t r0,
                                    std::int64_t r1, JobControl& partJob) {
                                  device.search({q.view.row(r0), r1 - r0, q.view.cols}, k, ef,
                                                degree, entries, ids.data() + r0 * k,
                                                scores.data() + r0 * k, partJob);
                                });
        })) {
      for (float& s : scores)
        s = reportedDistance(m_metric, s);
      r = searchResult(std::move(ids), std::move(scores), queries.rows, k, Backend::Cuda,
                       m_context);
    }
  }
  if (r.ids.empty())
    r = searchCpu(queries, k, ef, upperEf, degree, entries, quantized, threads, job);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

KnnResult GraphIndex::searchCpu(const MatrixView<float>& queries, int k, int ef, int upperEf,
                                int degree, int entries, bool quantized, int threads,
                                JobControl& job) const {
  const WorkingVectors q(queries, m_metric, threads);
  // The walk scores the relabelled copy's 8-bit codes where asked (a quarter of the bytes a
  // row); its last pool is then re-ranked in float32.
  const RowCodes* codes = quantized && m_reordered ? &m_reordered->codes : nullptr;
  // The relabelled copy where there is one; its ids are mapped back on output.
  const MatrixView<float> x = m_reordered ? m_reordered->rows.view() : m_vectors.view;
  const std::int32_t* graph = m_reordered ? m_reordered->graph.data() : m_graph.data();
  const std::int32_t* sample = m_reordered ? m_reordered->sample.data() : m_sample.data();
  const std::int32_t* original = m_reordered ? m_reordered->original.data() : nullptr;
  const std::int64_t d = x.cols;
  std::int64_t scored = 0, scoredUpper = 0, reranked = 0;
  std::vector<std::int32_t> ids(std::size_t(queries.rows) * std::size_t(k));
  std::vector<float> dists(ids.size());
  constexpr std::int64_t kBatch = 2048; // queries between cancellation checks
  for (std::int64_t b0 = 0; b0 < queries.rows; b0 += kBatch) {
    job.check();
    const std::int64_t b1 = std::min(queries.rows, b0 + kBatch);
#pragma omp parallel num_threads(int(std::min <std::int64_t>(threads, b1 - b0))) reduction(+ : scored, scoredUpper, reranked)
    {
      thread_local std::unique_ptr<Visited> visited;
      thread_local std::int64_t visitedSize = -1;
      if (visitedSize != x.rows)
        visited = std::make_unique<Visited>(x.rows), visitedSize = x.rows;
      Pool pool(ef);
      Pool upperPool(std::min(ef, upperEf));
      std::vector<std::pair<float, std::int32_t>> found;
      std::int32_t fresh[256];
      std::vector<float> coded(codes ? std::size_t(d) : 0); // the query against the codes
#pragma omp for schedule(dynamic, 8)
      for (std::int64_t i = b0; i < b1; ++i) {
        if (job.stopRequested()) // a batch at a large ef lasts seconds: stop within it
          continue;
        const float* query = q.view.row(i);
        visited->nextQuery();
        // L2: ‖q − low − step·c‖², from q − low; a dot: −(q·low + (q∘step)·c).
        float queryLow = 0;
        if (codes)
          for (std::int64_t c = 0; c < d; ++c) {
            const float low = codes->low()[std::size_t(c)], step = codes->step()[std::size_t(c)];
            coded[std::size_t(c)] = m_metric == Metric::L2 ? query[c] - low : query[c] * step;
            queryLow += query[c] * low;
          }
        auto score = [&](std::int32_t row) {
          if (!codes)
            return workingScore(m_metric, query, x.row(row), d);
          return m_metric == Metric::L2
                     ? simd::l2SquaredCodes(coded.data(), codes->step().data(), codes->row(row), d)
                     : -(queryLow + simd::dotCodes(coded.data(), codes->row(row), d));
        };
        // Best-first walk of one layer; pool ids are the layer's, `global` maps them to rows
        // (and then every row scored is also recorded in `found`).
        auto walk = [&](Pool& pool, const std::int32_t* layer, int useDegree,
                        const std::int32_t* global) {
          for (std::int32_t node; (node = pool.next()) >= 0;) {
            const std::int32_t* edges = layer + std::size_t(node) * std::size_t(m_degree);
            int count = 0;
            for (int j = 0; j < useDegree; ++j) {
              const std::int32_t nb = edges[j];
              if (nb < 0)
                break;
              if (visited->visit(global ? global[nb] : nb)) {
                fresh[count++] = nb;
                const std::int32_t row = global ? global[nb] : nb;
                if (codes) // every cache line of the row's codes
                  for (std::uintptr_t at = std::uintptr_t(codes->row(row)) & ~std::uintptr_t(63),
                                      end = std::uintptr_t(codes->row(row) + d);
                       at < end; at += 64)
                    __builtin_prefetch(reinterpret_cast<const void*>(at));
                else
                  __builtin_prefetch(x.row(row));
              }
            }
            scored += count;
            for (int j = 0; j < count; ++j) {
              const float s = score(global ? global[fresh[j]] : fresh[j]);
              if (global)
                found.push_back({s, fresh[j]});
              if (!pool.full() || s < pool.worst())
                pool.insert(s, fresh[j]);
            }
          }
        };
        // The upper layer from its entries (a pool of upperEf), then the full graph from the
        // best ef of every node that walk scored: with a small upper pool, the entries may lie
        // in more clusters than the few nodes it ends with.
        upperPool.clear();
        found.clear();
        const std::int64_t scoredBefore = scored;
        for (int e = 0; e < entries; ++e) {
          visited->visit(sample[e]);
          found.push_back({score(sample[e]), e});
          upperPool.insert(found.back().first, e);
        }
        scored += entries;
        walk(upperPool, m_upper.data(), m_degree, sample);
        scoredUpper += scored - scoredBefore;
        pool.clear();
        for (const auto& [score, local] : found)
          if (!pool.full() || score < pool.worst())
            pool.insert(score, sample[local]);
        walk(pool, graph, degree, nullptr);
        std::int32_t* out = ids.data() + i * k;
        if (codes) { // the pool's rows re-ranked in float32
          pool.rescore(
              [&](std::int32_t row) { return workingScore(m_metric, query, x.row(row), d); });
          reranked += pool.size();
        }
        pool.emit(m_metric, k, out, dists.data() + i * k);
        if (original)
          for (int j = 0; j < k; ++j)
            out[j] = out[j] < 0 ? out[j] : original[out[j]];
      }
    }
    job.check(); // queries skipped after a stop: never return them
    job.progress(double(b1) / double(queries.rows), "graph search");
  }
  KnnResult r =
      searchResult(std::move(ids), std::move(dists), queries.rows, k, Backend::Cpu, m_context);
  r.report.detail = rowsScoredText(scored, scoredUpper, queries.rows);
  if (codes)
    r.report.detail += ", 8-bit codes, " +
                       std::to_string(reranked / std::max<std::int64_t>(1, queries.rows)) +
                       " re-ranked in float32 a query";
  return r;
}

std::vector<AnnIndex::Section> GraphIndex::sections() const {
  return {{m_graph.data(), m_graph.size() * 4},
          {m_sample.data(), m_sample.size() * 4},
          {m_upper.data(), m_upper.size() * 4}};
}

std::unique_ptr<GraphIndex> GraphIndex::load(const io::ChecksummedFile& file,
                                             const MatrixView<float>& base, Metric metric,
                                             const Context& context) {
  const nlohmann::json& build = file.header.at("build");
  std::unique_ptr<GraphIndex> index(new GraphIndex(base, metric, context));
  index->m_degree = build.at("degree").get<int>();
  index->m_buildK = build.at("build_k").get<int>();
  // The body: the graph (n × degree), the sample (S), the upper graph (S × degree).
  const std::int64_t deg = index->m_degree;
  if (deg < 1 || deg > 256 || file.bodySize % 4 != 0)
    throw FormatError("the graph index's sizes do not match its file");
  const std::int64_t cells = std::int64_t(file.bodySize / 4), graphCells = base.rows * deg;
  const std::int64_t count = (cells - graphCells) / (1 + deg);
  if (count < 1 || count > base.rows || graphCells + count * (1 + deg) != cells)
    throw FormatError("the graph index's sizes do not match its file");
  auto take = [&](std::vector<std::int32_t>& into, std::int64_t at, std::int64_t size) {
    into.resize(std::size_t(size));
    std::memcpy(into.data(), file.body + at * 4, std::size_t(size) * 4);
  };
  take(index->m_graph, 0, graphCells);
  take(index->m_sample, graphCells, count);
  take(index->m_upper, graphCells + count, count * deg);
  for (const std::int32_t id : index->m_graph)
    if (id < -1 || id >= base.rows)
      throw FormatError("the graph index holds an out-of-range id");
  for (const std::int32_t id : index->m_sample)
    if (id < 0 || id >= base.rows)
      throw FormatError("the graph index holds an out-of-range sample id");
  for (const std::int32_t id : index->m_upper)
    if (id < -1 || id >= count)
      throw FormatError("the graph index's upper layer holds an out-of-range id");
  index->m_buildSeconds = file.header.value("build_seconds", 0.0);
  index->attachDevice();
  index->reorderForCpu();
  return index;
}

} // namespace nearscape::index
