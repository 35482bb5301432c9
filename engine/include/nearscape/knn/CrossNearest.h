#pragma once
/// @file CrossNearest.h
/// The pairs that join a graph's components (what bridgeComponents asks for), at a cost that
/// follows the components' sizes rather than n².

#include "nearscape/core/Context.h"
#include "nearscape/core/MatrixView.h"
#include "nearscape/core/Metric.h"
#include "nearscape/core/Neighbours.h"

#include <cstdint>

namespace nearscape {

/// How nearestOutside searches. Exact means every member of a component against every row
/// outside it (GEMM tiles, float64 re-check): |C| · n distances, n² over all components.
struct CrossNearestParams {
  /// A round whose asked components hold R rows in all is searched exactly when R · n is at
  /// most this many distances (2^31: every row of a 46,000-row data set, about 10 s on 2
  /// cores at 64 dimensions); beyond it only the small components are (`smallComponent`).
  std::int64_t exactPairs = std::int64_t(1) << 31;
  /// Components of at most this many rows are always searched exactly (isolated items, small
  /// islands: the common case in real data, and cheap).
  std::int64_t smallComponent = 64;
  /// Descents per larger component (each starts from the member nearest to the centroid of one
  /// of the component's nearest other components).
  int starts = 8;
  /// Steps per descent at most (each: one scan of the rows outside, one of the component).
  int maxSteps = 8;
};

/// The NearestOutside callback over the rows of `data` (kept alive by the caller), on the CPU
/// with `context`'s threads. A component is searched exactly (CrossPair::exact) when it is small
/// or the round's exact search is affordable (CrossNearestParams); otherwise by descents: from a
/// start row a of the component C, b = a's exact nearest row outside C, then a = b's exact
/// nearest row in C, until a repeats. The distance falls at every step, and the descent ends on
/// a mutually nearest pair across C's boundary — a true cross-component edge of exact length,
/// at least as short as any pair the starts reach; the shortest over the starts is kept. The
/// cost is (starts · steps) scans of n rows and of |C| rows per component, not |C| · n. The
/// callback throws Cancelled.
NearestOutside nearestOutside(const MatrixView<float>& data, Metric metric, const Context& context,
                              const CrossNearestParams& params = {});

} // namespace nearscape
