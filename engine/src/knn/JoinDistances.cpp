// A join's distances in 4 × 4 tiles (JoinDistances.h): AVX-512 or AVX2 picked at run time, as
// util/VectorDistance does; elsewhere pair by pair.
#include "knn/JoinDistances.h"

#include "util/LaneSum.h"
#include "util/VectorDistance.h"

#include <algorithm>
#include <immintrin.h>

namespace nearscape::knn {
namespace {

constexpr int kTile = 4;

/// One tile's sixteen values: out[r * 4 + c] for rows a[r], columns b[c].
using TileKernel = void (*)(const float* const* a, const float* const* b, std::int64_t d, bool dot,
                            float* out);

void tileGeneric(const float* const* a, const float* const* b, std::int64_t d, bool dot,
                 float* out) {
  for (int r = 0; r < kTile; ++r)
    for (int c = 0; c < kTile; ++c)
      out[r * kTile + c] = dot ? -simd::dot(a[r], b[c], d) : simd::l2Squared(a[r], b[c], d);
}

template <bool kDot>
__attribute__((target("avx512f"))) void tileAvx512(const float* const* a, const float* const* b,
                                                   std::int64_t d, float* out) {
  __m512 acc[kTile][kTile];
#pragma GCC unroll 4
  for (int r = 0; r < kTile; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < kTile; ++c)
      acc[r][c] = _mm512_setzero_ps();
  for (std::int64_t i = 0; i < d; i += 16) {
    // The tail through masks: zero lanes add nothing.
    const __mmask16 m = d - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (d - i)) - 1);
    __m512 x[kTile], y[kTile];
#pragma GCC unroll 4
    for (int r = 0; r < kTile; ++r) {
      x[r] = _mm512_maskz_loadu_ps(m, a[r] + i);
      y[r] = _mm512_maskz_loadu_ps(m, b[r] + i);
    }
#pragma GCC unroll 4
    for (int r = 0; r < kTile; ++r)
#pragma GCC unroll 4
      for (int c = 0; c < kTile; ++c) {
        if constexpr (kDot) {
          acc[r][c] = _mm512_fmadd_ps(x[r], y[c], acc[r][c]);
        } else {
          const __m512 e = _mm512_sub_ps(x[r], y[c]);
          acc[r][c] = _mm512_fmadd_ps(e, e, acc[r][c]);
        }
      }
  }
  for (int r = 0; r < kTile; ++r)
    for (int c = 0; c < kTile; ++c)
      out[r * kTile + c] = kDot ? -simd::sumLanes16(acc[r][c]) : simd::sumLanes16(acc[r][c]);
}

__attribute__((target("avx512f"))) void tileAvx512Any(const float* const* a, const float* const* b,
                                                      std::int64_t d, bool dot, float* out) {
  dot ? tileAvx512<true>(a, b, d, out) : tileAvx512<false>(a, b, d, out);
}

__attribute__((target("avx2,fma"))) float sum256(__m256 v) {
  const __m128 q = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(q, _mm_movehl_ps(q, q));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

/// Two rows by four columns: AVX2's sixteen registers hold eight sums and six vectors.
template <bool kDot>
__attribute__((target("avx2,fma"))) void halfTileAvx2(const float* const* a, const float* const* b,
                                                      std::int64_t d, float* out) {
  __m256 acc[2][kTile];
#pragma GCC unroll 2
  for (int r = 0; r < 2; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < kTile; ++c)
      acc[r][c] = _mm256_setzero_ps();
  std::int64_t i = 0;
  for (; i + 8 <= d; i += 8) {
    const __m256 x0 = _mm256_loadu_ps(a[0] + i), x1 = _mm256_loadu_ps(a[1] + i);
#pragma GCC unroll 4
    for (int c = 0; c < kTile; ++c) {
      const __m256 y = _mm256_loadu_ps(b[c] + i);
      if constexpr (kDot) {
        acc[0][c] = _mm256_fmadd_ps(x0, y, acc[0][c]);
        acc[1][c] = _mm256_fmadd_ps(x1, y, acc[1][c]);
      } else {
        const __m256 e0 = _mm256_sub_ps(x0, y), e1 = _mm256_sub_ps(x1, y);
        acc[0][c] = _mm256_fmadd_ps(e0, e0, acc[0][c]);
        acc[1][c] = _mm256_fmadd_ps(e1, e1, acc[1][c]);
      }
    }
  }
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < kTile; ++c) {
      float s = sum256(acc[r][c]);
      for (std::int64_t j = i; j < d; ++j)
        s += kDot ? a[r][j] * b[c][j] : (a[r][j] - b[c][j]) * (a[r][j] - b[c][j]);
      out[r * kTile + c] = kDot ? -s : s;
    }
}

__attribute__((target("avx2,fma"))) void tileAvx2(const float* const* a, const float* const* b,
                                                  std::int64_t d, bool dot, float* out) {
  for (int half = 0; half < 2; ++half)
    dot ? halfTileAvx2<true>(a + 2 * half, b, d, out + 2 * half * kTile)
        : halfTileAvx2<false>(a + 2 * half, b, d, out + 2 * half * kTile);
}

TileKernel pickTileKernel() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return tileAvx512Any;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return tileAvx2;
  return tileGeneric;
}

/// `ids` padded to whole tiles by repeating its last id (values computed and not used).
void padToTiles(const std::vector<std::int32_t>& ids, std::vector<std::int32_t>& padded) {
  padded.assign(ids.begin(), ids.end());
  while (!padded.empty() && padded.size() % kTile != 0)
    padded.push_back(padded.back());
}

} // namespace

JoinDistances::JoinDistances(const float* x, std::int64_t d, Metric metric)
    : m_x(x), m_d(d), m_dot(metric == Metric::InnerProduct) {}

void JoinDistances::block(const std::vector<std::int32_t>& rows,
                          const std::vector<std::int32_t>& cols, bool upperOnly,
                          std::vector<float>& out) {
  static const TileKernel kernel = pickTileKernel();
  const std::size_t nr = rows.size(), nc = cols.size();
  out.assign(nr * nc, 0.0f);
  padToTiles(rows, m_rows);
  padToTiles(cols, m_cols);
  float tile[kTile * kTile];
  const float* a[kTile];
  const float* b[kTile];
  for (std::size_t r0 = 0; r0 < m_rows.size(); r0 += kTile) {
    for (int r = 0; r < kTile; ++r)
      a[r] = m_x + std::int64_t(m_rows[r0 + r]) * m_d;
    for (std::size_t c0 = 0; c0 < m_cols.size(); c0 += kTile) {
      if (upperOnly && c0 + kTile - 1 <= r0) // every column ≤ every row: none needed
        continue;
      for (int c = 0; c < kTile; ++c)
        b[c] = m_x + std::int64_t(m_cols[c0 + c]) * m_d;
      kernel(a, b, m_d, m_dot, tile);
      const std::size_t rEnd = std::min(nr, r0 + kTile), cEnd = std::min(nc, c0 + kTile);
      for (std::size_t r = r0; r < rEnd; ++r)
        for (std::size_t c = c0; c < cEnd; ++c)
          out[r * nc + c] = tile[(r - r0) * kTile + (c - c0)];
    }
  }
}

} // namespace nearscape::knn
