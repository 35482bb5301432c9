#include "index/SearchGraph.h"

#include "gpu/Dispatch.h"
#include "index/IndexDevice.h"
#include "nearscape/core/Log.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <utility>

namespace nearscape::index {

std::vector<std::int32_t> pruneByDetoursCpu(const MatrixView<std::int32_t>& knn, int degree,
                                            int threads) {
  const std::int64_t n = knn.rows;
  const int K = int(knn.cols);
  std::vector<std::int32_t> pruned(std::size_t(n) * std::size_t(degree), -1);
#pragma omp parallel num_threads(threads)
  {
    std::vector<std::pair<std::int32_t, int>> rankOf; // (id, rank) sorted by id
    std::vector<int> detours(static_cast<std::size_t>(K)), order;
#pragma omp for schedule(dynamic, 256)
    for (std::int64_t x = 0; x < n; ++x) {
      const std::int32_t* list = knn.row(x);
      rankOf.clear();
      for (int j = 0; j < K; ++j)
        if (list[j] >= 0 && list[j] != x)
          rankOf.push_back({list[j], j});
      std::sort(rankOf.begin(), rankOf.end());
      rankOf.erase(std::unique(rankOf.begin(), rankOf.end(),
                               [](auto& a, auto& b) { return a.first == b.first; }),
                   rankOf.end());
      std::fill(detours.begin(), detours.end(), 0);
      for (int i = 0; i < K; ++i) {
        const std::int32_t y = list[i];
        if (y < 0 || y == x)
          continue;
        const std::int32_t* via = knn.row(y);
        for (int p = 0; p < K; ++p) {
          const auto it = std::lower_bound(rankOf.begin(), rankOf.end(),
                                           std::pair<std::int32_t, int>{via[p], -1});
          if (it != rankOf.end() && it->first == via[p] && it->second > std::max(i, p))
            ++detours[std::size_t(it->second)];
        }
      }
      order.clear();
      for (const auto& [id, rank] : rankOf)
        order.push_back(rank);
      std::sort(order.begin(), order.end(), [&](int a, int b) {
        return detours[std::size_t(a)] != detours[std::size_t(b)]
                   ? detours[std::size_t(a)] < detours[std::size_t(b)]
                   : a < b;
      });
      const int keep = std::min<int>(degree, int(order.size()));
      for (int j = 0; j < keep; ++j)
        pruned[std::size_t(x) * std::size_t(degree) + std::size_t(j)] = list[order[std::size_t(j)]];
    }
  }
  return pruned;
}

std::vector<std::int32_t> optimiseSearchGraph(const MatrixView<std::int32_t>& knn, int degree,
                                              const Context& context) {
  // On the device where there is one: 1M × 96 lists took 33.8 s on 16 host cores for step 1
  // alone, and steps 2–3 another 1.2 s.
  LogLaps lap(context, "search graph:");
  std::vector<std::int32_t> graph = gpu::onGpuOrCpu<gpu::IndexDevice>(
      context, [&](gpu::IndexDevice& gpu) { return gpu.optimiseSearchGraph(knn, degree, context); },
      [&] { return optimiseSearchGraphCpu(knn, degree, effectiveThreads(context)); });
  lap("optimised");
  return graph;
}

std::vector<std::int32_t> optimiseSearchGraphCpu(const MatrixView<std::int32_t>& knn, int degree,
                                                 int threads) {
  const std::int64_t n = knn.rows;
  const std::size_t deg = std::size_t(degree);
  const std::vector<std::int32_t> pruned = pruneByDetoursCpu(knn, degree, threads);

  // Step 2: reverse edges grouped by target (a counting sort on every core; each group is
  // sorted by its (rank, source) keys next, so the order of filling does not matter).
  std::vector<std::int64_t> offsets(std::size_t(n) + 1, 0);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t e = 0; e < std::int64_t(pruned.size()); ++e)
    if (const std::int32_t y = pruned[std::size_t(e)]; y >= 0)
      std::atomic_ref(offsets[std::size_t(y) + 1]).fetch_add(1, std::memory_order_relaxed);
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  std::vector<std::uint64_t> reverse(std::size_t(offsets.back()));
  {
    std::vector<std::int64_t> fill(offsets.begin(), offsets.end() - 1);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t x = 0; x < n; ++x)
      for (std::size_t r = 0; r < deg; ++r) {
        const std::int32_t y = pruned[std::size_t(x) * deg + r];
        if (y >= 0)
          reverse[std::size_t(std::atomic_ref(fill[std::size_t(y)]).fetch_add(1))] =
              (std::uint64_t(r) << 32) | std::uint64_t(x);
      }
  }

  // Step 3: merge.
  std::vector<std::int32_t> out(std::size_t(n) * deg, -1);
  const std::size_t half = deg / 2;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 256)
  for (std::int64_t y = 0; y < n; ++y) {
    std::uint64_t* rb = reverse.data() + offsets[std::size_t(y)];
    std::uint64_t* re = reverse.data() + offsets[std::size_t(y) + 1];
    std::sort(rb, re);
    const std::int32_t* kept = pruned.data() + std::size_t(y) * deg;
    std::int32_t* row = out.data() + std::size_t(y) * deg;
    std::size_t size = 0;
    auto add = [&](std::int32_t id) {
      if (id < 0 || id == y || size == deg || std::find(row, row + size, id) != row + size)
        return;
      row[size++] = id;
    };
    for (std::size_t j = 0; j < half; ++j)
      add(kept[j]);
    for (std::uint64_t* r = rb; r != re && size < deg; ++r)
      add(std::int32_t(*r & 0xffffffffu));
    for (std::size_t j = half; j < deg && size < deg; ++j)
      add(kept[j]);
  }
  return out;
}

} // namespace nearscape::index

namespace nearscape::index {

void addLongRangeEdges(std::vector<std::int32_t>& graph, int degree,
                       const std::vector<std::int32_t>& sample,
                       const std::vector<std::int32_t>& sampleGraph, int sampleDegree) {
  const std::size_t deg = std::size_t(degree);
  std::vector<std::int32_t> merged(deg);
  for (std::size_t s = 0; s < sample.size(); ++s) {
    std::int32_t* row = graph.data() + std::size_t(sample[s]) * deg;
    std::size_t size = 0;
    auto add = [&](std::int32_t id) {
      if (id >= 0 && id != sample[s] && size < deg &&
          std::find(merged.begin(), merged.begin() + std::ptrdiff_t(size), id) ==
              merged.begin() + std::ptrdiff_t(size))
        merged[size++] = id;
    };
    const std::size_t own = deg - std::min<std::size_t>(deg / 2, std::size_t(sampleDegree));
    for (std::size_t j = 0; j < own; ++j)
      add(row[j]);
    for (int j = 0; j < sampleDegree; ++j) {
      const std::int32_t local = sampleGraph[s * std::size_t(sampleDegree) + std::size_t(j)];
      if (local >= 0)
        add(sample[std::size_t(local)]);
    }
    for (std::size_t j = own; j < deg; ++j)
      add(row[j]);
    std::fill(merged.begin() + std::ptrdiff_t(size), merged.end(), -1);
    std::copy(merged.begin(), merged.end(), row);
  }
}

} // namespace nearscape::index
