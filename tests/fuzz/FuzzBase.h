#pragma once
// The data the index_file and cache_entry targets read files over, and their seeds are built on:
// 64 × 8
// values from a fixed linear congruential sequence (no engine randomness: the seeds and the
// target agree whatever the engine's samplers do).

#include "nearscape/core/Dataset.h"
#include "nearscape/core/Matrix.h"

#include <cstdint>
#include <vector>

namespace nearscape::fuzz {

constexpr std::int64_t kIndexBaseRows = 64;
constexpr std::int64_t kIndexBaseCols = 8;

inline Matrix<float> indexFuzzBase() {
  std::vector<float> v(std::size_t(kIndexBaseRows * kIndexBaseCols));
  std::uint32_t state = 12345;
  for (auto& x : v) {
    state = state * 1664525u + 1013904223u;
    x = float(state >> 8) / float(1u << 24) * 2.0f - 1.0f;
  }
  return Matrix<float>(std::move(v), kIndexBaseRows, kIndexBaseCols);
}

/// The data the cache_entry target's entries belong to: the first 6 rows of indexFuzzBase(),
/// with its content hash (the key of every entry), and the parameters its entries are stored
/// under.
inline Dataset cacheFuzzData() {
  const Matrix<float> base = indexFuzzBase();
  Dataset ds;
  ds.vectors = Matrix<float>(std::vector<float>(base.data(), base.data() + 6 * kIndexBaseCols), 6,
                             kIndexBaseCols);
  ds.contentHash = contentHash(ds.vectors.view());
  return ds;
}
constexpr const char* kCacheGraphParams = "method=exact k=2";
constexpr const char* kCacheMapWhat = "map2d";
constexpr const char* kCacheMapParams = "epochs=200 seed=0";

} // namespace nearscape::fuzz
