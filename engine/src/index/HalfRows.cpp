#include "index/HalfRows.h"

#include <immintrin.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <vector>

namespace nearscape::index {
namespace {

/// Dimensions between two looks at the partial sum: 4 cache lines of halves. Each look costs a
/// horizontal sum; on fashion-mnist most rejected rows stop within the first 2–3 blocks.
constexpr std::int64_t kBlock = 128;

/// The sum of 16 lanes (GCC 12's _mm512_reduce_add_ps, _mm512_castps512_ps256 and
/// _mm512_extractf64x4_pd trip -Wuninitialized in its own header; the masked extract does not).
__attribute__((target("avx512f"))) float hsum512(__m512 v) {
  const __m512d w = _mm512_castps_pd(v);
  const __m256 h = _mm256_add_ps(_mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, w, 0)),
                                 _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, w, 1)));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
}

__attribute__((target("avx2,fma,f16c"))) float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
}

/// 16 halves to floats (the masked form: the plain one trips the same GCC 12 warning).
__attribute__((target("avx512f"))) __m512 cvt16(__m256i h) {
  return _mm512_maskz_cvtph_ps(0xFFFF, h);
}

__attribute__((target("avx512f"))) float l2Avx512(const float* q, const std::uint16_t* x,
                                                  std::int64_t dPad, float bound) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  for (std::int64_t i = 0;;) {
    for (const std::int64_t end = std::min(i + kBlock, dPad); i < end; i += 32) {
      const __m512 a = cvt16(_mm256_load_si256(reinterpret_cast<const __m256i*>(x + i)));
      const __m512 b =
          cvt16(_mm256_load_si256(reinterpret_cast<const __m256i*>(x + i + 16)));
      const __m512 e0 = _mm512_sub_ps(_mm512_load_ps(q + i), a);
      const __m512 e1 = _mm512_sub_ps(_mm512_load_ps(q + i + 16), b);
      s0 = _mm512_fmadd_ps(e0, e0, s0);
      s1 = _mm512_fmadd_ps(e1, e1, s1);
    }
    const float s = hsum512(_mm512_add_ps(s0, s1));
    if (i == dPad || s > bound)
      return s;
  }
}

__attribute__((target("avx512f"))) float dotAvx512(const float* q, const std::uint16_t* x,
                                                   std::int64_t dPad, float) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  for (std::int64_t i = 0; i < dPad; i += 32) {
    const __m512 a = cvt16(_mm256_load_si256(reinterpret_cast<const __m256i*>(x + i)));
    const __m512 b =
        cvt16(_mm256_load_si256(reinterpret_cast<const __m256i*>(x + i + 16)));
    s0 = _mm512_fmadd_ps(_mm512_load_ps(q + i), a, s0);
    s1 = _mm512_fmadd_ps(_mm512_load_ps(q + i + 16), b, s1);
  }
  return -hsum512(_mm512_add_ps(s0, s1));
}

__attribute__((target("avx2,fma,f16c"))) float l2Avx2(const float* q, const std::uint16_t* x,
                                                      std::int64_t dPad, float bound) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  for (std::int64_t i = 0;;) {
    for (const std::int64_t end = std::min(i + kBlock, dPad); i < end; i += 16) {
      const __m256 a = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(x + i)));
      const __m256 b =
          _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(x + i + 8)));
      const __m256 e0 = _mm256_sub_ps(_mm256_load_ps(q + i), a);
      const __m256 e1 = _mm256_sub_ps(_mm256_load_ps(q + i + 8), b);
      s0 = _mm256_fmadd_ps(e0, e0, s0);
      s1 = _mm256_fmadd_ps(e1, e1, s1);
    }
    const float s = hsum256(_mm256_add_ps(s0, s1));
    if (i == dPad || s > bound)
      return s;
  }
}

__attribute__((target("avx2,fma,f16c"))) float dotAvx2(const float* q, const std::uint16_t* x,
                                                      std::int64_t dPad, float) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  for (std::int64_t i = 0; i < dPad; i += 16) {
    const __m256 a = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(x + i)));
    const __m256 b = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(x + i + 8)));
    s0 = _mm256_fmadd_ps(_mm256_load_ps(q + i), a, s0);
    s1 = _mm256_fmadd_ps(_mm256_load_ps(q + i + 8), b, s1);
  }
  return -hsum256(_mm256_add_ps(s0, s1));
}

/// `count` (a multiple of 8) floats to halves, rounded to nearest.
__attribute__((target("avx2,fma,f16c"))) void toHalves(const float* in, std::int64_t count,
                                                       std::uint16_t* out) {
  for (std::int64_t i = 0; i < count; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
}

} // namespace

void HalfRows::Free::operator()(std::uint16_t* p) const {
  std::free(p);
}

std::optional<HalfRows> HalfRows::make(const MatrixView<float>& working, Metric metric,
                                       int threads) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") ||
      !__builtin_cpu_supports("f16c") || working.rows < 1 || working.cols < 1)
    return std::nullopt;
  const bool l2 = metric == Metric::L2;
  const std::int64_t n = working.rows, d = working.cols;
  HalfRows h;
  h.m_rows = n, h.m_d = d, h.m_dPad = (d + 31) / 32 * 32;
  h.m_kernel = __builtin_cpu_supports("avx512f") ? (l2 ? l2Avx512 : dotAvx512)
                                                  : (l2 ? l2Avx2 : dotAvx2);

  // Per-dimension mean and variance (double sums: n can be millions), L2 only.
  std::vector<double> sum(std::size_t(d), 0.0), squares(std::size_t(d), 0.0);
  if (l2)
    for (std::int64_t i = 0; i < n; ++i) {
      const float* r = working.row(i);
      for (std::int64_t j = 0; j < d; ++j)
        sum[std::size_t(j)] += r[j], squares[std::size_t(j)] += double(r[j]) * double(r[j]);
    }
  std::shared_ptr<float[]> shift(new float[std::size_t(d)]);
  std::shared_ptr<std::int32_t[]> order(new std::int32_t[std::size_t(d)]);
  std::vector<double> variance(static_cast<std::size_t>(d));
  for (std::int64_t j = 0; j < d; ++j) {
    const double mean = sum[std::size_t(j)] / double(n);
    shift[std::size_t(j)] = float(mean);
    variance[std::size_t(j)] = squares[std::size_t(j)] / double(n) - mean * mean;
  }
  std::iota(order.get(), order.get() + d, 0);
  std::stable_sort(order.get(), order.get() + d, [&](std::int32_t a, std::int32_t b) {
    return variance[std::size_t(a)] > variance[std::size_t(b)];
  });

  // A power of two (exact) that puts the largest magnitude in [2^14, 2^15): far from float16's
  // limit (65504) and from its subnormals.
  float largest = 0;
#pragma omp parallel for num_threads(threads) reduction(max : largest) schedule(static)
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j)
      largest = std::max(largest, std::abs(working.row(i)[j] - shift[std::size_t(j)]));
  if (largest > 0)
    h.m_scale = std::ldexp(1.0f, std::clamp(14 - std::ilogb(largest), -120, 120));

  // On 2 MiB pages where the kernel gives them: a walk jumps between rows at random, and with
  // 4 KiB pages nearly every row costs a TLB miss (a page walk) before its first line comes.
  constexpr std::size_t kHugePage = std::size_t(2) << 20;
  const std::size_t bytes =
      (std::size_t(n) * std::size_t(h.m_dPad) * 2 + kHugePage - 1) / kHugePage * kHugePage;
  h.m_data.reset(static_cast<std::uint16_t*>(std::aligned_alloc(kHugePage, bytes)));
  if (!h.m_data)
    return std::nullopt;
#ifdef __linux__
  madvise(h.m_data.get(), bytes, MADV_HUGEPAGE); // advice only: 4 KiB pages if refused
#endif
#pragma omp parallel num_threads(threads)
  {
    std::vector<float> line(std::size_t(h.m_dPad), 0.0f);
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const float* r = working.row(i);
      for (std::int64_t j = 0; j < d; ++j) {
        const std::int32_t from = order[std::size_t(j)];
        line[std::size_t(j)] = (r[from] - shift[std::size_t(from)]) * h.m_scale;
      }
      toHalves(line.data(), h.m_dPad, h.m_data.get() + i * h.m_dPad);
    }
  }
  h.m_order = std::move(order);
  h.m_shift = std::move(shift);
  return h;
}

bool HalfRows::prepareQuery(const float* query, float* out) const {
  // Beyond 1e17 a squared difference summed over the dimensions could pass float32's 3.4e38.
  constexpr float kLargest = 1e17f;
  for (std::int64_t j = 0; j < m_d; ++j) {
    const std::int32_t from = m_order[std::size_t(j)];
    out[j] = (query[from] - m_shift[std::size_t(from)]) * m_scale;
    if (!(std::abs(out[j]) <= kLargest))
      return false;
  }
  std::fill(out + m_d, out + m_dPad, 0.0f);
  return true;
}

} // namespace nearscape::index
