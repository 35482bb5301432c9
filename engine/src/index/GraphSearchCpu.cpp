#include "index/GraphSearchCpu.h"

#include "index/HalfRows.h"
#include "index/IndexCommon.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <memory>

namespace nearscape::index {
namespace {

/// A best-first search's candidate pool (SONG §3's bounded priority queue and top list in one
/// sorted array, as CAGRA keeps its "internal top-k"): the `capacity` best nodes seen, each
/// flagged once expanded.
class Pool {
public:
  explicit Pool(int capacity) : m_capacity(capacity) { m_items.reserve(std::size_t(capacity) + 1); }
  void clear() { m_items.clear(), m_cursor = 0; }
  bool full() const { return int(m_items.size()) == m_capacity; }
  /// The score a newcomer must beat: the worst held once full, else +inf.
  float bound() const {
    return full() ? m_items.back().score : std::numeric_limits<float>::infinity();
  }
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
  void items(std::vector<std::pair<float, std::int32_t>>& out) const {
    out.clear();
    for (const Item& i : m_items)
      out.push_back({i.score, i.id});
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

/// Scores a query against rows: the float16 copy (prepared query, early abandoning) or the
/// float32 working vectors.
struct Scorer {
  const HalfRows* half; ///< null: float32
  const float* query;   ///< prepared for `half`, else the working query
  MatrixView<float> vectors;
  Metric metric;
  int firstLines, nextLines; ///< cache lines asked for when a row is found, and before scoring

  float score(std::int32_t row, float bound) const {
    return half ? half->score(query, row, bound)
                : workingScore(metric, query, vectors.row(row), vectors.cols);
  }
  void prefetch(std::int32_t row, int lines) const {
    if (half)
      return half->prefetch(row, lines);
    const char* r = reinterpret_cast<const char*>(vectors.row(row));
    for (int l = 0; l < lines; ++l)
      __builtin_prefetch(r + 64 * l);
  }
};

/// Best-first walk of one layer from what `pool` holds; pool ids are the layer's, `global` (null
/// for the full graph) maps them to rows. A fresh neighbour's first lines are asked for when it
/// is found; the whole of the next one's while the current one is scored (a row is 25–49 lines
/// at 784-d, too many for the hardware's prefetcher to start in time on its own).
void walk(Pool& pool, Visited& visited, const Scorer& scorer, const std::int32_t* graph,
          int stride, int useDegree, const std::int32_t* global) {
  std::int32_t fresh[256], rows[256];
  for (std::int32_t node; (node = pool.next()) >= 0;) {
    const std::int32_t* edges = graph + std::size_t(node) * std::size_t(stride);
    int count = 0;
    for (int j = 0; j < useDegree; ++j) {
      const std::int32_t nb = edges[j];
      if (nb < 0)
        break;
      const std::int32_t row = global ? global[nb] : nb;
      if (visited.visit(row)) {
        fresh[count] = nb, rows[count++] = row;
        scorer.prefetch(row, scorer.firstLines);
      }
    }
    for (int j = 0; j < count; ++j) {
      if (j + 1 < count)
        scorer.prefetch(rows[j + 1], scorer.nextLines);
      const float s = scorer.score(rows[j], pool.bound());
      if (!pool.full() || s < pool.bound())
        pool.insert(s, fresh[j]);
    }
  }
}

} // namespace

void searchGraphCpu(const GraphLayers& layers, const MatrixView<float>& queries, int k, int ef,
                    int degree, int entries, int threads, JobControl& job, std::int32_t* ids,
                    float* distances) {
  const MatrixView<float> x = layers.vectors;
  const std::vector<std::int32_t>& sample = *layers.sample;
  const std::int64_t dPad = layers.half ? layers.half->paddedDim() : 0;
  const int f32Lines = int((x.cols * 4 + 63) / 64);
  constexpr std::int64_t kBatch = 2048; // queries between cancellation checks
  for (std::int64_t b0 = 0; b0 < queries.rows; b0 += kBatch) {
    job.check();
    const std::int64_t b1 = std::min(queries.rows, b0 + kBatch);
#pragma omp parallel num_threads(int(std::min <std::int64_t>(threads, b1 - b0)))
    {
      thread_local std::unique_ptr<Visited> visited;
      thread_local std::int64_t visitedSize = -1;
      if (visitedSize != x.rows)
        visited = std::make_unique<Visited>(x.rows), visitedSize = x.rows;
      Pool pool(ef);
      std::vector<std::pair<float, std::int32_t>> found;
      std::unique_ptr<float, decltype(&std::free)> prepared(
          static_cast<float*>(dPad ? std::aligned_alloc(64, std::size_t(dPad) * 4) : nullptr),
          &std::free);
#pragma omp for schedule(dynamic, 8)
      for (std::int64_t i = b0; i < b1; ++i) {
        if (job.stopRequested()) // a batch at a large ef lasts seconds: stop within it
          continue;
        const float* query = queries.row(i);
        const bool onHalf = prepared && layers.half->prepareQuery(query, prepared.get());
        const Scorer scorer{onHalf ? layers.half : nullptr,
                            onHalf ? prepared.get() : query,
                            x,
                            layers.metric,
                            1,
                            onHalf ? layers.half->lines() : f32Lines};
        visited->nextQuery();
        // The upper layer from its entries, then the full graph from what it found.
        pool.clear();
        for (int e = 0; e < entries; ++e) {
          visited->visit(sample[std::size_t(e)]);
          pool.insert(scorer.score(sample[std::size_t(e)], std::numeric_limits<float>::infinity()),
                      e);
        }
        walk(pool, *visited, scorer, layers.upper->data(), layers.stride, layers.stride,
             sample.data());
        pool.items(found);
        pool.clear();
        for (const auto& [score, local] : found)
          pool.insert(score, sample[std::size_t(local)]);
        walk(pool, *visited, scorer, layers.graph, layers.stride, degree, nullptr);
        pool.items(found);
        // The float16 walk's scores are near, not equal, to float32's: the pool scored again.
        if (onHalf) {
          const Scorer exact{nullptr, query, x, layers.metric, 0, 0};
          for (std::size_t j = 0; j < found.size(); ++j) {
            if (j + 1 < found.size())
              exact.prefetch(found[j + 1].second, f32Lines);
            found[j].first = exact.score(found[j].second, 0);
          }
          std::sort(found.begin(), found.end());
        }
        for (int j = 0; j < k; ++j) {
          const bool has = j < int(found.size());
          ids[i * k + j] = has ? found[std::size_t(j)].second : -1;
          distances[i * k + j] = has ? reportedDistance(layers.metric, found[std::size_t(j)].first)
                                     : std::numeric_limits<float>::infinity();
        }
      }
    }
    job.check(); // queries skipped after a stop: never return them
    job.progress(double(b1) / double(queries.rows), "graph search");
  }
}

} // namespace nearscape::index
