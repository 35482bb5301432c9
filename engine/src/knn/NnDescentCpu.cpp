// NN-Descent on the CPU. Each node keeps a bounded max-heap of its k best (distance, id, NEW
// flag). An iteration samples up to s NEW and s OLD neighbours per node, adds reverse samples,
// and joins every NEW×NEW and NEW×OLD pair of each node's lists (GNND §4.1–4.2: sampling into
// fixed-size lists, reverse samples, cross-matching). Nodes are processed in fixed chunks: the
// joins of a chunk read the heaps as they stand, their updates are sorted and applied after the
// chunk — so the result depends on the seed alone, not on the number of threads.
#include "knn/NnDescentCpu.h"

#include "knn/ExactCommon.h"
#include "knn/JoinDistances.h"
#include "knn/NnDescentLoop.h"
#include "nearscape/core/Dataset.h"
#include "nearscape/core/Error.h"
#include "util/Hash.h"
#include "util/VectorDistance.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <parallel/algorithm>

#include <omp.h>

namespace nearscape::knn {
namespace {

/// The k best of one node, a max-heap on (distance, id): the worst on top.
struct Entry {
  float dist;
  std::int32_t id;
  bool fresh; // NEW: not yet joined
  bool operator<(const Entry& o) const { return dist < o.dist || (dist == o.dist && id < o.id); }
};

struct Update {
  std::int32_t target, id;
  float dist;
  bool operator<(const Update& o) const {
    return target != o.target ? target < o.target : dist != o.dist ? dist < o.dist : id < o.id;
  }
};

class Graph {
public:
  Graph(std::int64_t n, int k)
      : m_k(k), m_entries(static_cast<std::size_t>(n * k)), m_size(static_cast<std::size_t>(n), 0) {
  }
  Entry* row(std::int64_t i) { return &m_entries[std::size_t(i * m_k)]; }
  int size(std::int64_t i) const { return m_size[std::size_t(i)]; }
  float worst(std::int64_t i) const {
    return m_size[std::size_t(i)] < m_k ? std::numeric_limits<float>::infinity()
                                        : m_entries[std::size_t(i * m_k)].dist;
  }
  /// Inserts (dist, id) as NEW if it beats the worst and is not already listed.
  bool insert(std::int64_t i, float dist, std::int32_t id) {
    Entry* r = row(i);
    int& size = m_size[std::size_t(i)];
    const Entry e{dist, id, true};
    if (size == m_k && !(e < r[0]))
      return false;
    for (int c = 0; c < size; ++c)
      if (r[c].id == id)
        return false;
    if (size < m_k) {
      r[size++] = e;
      std::push_heap(r, r + size);
    } else {
      std::pop_heap(r, r + size);
      r[size - 1] = e;
      std::push_heap(r, r + size);
    }
    return true;
  }

private:
  int m_k;
  std::vector<Entry> m_entries;
  std::vector<int> m_size;
};

} // namespace

void validateGraphInput(const MatrixView<float>& data, int k) {
  const std::int64_t n = data.rows;
  NEARSCAPE_EXPECTS(n >= 2, "a kNN graph needs at least two items");
  NEARSCAPE_EXPECTS(k >= 1 && k <= n - 1, "k = " + std::to_string(k) +
                                              " is out of range: it must lie in [1, " +
                                              std::to_string(n - 1) + "] (n − 1)");
  NEARSCAPE_EXPECTS(n <= std::numeric_limits<std::int32_t>::max(), "more than 2^31 − 1 items");
  requireFinite(data, "the data");
}

KnnResult nnDescentCpu(const MatrixView<float>& data, int k, Metric metric, const Context& context,
                       JobControl& job, const NnDescentParams& params,
                       const NnDescentProgress& progress, const MatrixView<std::int32_t>* initial,
                       std::int64_t split) {
  const auto started = std::chrono::steady_clock::now();
  const std::int64_t n = data.rows, d = data.cols;
  validateGraphInput(data, k);
  const int threads = effectiveThreads(context);
  const int s = params.sampleSize > 0 ? params.sampleSize : 2 * k;
  const std::uint64_t seed = context.seed;

  // Cosine works on normalised copies (its order is L2's there); L2 and inner product on the data.
  std::vector<float> normalised;
  const float* x = data.data;
  if (metric == Metric::Cosine) {
    normalised.resize(data.size());
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      double s2 = 0;
      for (std::int64_t j = 0; j < d; ++j)
        s2 += double(data.row(i)[j]) * data.row(i)[j];
      const double inv = s2 > 0 ? 1.0 / std::sqrt(s2) : 0.0;
      for (std::int64_t j = 0; j < d; ++j)
        normalised[std::size_t(i * d + j)] = float(data.row(i)[j] * inv);
    }
    x = normalised.data();
  }
  auto distance = [&](std::int64_t a, std::int64_t b) {
    return metric == Metric::InnerProduct ? -simd::dot(x + a * d, x + b * d, d)
                                          : simd::l2Squared(x + a * d, x + b * d, d);
  };

  // Random initial neighbours (distinct, never itself), or the given graphs' (marked OLD).
  Graph graph(n, k);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 256)
  for (std::int64_t i = 0; i < n; ++i) {
    if (initial) {
      for (std::int64_t c = 0; c < initial->cols; ++c) {
        const std::int32_t j = initial->row(i)[c];
        if (j >= 0 && j != i)
          graph.insert(i, distance(i, j), j);
      }
      for (int c = 0; c < graph.size(i); ++c)
        graph.row(i)[c].fresh = false;
      continue;
    }
    std::uint64_t h = mixBits(seed ^ mixBits(std::uint64_t(i)));
    int tries = 0;
    while (graph.size(i) < k && tries < 64 * k) {
      h = mixBits(h);
      const auto j = std::int64_t(h % std::uint64_t(n));
      ++tries;
      if (j != i)
        graph.insert(i, distance(i, j), std::int32_t(j));
    }
    for (std::int64_t j = 0; graph.size(i) < k; ++j) // tiny n: fill deterministically
      if (j != i)
        graph.insert(i, distance(i, j), std::int32_t(j));
  }

  std::vector<std::int32_t> newList(static_cast<std::size_t>(n * s)), oldList(newList.size());
  std::vector<int> newCount(static_cast<std::size_t>(n)), oldCount(newCount.size());
  std::vector<std::vector<std::int32_t>> newRev(static_cast<std::size_t>(n)), oldRev(newRev.size());
  // Small enough that a chunk's joins and the sort of its updates stay well under the 200 ms
  // a cancellation may take (40,000 × 96, k = 20 on 2 cores: 4,096 took up to 230 ms).
  const std::int64_t chunk = 1024;
  const auto iterate = [&](int iteration) -> std::int64_t {
    const std::uint64_t iterSeed = mixBits(seed ^ (std::uint64_t(iteration + 1) << 32));
    // 1. Sample up to s NEW (marking them OLD) and s OLD neighbours per node.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 256)
    for (std::int64_t i = 0; i < n; ++i) {
      if (job.stopRequested()) // the step's rows are skipped; the check after it throws
        continue;
      Entry* r = graph.row(i);
      const int size = graph.size(i);
      std::vector<std::pair<std::uint64_t, int>> fresh, old;
      for (int c = 0; c < size; ++c)
        (r[c].fresh ? fresh : old)
            .push_back(
                {mixBits(iterSeed ^ mixBits(std::uint64_t(r[c].id) ^ (std::uint64_t(i) << 31))),
                 c});
      std::sort(fresh.begin(), fresh.end());
      std::sort(old.begin(), old.end());
      int nc = 0, oc = 0;
      for (const auto& [h, c] : fresh)
        if (nc < s) {
          newList[std::size_t(i * s + nc++)] = r[c].id;
          r[c].fresh = false;
        }
      for (const auto& [h, c] : old)
        if (oc < s)
          oldList[std::size_t(i * s + oc++)] = r[c].id;
      if (initial && iteration == 0) { // GGM: the first NEW samples come from the other part
        const std::int64_t lo = i < split ? split : 0, hi = i < split ? n : split;
        std::uint64_t h = mixBits(iterSeed ^ mixBits(std::uint64_t(i) + 0x51ed));
        nc = 0;
        for (int c = 0; c < s && hi > lo; ++c) {
          h = mixBits(h);
          newList[std::size_t(i * s + nc++)] =
              std::int32_t(lo + std::int64_t(h % std::uint64_t(hi - lo)));
        }
      }
      newCount[i] = nc;
      oldCount[i] = oc;
    }
    // A stop is seen between the steps too: under ASan each takes a large part of 200 ms.
    job.check();
    // 2. Reverse samples: j learns of i when i sampled j; each keeps s of them by hash order.
    for (std::int64_t i = 0; i < n; ++i) {
      newRev[i].clear();
      oldRev[i].clear();
    }
    for (std::int64_t i = 0; i < n; ++i) {
      if (i % 4096 == 0) // one thread: with wide samples (a graph index's k = 64) the step alone
        job.check();     // took 200 ms under ASan
      for (int c = 0; c < newCount[i]; ++c)
        newRev[newList[std::size_t(i * s + c)]].push_back(std::int32_t(i));
      for (int c = 0; c < oldCount[i]; ++c)
        oldRev[oldList[std::size_t(i * s + c)]].push_back(std::int32_t(i));
    }
    job.check();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 256)
    for (std::int64_t j = 0; j < n; ++j)
      for (auto* rev : {&newRev[j], &oldRev[j]})
        if (int(rev->size()) > s && !job.stopRequested()) {
          std::partial_sort(
              rev->begin(), rev->begin() + s, rev->end(), [&](std::int32_t a, std::int32_t b) {
                return mixBits(iterSeed ^ std::uint64_t(a) ^ (std::uint64_t(j) << 32)) <
                       mixBits(iterSeed ^ std::uint64_t(b) ^ (std::uint64_t(j) << 32));
              });
          rev->resize(std::size_t(s));
        }
    // 3. Local joins, chunk by chunk; 4. sorted updates applied after each chunk.
    std::int64_t changed = 0;
    for (std::int64_t c0 = 0; c0 < n; c0 += chunk) {
      job.check();
      const std::int64_t c1 = std::min(n, c0 + chunk);
      std::vector<std::vector<Update>> buffers(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
      {
        std::vector<Update>& out = buffers[std::size_t(omp_get_thread_num())];
        std::vector<std::int32_t> fresh, old, both;
        std::vector<float> scores;
        JoinDistances join(x, d, metric);
#pragma omp for schedule(dynamic, 64)
        for (std::int64_t v = c0; v < c1; ++v) {
          if (job.stopRequested()) // a chunk's joins last a fraction of a second: stop within
            continue;
          fresh.assign(newList.begin() + v * s, newList.begin() + v * s + newCount[v]);
          fresh.insert(fresh.end(), newRev[v].begin(), newRev[v].end());
          std::sort(fresh.begin(), fresh.end());
          fresh.erase(std::unique(fresh.begin(), fresh.end()), fresh.end());
          old.assign(oldList.begin() + v * s, oldList.begin() + v * s + oldCount[v]);
          old.insert(old.end(), oldRev[v].begin(), oldRev[v].end());
          std::sort(old.begin(), old.end());
          old.erase(std::unique(old.begin(), old.end()), old.end());
          // Every NEW×NEW pair once and every NEW×OLD pair: rows NEW, columns NEW then OLD.
          both.assign(fresh.begin(), fresh.end());
          both.insert(both.end(), old.begin(), old.end());
          join.block(fresh, both, true, scores);
          auto tryPair = [&](std::int32_t a, std::int32_t b, float dist) {
            if (a == b)
              return;
            if (dist < graph.worst(a))
              out.push_back({a, b, dist});
            if (dist < graph.worst(b))
              out.push_back({b, a, dist});
          };
          for (std::size_t p = 0; p < fresh.size(); ++p)
            for (std::size_t q = p + 1; q < both.size(); ++q)
              tryPair(fresh[p], both[q], scores[p * both.size() + q]);
        }
      }
      job.check(); // a chunk cut short by a stop is never applied
      std::vector<Update> updates;
      for (auto& b : buffers)
        updates.insert(updates.end(), b.begin(), b.end());
      // A total order (equal updates are identical), so the parallel sort's result is the
      // serial one's: determinism whatever the thread count.
      __gnu_parallel::sort(updates.begin(), updates.end(),
                           __gnu_parallel::default_parallel_tag(threads));
      // Updates of one target are contiguous: targets are disjoint between threads.
      std::vector<std::size_t> starts;
      for (std::size_t u = 0; u < updates.size(); ++u)
        if (u == 0 || updates[u].target != updates[u - 1].target)
          starts.push_back(u);
      starts.push_back(updates.size());
      const std::int64_t groups = std::int64_t(starts.size()) - 1;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64) reduction(+ : changed)
      for (std::int64_t g = 0; g < groups; ++g)
        for (std::size_t u = starts[g]; u < starts[g + 1]; ++u)
          changed += graph.insert(updates[u].target, updates[u].dist, updates[u].id) ? 1 : 0;
    }
    return changed;
  };
  const int iteration =
      runNnDescentLoop(params.maxIterations, n * k, params, job, progress, "NN-Descent", iterate);

  // Exact float64 distances of the final lists, nearest first, ties by id.
  std::vector<std::int32_t> ids(static_cast<std::size_t>(n * k));
  std::vector<float> dists(ids.size());
#pragma omp parallel for num_threads(threads) schedule(dynamic, 256)
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<std::pair<double, std::int32_t>> row;
    for (int c = 0; c < graph.size(i); ++c)
      row.push_back({exactDistance(data.row(i), data.row(graph.row(i)[c].id), d, metric),
                     graph.row(i)[c].id});
    std::sort(row.begin(), row.end());
    for (int c = 0; c < k; ++c) {
      ids[std::size_t(i * k + c)] = row[std::size_t(c)].second;
      dists[std::size_t(i * k + c)] = float(row[std::size_t(c)].first);
    }
  }
  KnnResult result;
  result.ids = Matrix<std::int32_t>(std::move(ids), n, k);
  result.distances = Matrix<float>(std::move(dists), n, k);
  result.backend = Backend::Cpu;
  result.report.device = "CPU (" + std::to_string(threads) + " threads)";
  result.report.setMethod(initial ? KnnMethod::GgmMerge : KnnMethod::NnDescent);
  result.report.iterations = iteration;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

} // namespace nearscape::knn
