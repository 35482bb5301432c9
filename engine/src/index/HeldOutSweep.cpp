#include "nearscape/index/HeldOutSweep.h"

#include "nearscape/core/Error.h"
#include "nearscape/knn/Knn.h"

#include <algorithm>
#include <chrono>

namespace nearscape {
namespace {

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

std::int64_t holdoutCount(std::int64_t holdout, std::int64_t rows) {
  NEARSCAPE_EXPECTS(holdout >= 0,
                    "the hold-out must be at least 1 row, not " + std::to_string(holdout));
  const std::int64_t most = rows / 2;
  NEARSCAPE_EXPECTS(most >= 1, "the data is too small to hold queries out of it (" +
                                   std::to_string(rows) + " rows); give queries");
  // Asked for, it is what was asked: more than half would leave the index less than the queries.
  NEARSCAPE_EXPECTS(holdout <= most, "a hold-out of " + std::to_string(holdout) +
                                         " rows is more than half the data's " +
                                         std::to_string(rows) + " rows: at most " +
                                         std::to_string(most) + ", or give queries");
  return holdout > 0 ? holdout : std::min(kDefaultHoldout, most);
}

HeldOutSweep heldOutSweep(const MatrixView<float>& data,
                          const std::optional<MatrixView<float>>& queries,
                          const HeldOutSweepOptions& options, const Context& context,
                          JobControl& job, const HeldOutSweepStages& stages) {
  const int k = options.sweep.k;
  NEARSCAPE_EXPECTS(k >= 1, "k must be at least 1");
  HeldOutSweep out;
  out.missedQuery = options.sweep.missedQuery;
  if (queries) {
    out.base = data;
    out.queries = *queries;
  } else {
    const std::int64_t count = holdoutCount(options.holdout, data.rows);
    out.held =
        holdOutRows(data, count, options.holdoutSeed.value_or(context.seed), options.listMissesOf);
    out.base = out.held.baseView();
    out.queries = out.held.queryView();
    const auto at =
        std::find(out.held.queryRows.begin(), out.held.queryRows.end(), options.listMissesOf);
    if (at != out.held.queryRows.end())
      out.missedQuery = at - out.held.queryRows.begin();
  }

  if (stages.onSplit)
    stages.onSplit(out);

  JobControl truthStage = job.sub(0.0, 0.1);
  truthStage.progress(0.0, "exact ground truth");
  auto t = std::chrono::steady_clock::now();
  out.truth = stages.truth
                  ? stages.truth(out.queries, out.base)
                  : knnSearch(out.queries, out.base, k, options.metric, context, truthStage).ids;
  out.truthSeconds = secondsSince(t);

  const bool exact = options.exactReference;
  if (exact) {
    JobControl exactStage = job.sub(0.1, 0.2);
    SweepOptions timing = options.sweep;
    timing.missedQuery = out.missedQuery;
    out.exact = measureExactSearch(out.queries, out.base, out.truth.view(), options.metric, timing,
                                   context, exactStage, &out.exactBackend);
  }

  JobControl indexStage = exact ? job.sub(0.2, 0.55) : job.sub(0.1, 0.5);
  indexStage.progress(0.0, "building the " + std::string(indexKind(options.build)) + " index");
  t = std::chrono::steady_clock::now();
  out.index = stages.index
                  ? stages.index(out.base, indexStage)
                  : buildIndex(out.base, options.metric, options.build, context, indexStage);
  out.indexSeconds = secondsSince(t);

  SweepOptions sweep = options.sweep;
  sweep.missedQuery = out.missedQuery;
  JobControl sweepStage = exact ? job.sub(0.55, 1.0) : job.sub(0.5, 1.0);
  out.rows = runSweep(*out.index, out.queries, out.base, out.truth.view(), sweep, stages.onRow,
                      sweepStage);
  return out;
}

} // namespace nearscape
