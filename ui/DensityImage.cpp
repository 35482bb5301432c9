#include "DensityImage.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace nearscape::ui {
namespace {

/// Counts fall into bins of 1/16 octave: monotone in the count, which is all equalising needs.
constexpr int kBinsPerOctave = 16;
constexpr int kBins = 48 * kBinsPerOctave; // counts up to 2^48

int binOf(float count) {
  int exponent = 0;
  const float mantissa = std::frexp(count, &exponent); // count = mantissa · 2^exponent, m ∈ [½, 1)
  const int bin = (exponent - 1) * kBinsPerOctave + int((2 * mantissa - 1) * kBinsPerOctave);
  return std::clamp(bin, 0, kBins - 1);
}

int threadsFor(std::int64_t work) {
  return work < 20000 ? 1 : std::max(1, omp_get_max_threads());
}

} // namespace

void DensityImage::accumulate(const DensityPoints& points, const ScreenMapping& mapping,
                              int footprint) {
  m_width = std::max(mapping.width, 0);
  m_height = std::max(mapping.height, 0);
  const int w = m_width, h = m_height, dim = points.dim == 3 ? 3 : 2;
  const std::size_t rowFloats = std::size_t(w) * 4;
  m_cells.resize(rowFloats * std::size_t(h));
  const double* right = mapping.right;
  const double* up = mapping.up;
  const std::vector<bool>* visible =
      points.visible && !points.visible->empty() ? points.visible : nullptr;
  // Each thread owns a band of rows and counts the points that land in it: no thread writes
  // another's pixels, so no copies of the image are summed (every thread projects every point;
  // projecting is cheap next to the image's memory traffic).
  const int threads = threadsFor(points.count + std::int64_t(w) * h);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), bands = omp_get_num_threads();
    const int y0 = int(std::int64_t(h) * t / bands), y1 = int(std::int64_t(h) * (t + 1) / bands);
    std::fill(m_cells.data() + rowFloats * std::size_t(y0),
              m_cells.data() + rowFloats * std::size_t(y1), 0.0f);
    for (std::int64_t i = 0; i < points.count; ++i) {
      if (visible && !(*visible)[std::size_t(i)])
        continue;
      const float* p = points.positions + i * dim;
      double u = p[0] * up[0] + p[1] * up[1];
      if (dim == 3)
        u += p[2] * up[2];
      const double y = (u - mapping.centreUp) * mapping.pixelsPerUnit + 0.5 * h;
      if (!(y >= y0 && y < y1)) // NaN too
        continue;
      double r = p[0] * right[0] + p[1] * right[1];
      if (dim == 3)
        r += p[2] * right[2];
      const double x = (r - mapping.centreRight) * mapping.pixelsPerUnit + 0.5 * w;
      if (!(x >= 0 && x < w))
        continue;
      float* cell = m_cells.data() + std::size_t(y) * rowFloats + std::size_t(x) * 4;
      const std::uint8_t* c = points.rgb + 3 * i;
      cell[0] += 1.0f;
      cell[1] += c[0];
      cell[2] += c[1];
      cell[3] += c[2];
    }
  }

  // Each point covers a footprint × footprint square: a box filter, rows then columns. The row
  // pass also sums the crowding, from the pixels' own counts before they are spread:
  // E[N'(N' − 1)] = λ² for a Poisson sample, so sampled counts estimate the full data's
  // Σ N² / Σ N without their noise.
  const int before = (std::max(footprint, 1) - 1) / 2, after = std::max(footprint, 1) - 1 - before;
  std::vector<float>& rows = m_rows;
  rows.resize(m_cells.size());
  double sum = 0, pairs = 0;
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static) reduction(+ : sum, pairs)
    for (int y = 0; y < h; ++y) {
      const float* in = m_cells.data() + std::size_t(y) * rowFloats;
      float* out = rows.data() + std::size_t(y) * rowFloats;
      for (int x = 0; x < w; ++x) {
        const double n = in[std::size_t(x) * 4];
        sum += n;
        pairs += n * (n - 1);
        std::array<float, 4> s{};
        for (int xx = std::max(0, x - before); xx <= std::min(w - 1, x + after); ++xx)
          for (int c = 0; c < 4; ++c)
            s[std::size_t(c)] += in[std::size_t(xx) * 4 + std::size_t(c)];
        std::copy(s.begin(), s.end(), out + std::size_t(x) * 4);
      }
    }
#pragma omp for schedule(static)
    for (int y = 0; y < h; ++y) {
      float* out = m_cells.data() + std::size_t(y) * rowFloats;
      std::fill(out, out + rowFloats, 0.0f);
      for (int yy = std::max(0, y - before); yy <= std::min(h - 1, y + after); ++yy) {
        const float* in = rows.data() + std::size_t(yy) * rowFloats;
        for (std::size_t k = 0; k < rowFloats; ++k)
          out[k] += in[k];
      }
    }
  }
  m_onScreen = points.weight * sum;
  m_crowding = sum > 0 ? 1.0 + points.weight * pairs / sum : 1.0;
}

void DensityImage::shade(const std::uint8_t background[3], double density,
                         std::uint8_t* rgb) const {
  const std::int64_t pixels = std::int64_t(m_width) * m_height;
  const int threads = threadsFor(pixels);
  // Equalise by points: a pixel's strength follows the share of the points on screen that lie in
  // sparser pixels (its count's bin). Ranking points rather than pixels keeps the many sparse
  // pixels of a noisy background from taking the whole range: a cluster's core and its edge
  // still differ.
  std::vector<double> histogram(kBins, 0.0);
  m_bins.resize(std::size_t(pixels));
#pragma omp parallel num_threads(threads)
  {
    std::vector<double> local(kBins, 0.0);
#pragma omp for schedule(static)
    for (std::int64_t p = 0; p < pixels; ++p) {
      const float n = m_cells[std::size_t(p) * 4];
      const int bin = n > 0.5f ? binOf(n) : -1;
      m_bins[std::size_t(p)] = std::int16_t(bin);
      if (bin >= 0)
        local[std::size_t(bin)] += n;
    }
#pragma omp critical
    for (int b = 0; b < kBins; ++b)
      histogram[std::size_t(b)] += local[std::size_t(b)];
  }
  // Each bin's rank: the points below it and half its own; the sparsest bin at 0, the densest at
  // 1 (all at 1 when every covered pixel is alike).
  std::array<double, kBins> rank{};
  double cumulative = 0;
  int first = -1, last = -1;
  for (int b = 0; b < kBins; ++b) {
    rank[std::size_t(b)] = cumulative + 0.5 * histogram[std::size_t(b)];
    cumulative += histogram[std::size_t(b)];
    if (histogram[std::size_t(b)] > 0) {
      last = b;
      if (first < 0)
        first = b;
    }
  }
  std::array<float, kBins> strength{};
  for (int b = 0; b < kBins; ++b) {
    const double span = last > first ? rank[std::size_t(last)] - rank[std::size_t(first)] : 0;
    const double t =
        span > 0 ? std::clamp((rank[std::size_t(b)] - rank[std::size_t(first)]) / span, 0.0, 1.0)
                 : 1.0;
    // The square root lifts the middle: most points would otherwise sit in pale pixels.
    const double shaded = kFaintest + (1.0 - kFaintest) * std::sqrt(t);
    strength[std::size_t(b)] = float(1.0 - std::clamp(density, 0.0, 1.0) * (1.0 - shaded));
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t p = 0; p < pixels; ++p) {
    const float* cell = m_cells.data() + std::size_t(p) * 4;
    std::uint8_t* out = rgb + std::size_t(p) * 3;
    const int bin = m_bins[std::size_t(p)];
    if (bin < 0) {
      std::copy(background, background + 3, out);
      continue;
    }
    const float a = strength[std::size_t(bin)], perPoint = a / cell[0];
    for (int c = 0; c < 3; ++c) {
      const float v = float(background[c]) * (1 - a) + cell[c + 1] * perPoint + 0.5f;
      out[c] = std::uint8_t(std::clamp(v, 0.0f, 255.0f));
    }
  }
}

} // namespace nearscape::ui
