// The CPU's layout step (LayoutEpochCpu.h): moveNode with its negative samples in AVX-512 lanes.
#include "layout/LayoutEpochCpu.h"

#include "util/LaneSum.h"

#include <immintrin.h>
#include <initializer_list>

namespace nearscape::layout {
namespace {

// Masked forms throughout (maskz_max, maskz_min, …): GCC 12's unmasked ones start from an
// undefined vector and trip -Wuninitialized in its own header.

/// x^b in sixteen lanes (x > 0), 2^(b·log2 x): log2 of the mantissa m ∈ [√½, √2) by
/// 2/ln 2 · atanh(t), t = (m − 1)/(m + 1), |t| ≤ 0.172, to t^9 (error < 1e-8); 2^f for
/// f ∈ [−½, ½] by e^(f·ln 2)'s Taylor series to degree 7 (error < 1e-8 relative). Measured
/// against float64 pow over 2^−40 … 2^14: relative error below 3e-6.
__attribute__((target("avx512f"))) __m512 powLanes(__m512 x, float b) {
  const __mmask16 all = 0xFFFF;
  x = _mm512_maskz_max_ps(0xFFFF, x, _mm512_set1_ps(1e-30f));
  __m512 e = _mm512_maskz_getexp_ps(all, x);
  __m512 m = _mm512_maskz_getmant_ps(all, x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
  const __mmask16 high = _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.41421356f), _CMP_GT_OQ);
  m = _mm512_mask_mul_ps(m, high, m, _mm512_set1_ps(0.5f));
  e = _mm512_mask_add_ps(e, high, e, _mm512_set1_ps(1.0f));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 t = _mm512_div_ps(_mm512_sub_ps(m, one), _mm512_add_ps(m, one));
  const __m512 t2 = _mm512_mul_ps(t, t);
  __m512 series = _mm512_set1_ps(1.0f / 9);
  series = _mm512_fmadd_ps(series, t2, _mm512_set1_ps(1.0f / 7));
  series = _mm512_fmadd_ps(series, t2, _mm512_set1_ps(1.0f / 5));
  series = _mm512_fmadd_ps(series, t2, _mm512_set1_ps(1.0f / 3));
  series = _mm512_fmadd_ps(series, t2, one);
  series = _mm512_mul_ps(series, t);
  __m512 y = _mm512_mul_ps(_mm512_set1_ps(b),
                           _mm512_fmadd_ps(series, _mm512_set1_ps(2.88539008f), e)); // 2/ln 2
  y = _mm512_maskz_min_ps(0xFFFF, _mm512_maskz_max_ps(0xFFFF, y, _mm512_set1_ps(-126.0f)),
                          _mm512_set1_ps(126.0f));
  const __m512 n = _mm512_maskz_roundscale_ps(all, y, _MM_FROUND_TO_NEAREST_INT);
  const __m512 g = _mm512_mul_ps(_mm512_sub_ps(y, n), _mm512_set1_ps(0.693147181f));
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  for (const float c : {1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f})
    p = _mm512_fmadd_ps(p, g, _mm512_set1_ps(c));
  return _mm512_maskz_scalef_ps(all, p, n);
}

constexpr int kBatch = 256; ///< negative samples gathered before their lanes run

/// Adds to acc[c] the repulsion of `count` negative samples (`others`, not i itself).
template <int Dim>
__attribute__((target("avx512f"))) void repel(const EpochStep& s, const float* yi,
                                              const std::int32_t* others, int count, __m512* acc) {
  const __m512 four = _mm512_set1_ps(4.0f), minusFour = _mm512_set1_ps(-4.0f);
  const __m512 alpha = _mm512_set1_ps(s.alpha), twoB = _mm512_set1_ps(2.0f * s.b);
  const __m512 a = _mm512_set1_ps(s.a), one = _mm512_set1_ps(1.0f);
  for (int at = 0; at < count; at += 16) {
    const __mmask16 live =
        count - at >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (count - at)) - 1);
    const __m512i base =
        _mm512_mullo_epi32(_mm512_maskz_loadu_epi32(live, others + at), _mm512_set1_epi32(Dim));
    __m512 diff[Dim];
    __m512 o2 = _mm512_setzero_ps();
    for (int c = 0; c < Dim; ++c) {
      const __m512 yo = _mm512_mask_i32gather_ps(
          _mm512_set1_ps(yi[c]), live, _mm512_add_epi32(base, _mm512_set1_epi32(c)), s.current, 4);
      diff[c] = _mm512_sub_ps(_mm512_set1_ps(yi[c]), yo);
      o2 = _mm512_fmadd_ps(diff[c], diff[c], o2);
    }
    const __mmask16 apart = _mm512_cmp_ps_mask(o2, _mm512_setzero_ps(), _CMP_GT_OQ);
    const __m512 denominator = _mm512_mul_ps(_mm512_add_ps(_mm512_set1_ps(0.001f), o2),
                                             _mm512_fmadd_ps(a, powLanes(o2, s.b), one));
    const __m512 coef = _mm512_maskz_div_ps(apart, twoB, denominator);
    const __mmask16 pulls = _mm512_cmp_ps_mask(coef, _mm512_setzero_ps(), _CMP_GT_OQ);
    for (int c = 0; c < Dim; ++c) {
      const __m512 clipped = _mm512_maskz_min_ps(
          0xFFFF, _mm512_maskz_max_ps(0xFFFF, _mm512_mul_ps(coef, diff[c]), minusFour), four);
      const __m512 g = _mm512_mask_blend_ps(pulls, four, clipped);
      acc[c] = _mm512_mask3_fmadd_ps(alpha, g, acc[c], live); // dead lanes keep acc
    }
  }
}

template <int Dim>
__attribute__((target("avx512f"))) void moveNodeAvx512(const EpochStep& s, std::int64_t i) {
  float yi[Dim], move[Dim];
  for (int c = 0; c < Dim; ++c) {
    yi[c] = s.current[i * Dim + c];
    move[c] = 0;
  }
  __m512 acc[Dim];
  for (int c = 0; c < Dim; ++c)
    acc[c] = _mm512_setzero_ps();
  std::int32_t others[kBatch];
  int count = 0;
  const std::uint64_t stream = sampleStream(s, i);
  std::uint64_t drawn = 0;
  for (std::int64_t e = s.offsets[i]; e < s.offsets[i + 1]; ++e) {
    if (s.nextSample[e] > float(s.epoch + 1))
      continue;
    s.nextSample[e] += s.perSample[e];
    attract<Dim>(s, yi, s.current + std::int64_t(s.targets[e]) * Dim, move);
    for (int k = 0; k < s.negativeSamples; ++k) {
      const std::int64_t other = pickNode(mixBits(stream + ++drawn), s.nodes);
      if (other == i)
        continue;
      others[count++] = std::int32_t(other);
      if (count == kBatch) {
        repel<Dim>(s, yi, others, count, acc);
        count = 0;
      }
    }
  }
  repel<Dim>(s, yi, others, count, acc);
  for (int c = 0; c < Dim; ++c)
    s.next[i * Dim + c] = yi[c] + (move[c] + simd::sumLanes16(acc[c]));
}

using MoveNode = void (*)(const EpochStep&, std::int64_t);

void moveNodeScalar(const EpochStep& s, std::int64_t i) {
  moveNode(s, i);
}

__attribute__((target("avx512f"))) void moveNodeAvx512Any(const EpochStep& s, std::int64_t i) {
  s.dim == 2 ? moveNodeAvx512<2>(s, i) : moveNodeAvx512<3>(s, i);
}

MoveNode pickMoveNode() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") ? moveNodeAvx512Any : moveNodeScalar;
}

} // namespace

void moveNodeCpu(const EpochStep& s, std::int64_t i) {
  static const MoveNode move = pickMoveNode();
  // The lanes' gathers index coordinates with 32-bit offsets.
  if (s.nodes * s.dim >= (std::int64_t(1) << 31))
    return moveNode(s, i);
  move(s, i);
}

} // namespace nearscape::layout
