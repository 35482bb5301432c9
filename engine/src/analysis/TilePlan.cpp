#include "analysis/TilePlan.h"

#include "nearscape/core/Error.h"
#include "nearscape/core/Log.h"
#include "nearscape/layout/Pca.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <parallel/algorithm>

#include <omp.h>

namespace nearscape::analysis {
namespace {

constexpr std::int64_t kPcaSample = 20000; // rows the axes are fitted on
/// The projection's own distortion: float axes are orthonormal to within about √m·u.
constexpr double kGapShrink = 1.0 + 1e-5;

/// Principal axes (dims × d, float) of a spread sample of the packed rows.
std::vector<float> fitAxes(const MatrixView<float>& data, const knn::Packing& packing, int dims,
                           const Context& context, JobControl& job) {
  const std::int64_t n = data.rows, d = data.cols;
  const std::int64_t rows = std::min(n, kPcaSample);
  std::vector<float> sample(static_cast<std::size_t>(rows * d));
  float norm = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t i = r * n / rows;
    packing.pack(data, i, i + 1, sample.data() + r * d, &norm);
  }
  PcaParams params;
  params.components = dims;
  const PcaResult pca = computePca(MatrixView<float>{sample.data(), rows, d}, params, context, job);
  return std::vector<float>(pca.axes.begin(), pca.axes.end());
}

/// The k-d split's shape: node n covers places [begin, end) of the order; its children split
/// at `mid`, a multiple of tileRows from `begin` near the middle, so that every tile but the
/// last is full. Preorder: children after their parent, the left subtree's tiles first.
void shape(TilePlan& plan, std::int64_t begin, std::int64_t end, std::int64_t tileRows) {
  const std::int32_t self = std::int32_t(plan.nodes.size());
  plan.nodes.push_back({begin, end, -1, -1, -1});
  if (end - begin <= tileRows) {
    plan.nodes[self].tile = std::int32_t(plan.start.size() - 1);
    plan.start.push_back(end);
    return;
  }
  const std::int64_t tilesHere = (end - begin + tileRows - 1) / tileRows;
  const std::int64_t mid = begin + (tilesHere + 1) / 2 * tileRows;
  plan.nodes[self].left = std::int32_t(plan.nodes.size());
  shape(plan, begin, mid, tileRows);
  plan.nodes[self].right = std::int32_t(plan.nodes.size());
  shape(plan, mid, end, tileRows);
}

/// A member's key along the split's coordinate, with its id: the split orders (key, id) pairs
/// gathered into one contiguous array instead of chasing each id's projection row.
struct Keyed {
  float key;
  std::int32_t id;
  bool operator<(const Keyed& o) const { return key < o.key || (key == o.key && id < o.id); }
};

/// Nodes above this many places are split with all threads (the top of the tree, where the
/// recursion's tasks are still few); below it, each node is one task.
constexpr std::int64_t kParallelNode = std::int64_t(1) << 18;

/// Orders the places of `node` so that its left child holds those smallest along its widest
/// projected coordinate. `parallel`: with all threads (a node near the top, split outside any
/// parallel region); else on the calling thread.
void splitNode(TilePlan& plan, const std::vector<float>& proj, std::int32_t node, int threads,
               bool parallel) {
  const TilePlan::Node here = plan.nodes[node];
  const int dims = plan.dims;
  const std::int64_t size = here.end - here.begin;
  // The widest coordinate: one pass over the members' projection rows (a row is one cache line
  // at 16 directions).
  std::vector<float> lo(static_cast<std::size_t>(dims), std::numeric_limits<float>::infinity());
  std::vector<float> hi(static_cast<std::size_t>(dims), -std::numeric_limits<float>::infinity());
  float* l = lo.data();
  float* h = hi.data();
#pragma omp parallel for if (parallel) num_threads(threads) schedule(static) reduction(min         \
                                                                                       : l[:dims]) \
    reduction(max                                                                                  \
              : h[:dims])
  for (std::int64_t m = here.begin; m < here.end; ++m) {
    const float* row = proj.data() + std::size_t(plan.order[m]) * dims;
    for (int c = 0; c < dims; ++c) {
      l[c] = std::min(l[c], row[c]);
      h[c] = std::max(h[c], row[c]);
    }
  }
  int widest = 0;
  for (int c = 1; c < dims; ++c)
    if (h[c] - l[c] > h[widest] - l[widest])
      widest = c;
  std::vector<Keyed> keyed(static_cast<std::size_t>(size));
#pragma omp parallel for if (parallel) num_threads(threads) schedule(static)
  for (std::int64_t m = here.begin; m < here.end; ++m) {
    const std::int32_t id = plan.order[m];
    keyed[std::size_t(m - here.begin)] = {proj[std::size_t(id) * dims + widest], id};
  }
  const std::int64_t mid = plan.nodes[here.right].begin - here.begin;
  if (parallel)
    __gnu_parallel::nth_element(keyed.begin(), keyed.begin() + mid, keyed.end(),
                                std::less<Keyed>());
  else
    std::nth_element(keyed.begin(), keyed.begin() + mid, keyed.end());
#pragma omp parallel for if (parallel) num_threads(threads) schedule(static)
  for (std::int64_t m = here.begin; m < here.end; ++m)
    plan.order[m] = keyed[std::size_t(m - here.begin)].id;
}

/// Splits `node` and, as tasks, everything under it.
void partitionTasks(TilePlan& plan, const std::vector<float>& proj, std::int32_t node) {
  const TilePlan::Node here = plan.nodes[node];
  if (here.left < 0)
    return;
  splitNode(plan, proj, node, 1, false);
  const bool task = here.end - here.begin > 65536; // tasks only where they pay
  // shared: a task would otherwise take its own copy of a reference's object (firstprivate).
#pragma omp task if (task) shared(plan, proj)
  partitionTasks(plan, proj, here.left);
#pragma omp task if (task) shared(plan, proj)
  partitionTasks(plan, proj, here.right);
#pragma omp taskwait
}

/// The whole k-d split: the nodes above kParallelNode places one at a time with all threads
/// (the top of the tree has too few nodes for tasks), the rest as tasks.
void partition(TilePlan& plan, const std::vector<float>& proj, int threads) {
  std::vector<std::int32_t> frontier{0}, below;
  while (!frontier.empty()) {
    std::vector<std::int32_t> next;
    for (const std::int32_t node : frontier) {
      const TilePlan::Node& here = plan.nodes[node];
      if (here.left < 0)
        continue;
      if (here.end - here.begin <= kParallelNode) {
        below.push_back(node);
        continue;
      }
      splitNode(plan, proj, node, threads, true);
      next.push_back(here.left);
      next.push_back(here.right);
    }
    frontier = std::move(next);
  }
#pragma omp parallel num_threads(threads)
#pragma omp single
  for (const std::int32_t node : below) {
#pragma omp task shared(plan, proj)
    partitionTasks(plan, proj, node);
  }
}

} // namespace

double approxUnits(Metric metric, double threshold) {
  return metric == Metric::L2 ? threshold * threshold : threshold;
}

double TilePlan::gap(std::int32_t a, std::int32_t b) const {
  double s = 0;
  const double* la = lo.data() + std::int64_t(a) * dims;
  const double* ha = hi.data() + std::int64_t(a) * dims;
  const double* lb = lo.data() + std::int64_t(b) * dims;
  const double* hb = hi.data() + std::int64_t(b) * dims;
  for (int c = 0; c < dims; ++c) {
    const double g = std::max({0.0, lb[c] - ha[c], la[c] - hb[c]});
    s += g * g;
  }
  return std::sqrt(s) / kGapShrink;
}

double TilePlan::approxLowerBound(std::int32_t a, std::int32_t b) const {
  if (dims == 0)
    return -std::numeric_limits<double>::infinity();
  const double g = gap(a, b);
  // Cosine: ‖x̂ − ŷ‖²/2 = 1 − cos for non-zero rows; a zero row has 1 − cos = 1 ≥ ‖x̂ − ŷ‖²/2.
  return metric == Metric::L2 ? g * g : g * g / 2;
}

std::vector<TilePair> TilePlan::pairsBelow(double limit, int threads) const {
  // Dual-tree descent from (root, root): a pair of nodes whose boxes lie beyond `limit` is
  // dropped with every pair of tiles under it; the larger node of a pair is split first.
  // Pruned against at least 0: under cosine, float64 rounding can put parallel rows at
  // 1 − cos ≈ −2e−16, a negative limit (a quantile's reach) that no box bound (≥ 0) would meet.
  const double reach = std::max(limit, 0.0);
  struct Visit {
    std::int32_t a, b;
  };
  // One step: a visit's pair of tiles into `out`, or its children's visits onto `stack`.
  auto step = [&](const Visit& v, std::vector<Visit>& stack, std::vector<TilePair>& out) {
    const double bound = approxLowerBound(v.a, v.b);
    if (bound > reach)
      return;
    const Node& a = nodes[v.a];
    const Node& b = nodes[v.b];
    if (a.tile >= 0 && b.tile >= 0) {
      out.push_back({bound, std::min(a.tile, b.tile), std::max(a.tile, b.tile)});
    } else if (v.a == v.b) {
      stack.push_back({a.left, a.left});
      stack.push_back({a.left, a.right});
      stack.push_back({a.right, a.right});
    } else if (b.tile >= 0 || (a.tile < 0 && a.end - a.begin >= b.end - b.begin)) {
      stack.push_back({a.left, v.b});
      stack.push_back({a.right, v.b});
    } else {
      stack.push_back({v.a, b.left});
      stack.push_back({v.a, b.right});
    }
  };
  // Breadth first until there are visits enough to share among the threads; then each visit's
  // subtree depth first on one thread.
  threads = std::max(1, threads);
  std::vector<TilePair> out;
  std::vector<Visit> frontier{{0, 0}};
  while (!frontier.empty() && frontier.size() < std::size_t(threads) * 64) {
    std::vector<Visit> next;
    for (const Visit& v : frontier)
      step(v, next, out);
    frontier = std::move(next);
  }
  std::vector<std::vector<TilePair>> found(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    std::vector<TilePair>& mine = found[std::size_t(omp_get_thread_num())];
    std::vector<Visit> stack;
#pragma omp for schedule(dynamic, 1)
    for (std::size_t i = 0; i < frontier.size(); ++i) {
      stack.assign(1, frontier[i]);
      while (!stack.empty()) {
        const Visit v = stack.back();
        stack.pop_back();
        step(v, stack, mine);
      }
    }
  }
  for (const auto& part : found)
    out.insert(out.end(), part.begin(), part.end());
  const auto byTiles = [](const TilePair& x, const TilePair& y) {
    return x.a < y.a || (x.a == y.a && x.b < y.b);
  };
  if (out.size() > (std::size_t(1) << 20) && threads > 1)
    __gnu_parallel::sort(out.begin(), out.end(), byTiles,
                         __gnu_parallel::default_parallel_tag(threads));
  else
    std::sort(out.begin(), out.end(), byTiles);
  return out;
}

void TilePlan::packTile(const MatrixView<float>& data, std::int64_t tile, float* out) const {
  float norm = 0;
  for (std::int64_t m = start[tile]; m < start[tile + 1]; ++m)
    packing.pack(data, order[m], order[m] + 1, out + (m - start[tile]) * data.cols, &norm);
}

TilePlan makeTilePlan(const MatrixView<float>& data, Metric metric, const DuplicateParams& params,
                      const Context& context, JobControl& job) {
  NEARSCAPE_EXPECTS(params.tileRows >= 1, "tiles need at least one row");
  NEARSCAPE_EXPECTS(params.boxDims >= 1, "boxes need at least one direction");
  const std::int64_t tileRows = params.tileRows;
  const std::int64_t n = data.rows, d = data.cols;
  const int threads = effectiveThreads(context);
  LogLaps lap(context, "tile plan");
  TilePlan plan;
  plan.metric = metric;
  plan.packing = knn::makePacking(data, metric, threads);
  plan.norms.resize(static_cast<std::size_t>(n));
  plan.order.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    plan.order[i] = std::int32_t(i);
  plan.dims = metric == Metric::InnerProduct ? 0 : int(std::min<std::int64_t>(d, params.boxDims));

  // Packed norms; with pruning, the rows' projections onto the axes (float dot products, each
  // widened by its rounding bound 2(d + 2)·u·‖x‖ — any summation order).
  std::vector<float> proj(static_cast<std::size_t>(n * plan.dims));
  std::vector<float> errors(plan.dims > 0 ? static_cast<std::size_t>(n) : 0);
  const std::vector<float> axes =
      plan.dims > 0 ? fitAxes(data, plan.packing, plan.dims, context, job) : std::vector<float>();
  const int dims = plan.dims;
  lap("packing, axes");
#pragma omp parallel num_threads(threads)
  {
    std::vector<float> packed(static_cast<std::size_t>(d));
#pragma omp for schedule(static, 4096)
    for (std::int64_t i = 0; i < n; ++i) {
      plan.packing.pack(data, i, i + 1, packed.data(), plan.norms.data() + i);
      for (int c = 0; c < dims; ++c) {
        const float* axis = axes.data() + std::int64_t(c) * d;
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (std::int64_t t = 0; t < d; ++t)
          s += packed[t] * axis[t];
        proj[std::size_t(i) * dims + c] = s;
      }
      if (dims > 0)
        errors[i] = float(2.0 * double(d + 2) * knn::kUnitRoundoff * std::sqrt(plan.norms[i]));
    }
  }
  job.check();
  plan.maxNorm2 = *std::max_element(plan.norms.begin(), plan.norms.end());
  lap("projections");

  plan.start.push_back(0);
  shape(plan, 0, n, tileRows);
  const std::int64_t nodes = std::int64_t(plan.nodes.size());
  if (dims == 0)
    return plan;
  partition(plan, proj, threads);
  job.check();
  lap("k-d split");
  // Boxes: each tile's from its members (widened by their rounding), then every node's as the
  // union of its children's (children follow their parent in preorder).
  plan.lo.assign(static_cast<std::size_t>(nodes * dims), std::numeric_limits<double>::max());
  plan.hi.assign(plan.lo.size(), std::numeric_limits<double>::lowest());
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16)
  for (std::int64_t v = 0; v < nodes; ++v) {
    const TilePlan::Node& node = plan.nodes[v];
    if (node.tile < 0)
      continue;
    double* lo = plan.lo.data() + v * dims;
    double* hi = plan.hi.data() + v * dims;
    for (std::int64_t m = node.begin; m < node.end; ++m) {
      const std::int32_t i = plan.order[m];
      for (std::int64_t c = 0; c < dims; ++c) {
        const double x = proj[std::size_t(i) * dims + c];
        lo[c] = std::min(lo[c], x - errors[i]);
        hi[c] = std::max(hi[c], x + errors[i]);
      }
    }
  }
  for (std::int64_t v = nodes - 1; v >= 0; --v) {
    const TilePlan::Node& node = plan.nodes[v];
    if (node.tile >= 0)
      continue;
    for (std::int64_t c = 0; c < dims; ++c) {
      plan.lo[v * dims + c] = std::min(plan.lo[std::int64_t(node.left) * dims + c],
                                       plan.lo[std::int64_t(node.right) * dims + c]);
      plan.hi[v * dims + c] = std::max(plan.hi[std::int64_t(node.left) * dims + c],
                                       plan.hi[std::int64_t(node.right) * dims + c]);
    }
  }
  lap("boxes");
  return plan;
}

} // namespace nearscape::analysis
