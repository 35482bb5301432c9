#pragma once
// The base as the CPU's graph walk reads it (internal): float16 rows, half the bytes of the
// working vectors, so that twice as many rows come from memory in the same time.

#include "nearscape/core/MatrixView.h"
#include "nearscape/core/Metric.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace nearscape::index {

/// A float16 copy of the working vectors for the graph walk. A walk is bound by memory, not
/// arithmetic (784-d rows: 49 cache lines each, a few hundred rows a query; perf on
/// fashion-mnist put 76% of the search in the distance kernel's loads), so the copy halves what
/// each step reads; the pool the walk ends with is scored again on the float32 vectors, so the
/// answer's order and distances are float32's (GraphSearchCpu.cpp).
///
/// For L2 the rows are centred (L2 does not change under a shift), scaled by a power of two
/// (exact) so that the largest magnitude sits near 2^14, and their dimensions ordered by
/// decreasing variance: a walk's partial sum then grows fastest at the start, and a row whose
/// partial sum already exceeds the pool's worst score is left unread from there on (HNSW
/// implementations' "early abandoning"; the sum is monotone for L2 only). Each row is padded with
/// zeros to 32 halves (one cache line) and starts on a cache line.
class HalfRows {
public:
  /// nullopt where the CPU lacks AVX2 with F16C (the walk then reads the float32 vectors).
  /// `working`: the index's working vectors (WorkingVectors), n × d, all finite.
  static std::optional<HalfRows> make(const MatrixView<float>& working, Metric metric,
                                      int threads);

  std::int64_t paddedDim() const { return m_dPad; }
  /// The power of two the rows were scaled by: scores are scale² × L2² or scale² × −dot.
  float scale() const { return m_scale; }
  std::uint64_t bytes() const { return std::uint64_t(m_rows) * std::uint64_t(m_dPad) * 2; }

  /// Writes `query` (d working floats) in the rows' frame into `out` (paddedDim() floats,
  /// 64-byte aligned): shifted, scaled and reordered alike. False when a score against it could
  /// overflow float32 (a query far outside the base's range): the walk then uses the float32
  /// vectors for it.
  bool prepareQuery(const float* query, float* out) const;

  /// The working score (smaller = nearer, in the rows' scaled frame) of a prepared query against
  /// row `id`; for L2, once the partial sum exceeds `bound` the rest is skipped and a value
  /// > bound returned.
  float score(const float* prepared, std::int32_t id, float bound) const {
    return m_kernel(prepared, row(id), m_dPad, bound);
  }

  /// Asks for the first `lines` cache lines of row `id`.
  void prefetch(std::int32_t id, int lines) const {
    const char* r = reinterpret_cast<const char*>(row(id));
    for (int l = 0; l < lines; ++l)
      __builtin_prefetch(r + 64 * l);
  }
  int lines() const { return int(m_dPad / 32); }

private:
  using Kernel = float (*)(const float*, const std::uint16_t*, std::int64_t, float);
  struct Free {
    void operator()(std::uint16_t* p) const;
  };
  HalfRows() = default;
  const std::uint16_t* row(std::int32_t id) const {
    return m_data.get() + std::int64_t(id) * m_dPad;
  }

  std::unique_ptr<std::uint16_t, Free> m_data; ///< rows × m_dPad halves, 64-byte aligned
  std::int64_t m_rows = 0, m_d = 0, m_dPad = 0;
  std::shared_ptr<const std::int32_t[]> m_order; ///< m_d dimension ids, highest variance first
  std::shared_ptr<const float[]> m_shift;        ///< m_d per-dimension means (L2), else zeros
  float m_scale = 1;
  Kernel m_kernel = nullptr;
};

} // namespace nearscape::index
