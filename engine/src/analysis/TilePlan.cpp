#include "analysis/TilePlan.h"

#include "nearscape/core/Error.h"
#include "nearscape/layout/Pca.h"
#include "util/Blas.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nearscape::analysis {
namespace {

constexpr int kMaxDims = 16;               // box coordinates: more tighten little, cost n·d each
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

struct Splitter {
  const std::vector<float>& proj; // n × dims
  int dims;
  std::int64_t tileRows;
  std::vector<std::int32_t>& order;
  std::vector<std::int64_t>& start;

  void split(std::int64_t begin, std::int64_t end) {
    const std::int64_t size = end - begin;
    if (size <= tileRows) {
      start.push_back(end);
      return;
    }
    // The widest coordinate, cut at a multiple of tileRows near the median: every tile but the
    // last is full.
    int widest = 0;
    float best = -1;
    for (int c = 0; c < dims; ++c) {
      float lo = std::numeric_limits<float>::infinity(), hi = -lo;
      for (std::int64_t m = begin; m < end; ++m) {
        const float v = proj[std::size_t(order[m]) * dims + c];
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      if (hi - lo > best) {
        best = hi - lo;
        widest = c;
      }
    }
    const std::int64_t tilesHere = (size + tileRows - 1) / tileRows;
    const std::int64_t mid = begin + (tilesHere + 1) / 2 * tileRows;
    std::nth_element(order.begin() + begin, order.begin() + mid, order.begin() + end,
                     [&](std::int32_t a, std::int32_t b) {
                       const float va = proj[std::size_t(a) * dims + widest];
                       const float vb = proj[std::size_t(b) * dims + widest];
                       return va < vb || (va == vb && a < b);
                     });
    split(begin, mid);
    split(mid, end);
  }
};

} // namespace

double approxUnits(Metric metric, double threshold) {
  return metric == Metric::L2 ? threshold * threshold : threshold;
}

double TilePlan::gap(std::int64_t a, std::int64_t b) const {
  double s = 0;
  const double* la = lo.data() + a * dims;
  const double* ha = hi.data() + a * dims;
  const double* lb = lo.data() + b * dims;
  const double* hb = hi.data() + b * dims;
  for (int c = 0; c < dims; ++c) {
    const double g = std::max({0.0, lb[c] - ha[c], la[c] - hb[c]});
    s += g * g;
  }
  return std::sqrt(s) / kGapShrink;
}

double TilePlan::approxLowerBound(std::int64_t a, std::int64_t b) const {
  if (dims == 0)
    return -std::numeric_limits<double>::infinity();
  const double g = gap(a, b);
  // Cosine: ‖x̂ − ŷ‖²/2 = 1 − cos for non-zero rows; a zero row has 1 − cos = 1 ≥ ‖x̂ − ŷ‖²/2.
  return metric == Metric::L2 ? g * g : g * g / 2;
}

std::vector<TilePair> TilePlan::pairsBelow(double limit) const {
  std::vector<TilePair> out;
  for (std::int64_t a = 0; a < tiles(); ++a)
    for (std::int64_t b = a; b < tiles(); ++b) {
      const double bound = approxLowerBound(a, b);
      if (bound <= limit)
        out.push_back({bound, std::int32_t(a), std::int32_t(b)});
    }
  return out;
}

void TilePlan::packTile(const MatrixView<float>& data, std::int64_t tile, float* out) const {
  float norm = 0;
  for (std::int64_t m = start[tile]; m < start[tile + 1]; ++m)
    packing.pack(data, order[m], order[m] + 1, out + (m - start[tile]) * data.cols, &norm);
}

TilePlan makeTilePlan(const MatrixView<float>& data, Metric metric, std::int64_t tileRows,
                      const Context& context, JobControl& job) {
  const std::int64_t n = data.rows, d = data.cols;
  const int threads = effectiveThreads(context);
  TilePlan plan;
  plan.metric = metric;
  plan.packing = knn::makePacking(data, metric, threads);
  plan.norms.resize(static_cast<std::size_t>(n));
  plan.order.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    plan.order[i] = std::int32_t(i);
  plan.dims = metric == Metric::InnerProduct ? 0 : int(std::min<std::int64_t>(d, kMaxDims));

  // Packed norms; with pruning, the rows' projections onto the axes (float GEMM, each widened by
  // its rounding bound 2(d + 2)·u·‖x‖).
  std::vector<float> proj(static_cast<std::size_t>(n * plan.dims));
  std::vector<float> errors(plan.dims > 0 ? static_cast<std::size_t>(n) : 0);
  const std::vector<float> axes =
      plan.dims > 0 ? fitAxes(data, plan.packing, plan.dims, context, job) : std::vector<float>();
  constexpr std::int64_t kChunk = 4096;
  std::vector<float> packed(static_cast<std::size_t>(std::min(n, kChunk) * d));
  blas::setThreads(threads);
  for (std::int64_t s = 0; s < n; s += kChunk) {
    job.check();
    const std::int64_t e = std::min(n, s + kChunk);
    plan.packing.pack(data, s, e, packed.data(), plan.norms.data() + s);
    if (plan.dims == 0)
      continue;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(e - s), plan.dims, int(d), 1.0f,
                packed.data(), int(d), axes.data(), int(d), 0.0f, proj.data() + s * plan.dims,
                plan.dims);
    for (std::int64_t i = s; i < e; ++i)
      errors[i] = float(2.0 * double(d + 2) * knn::kUnitRoundoff * std::sqrt(plan.norms[i]));
  }
  plan.maxNorm2 = *std::max_element(plan.norms.begin(), plan.norms.end());

  plan.start.push_back(0);
  if (plan.dims > 0) {
    Splitter{proj, plan.dims, tileRows, plan.order, plan.start}.split(0, n);
  } else {
    for (std::int64_t s = tileRows; s < n; s += tileRows)
      plan.start.push_back(s);
    plan.start.push_back(n);
  }
  const std::int64_t tiles = plan.tiles();
  plan.lo.assign(static_cast<std::size_t>(tiles * plan.dims), std::numeric_limits<double>::max());
  plan.hi.assign(plan.lo.size(), std::numeric_limits<double>::lowest());
  for (std::int64_t t = 0; t < tiles; ++t)
    for (std::int64_t m = plan.start[t]; m < plan.start[t + 1]; ++m) {
      const std::int32_t i = plan.order[m];
      for (int c = 0; c < plan.dims; ++c) {
        const double v = proj[std::size_t(i) * plan.dims + c];
        plan.lo[t * plan.dims + c] = std::min(plan.lo[t * plan.dims + c], v - errors[i]);
        plan.hi[t * plan.dims + c] = std::max(plan.hi[t * plan.dims + c], v + errors[i]);
      }
    }
  return plan;
}

} // namespace nearscape::analysis
