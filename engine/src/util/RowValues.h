#pragma once
// One row's values as the data's check sees them (internal; core/Dataset.cpp's scanNonFinite):
// how many are NaN or ±Inf, the largest |value| and the squared norm of the finite ones. The build
// targets the baseline x86-64 (docs/design.md, Conventions): an AVX2 version is picked at run
// time — the check reads every value of every file opened and every exact search's data, and
// the baseline's loop ran at 2.4 GB/s a core.

#include <cstdint>

namespace nearscape::simd {

struct RowValues {
  std::int64_t nonFinite = 0; ///< NaN and ±Inf values
  float largest = 0;          ///< largest |value| among the finite ones
  float squared = 0;          ///< Σ value² over the finite ones, in float32 (+Inf past its range)
};

/// The `d` values at `x`.
using RowValuesKernel = RowValues (*)(const float* x, std::int64_t d);

/// The fastest version this CPU runs (picked once; a scan takes it before its loop over rows).
RowValuesKernel rowValuesKernel();
/// The baseline's loop, which every x86-64 runs: tests hold the two against each other.
RowValuesKernel rowValuesBaseline();

} // namespace nearscape::simd
