#pragma once
// knn, layout and path under mpirun: the graph built by every rank, the rest on rank 0.

#include "nearscape/Nearscape.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>

namespace nearscape::cli {

/// Under mpirun, runs `body` as phase `what` on every rank and agrees on the outcome (runOnRanks:
/// one rank's error ends every rank's command); else simply runs it.
void onEveryRank(const std::string& what, const std::function<void()>& body);

/// True where outputs are written and results printed: one process, or rank 0 of the job.
bool isLeadRank();

/// Under mpirun, refuses what only one process does (--extend) with
/// InvalidArgument naming it; `what` is the option, `given` whether it was given.
void refuseUnderRanks(bool given, const std::string& what);

/// The kNN graph of `data` built by the ranks of the job (distributedKnnGraph): rank 0 gets the
/// graph and `shares` (one JSON row per rank: rank, rows, seconds, wait_s, merges); the other
/// ranks get an empty result.
KnnResult graphOnRanks(const MatrixView<float>& data, int k, Metric metric, GraphMethod method,
                       const Context& context, JobControl& job, const NnDescentParams& params,
                       nlohmann::ordered_json& shares);

/// The graph hook of a command that explores `data` (layout, path): the graph read from
/// `graphPath` when one is given, else the one the ranks built (`distributed`, handed over), else
/// none (the pipeline builds it). `data` and `distributed` must outlive the hook.
std::function<std::optional<KnnResult>(const Exploration&)>
suppliedGraph(const std::string& graphPath, const Dataset& data, Metric metric,
              std::optional<KnnResult>& distributed);

/// The exact search of `queries` in `base` by the ranks of the job (distributedKnnSearch), each
/// searching a slice of the base: rank 0 gets the result and `shares`; the others an empty one.
KnnResult searchOnRanks(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                        Metric metric, const Context& context, JobControl& job,
                        nlohmann::ordered_json& shares);

} // namespace nearscape::cli
