#pragma once
// The graph index's search on the CPU (internal): best-first walks of the upper layer, then of
// the full graph, one query per thread at a time.

#include "nearscape/core/JobControl.h"
#include "nearscape/core/MatrixView.h"
#include "nearscape/core/Metric.h"

#include <cstdint>
#include <vector>

namespace nearscape::index {

class HalfRows;

/// What a walk reads: the working vectors (float32, n × d), their float16 copy where the CPU has
/// one (HalfRows.h; null: the walk scores the float32 rows), the graph (n × stride ids, −1
/// padded), and the upper layer (GraphIndex.h: the sample's ids and its graph, sample-local ids,
/// the same stride).
struct GraphLayers {
  MatrixView<float> vectors;
  const HalfRows* half = nullptr;
  const std::int32_t* graph = nullptr;
  int stride = 0;
  const std::vector<std::int32_t>* sample = nullptr;
  const std::vector<std::int32_t>* upper = nullptr;
  Metric metric = Metric::L2;
};

/// The k nearest of each working query (rows × d): a walk with a pool of `ef` nodes that follows
/// the first `degree` edges of each node, from the upper layer's first `entries` nodes. The pool
/// it ends with is scored on the float32 vectors, so `ids` (rows × k, −1 padded) are ordered by
/// float32 scores (ties: the smaller id) and `distances` are docs/design.md's. Checks `job`
/// between batches of queries; throws Cancelled.
void searchGraphCpu(const GraphLayers& layers, const MatrixView<float>& queries, int k, int ef,
                    int degree, int entries, int threads, JobControl& job, std::int32_t* ids,
                    float* distances);

} // namespace nearscape::index
