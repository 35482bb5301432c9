#pragma once
// Float32 distance kernels for the ANN indexes' inner loops (internal). The build targets the
// baseline x86-64 (docs/design.md, Conventions): AVX2+FMA and AVX-512 versions are picked at run
// time.

#include <cstdint>

namespace nearscape::simd {

/// Σ (a − b)²
float l2Squared(const float* a, const float* b, std::int64_t d);
/// Σ a·b
float dot(const float* a, const float* b, std::int64_t d);
/// Σ (a − step·c)² of a float row `a` against 8-bit codes `c` (a row x coded as
/// x ≈ low + step·c, `a` = q − low): the squared L2 distance of q to the decoded row.
float l2SquaredCodes(const float* a, const float* step, const std::uint8_t* codes, std::int64_t d);
/// Σ v·c of a float row against 8-bit codes.
float dotCodes(const float* v, const std::uint8_t* codes, std::int64_t d);
/// The instruction set the kernels use on this CPU ("avx512", "avx2" or "sse2").
const char* kernelName();

} // namespace nearscape::simd
