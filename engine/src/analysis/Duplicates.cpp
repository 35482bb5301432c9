#include "nearscape/analysis/Duplicates.h"

#include "analysis/AllPairsCpu.h"
#include "analysis/AnalysisDevice.h"
#include "analysis/TilePlan.h"
#include "gpu/Dispatch.h"
#include "nearscape/core/Dataset.h"
#include "nearscape/core/Error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <type_traits>

namespace nearscape {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void validate(const MatrixView<float>& data, std::int64_t minRows) {
  NEARSCAPE_EXPECTS(data.rows >= minRows && data.cols > 0,
                    "the data needs at least " + std::to_string(minRows) + " items");
  NEARSCAPE_EXPECTS(data.rows <= std::numeric_limits<std::int32_t>::max(),
                    "more than 2^31 − 1 items: ids are int32");
  requireFinite(data, "the data");
}

std::string secondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f s", seconds);
  return text;
}

/// "N of M tile pairs computed" and what the backend said.
std::string tileDetail(const NearPairs& pairs) {
  return std::to_string(pairs.tilePairs) + " of " + std::to_string(pairs.tilePairsAll) +
         " tile pairs computed" +
         (pairs.report.detail.empty() ? "" : " (" + pairs.report.detail + ")");
}

void checkThreshold(double threshold, Metric metric) {
  NEARSCAPE_EXPECTS(std::isfinite(threshold), "the threshold must be a finite number");
  NEARSCAPE_EXPECTS(metric == Metric::InnerProduct || threshold >= 0,
                    "a distance threshold cannot be negative under " +
                        std::string(metricName(metric)));
}

/// The all-pairs searches over a plan: the GPU's TileSearch, or the CPU's twins.
struct Searches {
  std::function<std::vector<std::int32_t>()> nearestInTile;
  std::function<NearPairs(double threshold)> pairsWithin;
};

/// Runs `work(searches)` on the GPU (one upload for all its searches) or the CPU, falling back
/// as gpu::onGpuOrCpu does; the fallback's reason lands in the pairs' report.
template <typename Result, typename Work>
Result onTiles(const MatrixView<float>& data, const analysis::TilePlan& plan, std::int64_t maxPairs,
               const Context& context, JobControl& job, Work&& work) {
  if (maxPairs <= 0)
    maxPairs = 100'000'000;
  std::string fallback;
  Backend ran = Backend::Cpu;
  Result result = gpu::onGpuOrCpu<gpu::AnalysisDevice>(
      context,
      [&](gpu::AnalysisDevice& gpu) {
        const std::unique_ptr<gpu::TileSearch> tiles = gpu.makeTileSearch(data, plan, context);
        Result onDevice =
            work(Searches{[&] { return tiles->nearestInTile(job); },
                          [&](double t) { return tiles->pairsWithin(t, maxPairs, job); }});
        ran = Backend::Cuda; // only once the work is done: a fallback leaves the CPU
        return onDevice;
      },
      [&] {
        return work(Searches{[&] { return analysis::tileNearestCpu(data, plan, context, job); },
                             [&](double t) {
                               return analysis::pairsWithinCpu(data, plan, t, maxPairs, context,
                                                               job);
                             }});
      },
      &fallback);
  NearPairs& pairs = [&]() -> NearPairs& {
    if constexpr (std::is_same_v<Result, NearPairs>)
      return result;
    else
      return result.pairs;
  }();
  pairs.report.fallback = fallback;
  pairs.backend = ran;
  pairs.report.setMethod(KnnMethod::RangeSearch);
  return result;
}

} // namespace

NearPairs pairsWithin(const MatrixView<float>& data, double threshold, Metric metric,
                      const Context& context, JobControl& job, const DuplicateParams& params) {
  const auto started = Clock::now();
  validate(data, 1);
  checkThreshold(threshold, metric);
  const analysis::TilePlan plan = analysis::makeTilePlan(data, metric, params, context, job);
  const double planned = since(started);
  NearPairs result =
      onTiles<NearPairs>(data, plan, params.maxPairs, context, job,
                         [&](const Searches& s) { return s.pairsWithin(threshold); });
  result.report.detail = tileDetail(result) + "; tiles planned in " + secondsText(planned);
  result.seconds = since(started);
  job.progress(1.0, "done");
  return result;
}

QuantilePairs pairsWithinQuantile(const MatrixView<float>& data, double q, Metric metric,
                                  const Context& context, JobControl& job,
                                  const DuplicateParams& params) {
  const auto started = Clock::now();
  validate(data, 2);
  NEARSCAPE_EXPECTS(q >= 0 && q <= 1, "a quantile lies in [0, 1]");
  const std::int64_t n = data.rows;
  const analysis::TilePlan plan = analysis::makeTilePlan(data, metric, params, context, job);
  const double planned = since(started);
  double bounded = 0;
  QuantilePairs result =
      onTiles<QuantilePairs>(data, plan, params.maxPairs, context, job, [&](const Searches& s) {
        const double tilesReady = since(started);
        const std::vector<std::int32_t> inTile = s.nearestInTile();
        const double nearestFound = since(started);
        // Upper bounds: the exact distance to the nearest of the same tile (an item alone in its
        // tile takes any other item).
        std::vector<double> bound(static_cast<std::size_t>(n));
#pragma omp parallel for num_threads(effectiveThreads(context)) schedule(static)
        for (std::int64_t m = 0; m < n; ++m) {
          const std::int32_t other = plan.order[inTile[m] >= 0 ? inTile[m] : (m + 1) % n];
          bound[plan.order[m]] =
              exactDistance(data.row(plan.order[m]), data.row(other), data.cols, metric);
        }
        job.check();
        // Order statistic r of the bounds is ≥ that of the true distances, so the r + 1 smallest
        // true distances lie within it; the quantile needs ranks ⌊q(n − 1)⌋ and the one after.
        const std::int64_t rank =
            std::min<std::int64_t>(n - 1, std::int64_t(std::ceil(q * double(n - 1))) + 1);
        std::nth_element(bound.begin(), bound.begin() + rank, bound.end());
        QuantilePairs found;
        found.reach = bound[std::size_t(rank)];
        bounded = since(started);
        logMessage(context, LogLevel::Debug,
                   "quantile bounds: search ready at " + std::to_string(tilesReady) +
                       " s, nearest in tile " + std::to_string(nearestFound - tilesReady) +
                       " s, bounds and their order statistic " +
                       std::to_string(bounded - nearestFound) + " s");
        found.pairs = s.pairsWithin(found.reach);
        return found;
      });
  result.nearest.assign(static_cast<std::size_t>(n), std::numeric_limits<double>::infinity());
  for (const NearPair& p : result.pairs.pairs) {
    result.nearest[p.a] = std::min(result.nearest[p.a], p.distance);
    result.nearest[p.b] = std::min(result.nearest[p.b], p.distance);
  }
  const std::optional<double> threshold = knownQuantile(result.nearest, q);
  if (!threshold) // cannot happen: the reach holds the ranks by construction
    throw Error("the nearest-neighbour quantile's ranks were not all within reach");
  result.pairs.threshold = *threshold;
  result.pairs.report.detail = tileDetail(result.pairs) + "; tiles planned in " +
                               secondsText(planned) + ", upper bounds in " +
                               secondsText(bounded - planned) + ", range search in " +
                               secondsText(since(started) - bounded);
  result.pairs.seconds = since(started);
  job.progress(1.0, "done");
  return result;
}

std::optional<double> knownQuantile(const std::vector<double>& nearest, double q) {
  const double value = quantile(nearest, q);
  if (!std::isfinite(value))
    return std::nullopt;
  return value;
}

double quantile(std::vector<double> values, double q) {
  NEARSCAPE_EXPECTS(!values.empty(), "a quantile of no values");
  NEARSCAPE_EXPECTS(q >= 0 && q <= 1, "a quantile lies in [0, 1]");
  std::sort(values.begin(), values.end());
  const double position = q * double(values.size() - 1);
  const std::size_t below = std::size_t(std::floor(position));
  const std::size_t above = std::min(values.size() - 1, below + 1);
  const double t = position - double(below);
  // NumPy's lerp, to the bit: from the nearer end, so that t = 0 and t = 1 give the values.
  const double a = values[below], b = values[above], diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

std::int64_t DuplicateGroups::itemsInGroups() const {
  std::int64_t items = 0;
  for (const auto& g : groups)
    items += std::int64_t(g.size());
  return items;
}

std::int64_t DuplicateGroups::redundantItems() const {
  return itemsInGroups() - std::int64_t(groups.size());
}

DuplicateGroups groupPairs(std::int64_t items, const std::vector<NearPair>& pairs,
                           double threshold) {
  // Union-find with path halving; the root is always the smaller id, so components come out
  // keyed by their first member.
  std::vector<std::int32_t> parent(static_cast<std::size_t>(items));
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](std::int32_t x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const NearPair& p : pairs) {
    NEARSCAPE_EXPECTS(p.a >= 0 && p.b >= 0 && p.a < items && p.b < items,
                      "a pair names an item beyond the data");
    if (double(p.distance) > threshold)
      continue;
    const std::int32_t ra = root(p.a), rb = root(p.b);
    if (ra != rb)
      parent[std::max(ra, rb)] = std::min(ra, rb);
  }
  std::vector<std::int32_t> size(static_cast<std::size_t>(items), 0);
  for (std::int32_t i = 0; i < items; ++i)
    ++size[root(i)];
  std::vector<std::int32_t> roots;
  for (std::int32_t i = 0; i < items; ++i)
    if (parent[i] == i && size[i] >= 2)
      roots.push_back(i);
  std::stable_sort(roots.begin(), roots.end(),
                   [&](std::int32_t a, std::int32_t b) { return size[a] > size[b]; });
  std::vector<std::int32_t> slot(static_cast<std::size_t>(items), -1);
  DuplicateGroups out;
  out.groups.resize(roots.size());
  for (std::size_t g = 0; g < roots.size(); ++g) {
    slot[roots[g]] = std::int32_t(g);
    out.groups[g].reserve(std::size_t(size[roots[g]]));
  }
  out.groupOf.assign(static_cast<std::size_t>(items), -1);
  for (std::int32_t i = 0; i < items; ++i) {
    const std::int32_t g = slot[root(i)];
    if (g >= 0) {
      out.groupOf[i] = g;
      out.groups[g].push_back(i); // ascending: i runs in order
    }
  }
  return out;
}

} // namespace nearscape
