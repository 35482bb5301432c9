#pragma once
/// @file HeldOutSweep.h
/// The whole index trade-off study as one engine call: queries held out of the data (or given),
/// their exact ground truth, the index built (or loaded), its search settings swept. The CLI's
/// `sweep`, the GUI's sweep panel and `nearscape-bench index` all run this pipeline.

#include "nearscape/core/Sampling.h"
#include "nearscape/index/Sweep.h"

#include <functional>
#include <memory>
#include <optional>

namespace nearscape {

struct HeldOutSweepOptions {
  /// The index built (its alternative is its kind) and its build parameters; empty ones take
  /// their defaults. Default: the graph index.
  IndexBuildParams build;
  Metric metric = Metric::L2;
  /// Rows of the data held out as queries (seeded with the context's seed), at most half the
  /// data; 0: kDefaultHoldout or half the data, whichever is fewer. Ignored when queries are
  /// given.
  std::int64_t holdout = 0;
  std::optional<std::uint64_t> holdoutSeed; ///< the hold-out's seed; default: the context's
  /// A data row held out beside the sample, whose missed neighbours each row lists (the item a
  /// person chose); -1: sweep.missedQuery names the query instead.
  std::int64_t listMissesOf = -1;
  SweepOptions sweep; ///< k, grid, batch, latency queries, the query whose misses are listed
  /// Also time the exact search on the same queries (measureExactSearch): the reference every
  /// setting is judged against (a setting slower than it is not worth having). A study of several
  /// runs over one split measures it once.
  bool exactReference = false;
};

/// The hold-out when none is asked for (fewer when the data has fewer than twice as many rows).
inline constexpr std::int64_t kDefaultHoldout = 1000;

/// The rows held out of `rows` for a hold-out of `holdout` (HeldOutSweepOptions::holdout: 0 is
/// the default). Throws InvalidArgument: a hold-out below 0 or beyond half the data (the rest is
/// the index), or data too small to hold any out.
std::int64_t holdoutCount(std::int64_t holdout, std::int64_t rows);

struct HeldOutSweep;

/// Ways to replace a stage (for callers that have it already) and to watch the pipeline.
struct HeldOutSweepStages {
  /// Exact ground truth (queries × ≥k ids into the base); empty: our exact search.
  std::function<Matrix<std::int32_t>(const MatrixView<float>& queries,
                                     const MatrixView<float>& base)>
      truth;
  /// The index over the base; empty: buildIndex(base, options.metric, options.build, …).
  std::function<std::unique_ptr<AnnIndex>(const MatrixView<float>& base, JobControl& job)> index;
  /// Once the queries are chosen, before any work: the split (`held`, `missedQuery`).
  std::function<void(const HeldOutSweep&)> onSplit;
  /// Each row as soon as it is measured (the GUI plots rows live).
  std::function<void(const SweepRow&)> onRow;
};

struct HeldOutSweep {
  HeldOut held;                    ///< the split; empty when queries were given
  MatrixView<float> base, queries; ///< views of `held` or of the caller's matrices
  Matrix<std::int32_t> truth;
  std::unique_ptr<AnnIndex> index;
  std::vector<SweepRow> rows; ///< with the Pareto front marked
  double truthSeconds = 0, indexSeconds = 0;
  /// The exact search measured on the same queries (options.exactReference), and where it ran.
  std::optional<SweepRow> exact;
  Backend exactBackend = Backend::Cpu;
  /// A base id as a row of the data (base ids are rows of the base, which lacks the queries).
  std::int64_t dataRow(std::int32_t baseId) const {
    return held.baseRows.empty() ? std::int64_t(baseId) : held.baseRows[std::size_t(baseId)];
  }
  std::int64_t missedQuery = 0; ///< the query whose missed neighbours the rows list
  /// That query as a data row (held out), or as a row of the given queries.
  std::int64_t missedQueryRow() const {
    return held.queryRows.empty() ? missedQuery : held.queryRows[std::size_t(missedQuery)];
  }

  HeldOutSweep() = default;
  HeldOutSweep(HeldOutSweep&&) = default; ///< the views stay valid: `held`'s buffers move
  HeldOutSweep& operator=(HeldOutSweep&&) = default;
};

/// Runs the pipeline on `data`: with `queries`, those against the whole data; without, a seeded
/// hold-out (the same rows for the same count, seed and listMissesOf: a later run over that
/// split may supply the earlier truth through `stages.truth`). Progress: truth 0–10%, index
/// 10–50%, sweep 50–100% (with the exact reference: truth 0–10%, exact 10–20%, index 20–55%,
/// sweep 55–100%). Throws InvalidArgument (too
/// little data to hold queries out, bad parameters), Cancelled, and what the stages throw.
HeldOutSweep heldOutSweep(const MatrixView<float>& data,
                          const std::optional<MatrixView<float>>& queries,
                          const HeldOutSweepOptions& options, const Context& context,
                          JobControl& job = noJobControl(), const HeldOutSweepStages& stages = {});

} // namespace nearscape
