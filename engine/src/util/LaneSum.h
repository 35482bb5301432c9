#pragma once
// The sum of a 512-bit vector's 16 float lanes by one fixed tree, so that a value does not depend
// on which kernel or tile produced it (x86-64 with AVX-512 only; callers dispatch at run time).

#if defined(__x86_64__)
#include <immintrin.h>

namespace nearscape::simd {

/// Through memory: GCC 12's 512-bit extract and reduce intrinsics trip -Wuninitialized in its own
/// header.
__attribute__((target("avx512f"))) inline float sumLanes16(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  const __m128 q = _mm_add_ps(_mm_add_ps(_mm_load_ps(lanes), _mm_load_ps(lanes + 8)),
                              _mm_add_ps(_mm_load_ps(lanes + 4), _mm_load_ps(lanes + 12)));
  const __m128 t = _mm_add_ps(q, _mm_movehl_ps(q, q));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

} // namespace nearscape::simd
#endif
