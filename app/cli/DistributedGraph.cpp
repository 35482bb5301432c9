// knn, layout and path under mpirun (DistributedGraph.h).
#include "DistributedGraph.h"

#include "CommonOptions.h"

namespace nearscape::cli {

void onEveryRank(const std::string& what, const std::function<void()>& body) {
  if (Ranks* ranks = commandRanks())
    runOnRanks(*ranks, what, body);
  else
    body();
}

std::function<std::optional<KnnResult>(const Exploration&)>
suppliedGraph(const std::string& graphPath, const Dataset& data, Metric metric,
              std::optional<KnnResult>& distributed) {
  if (!graphPath.empty())
    return [graphPath, &data, metric](const Exploration&) {
      return std::optional<KnnResult>(readKnnGraph(graphPath, data, metric));
    };
  if (distributed)
    return [&distributed](const Exploration&) { return std::move(distributed); };
  return {};
}

bool isLeadRank() {
  const Ranks* ranks = commandRanks();
  return !ranks || ranks->rank() == 0;
}

void refuseUnderRanks(bool given, const std::string& what) {
  if (given && commandRanks())
    throw InvalidArgument(what +
                          " runs as one process; under mpirun only the kNN graph and the exact "
                          "search are distributed");
}

namespace {

nlohmann::ordered_json sharesJson(const std::vector<RankShare>& shares) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < shares.size(); ++r) {
    const RankShare& s = shares[r];
    rows.push_back({{"rank", r},
                    {"rows", s.rows},
                    {"seconds", s.seconds},
                    {"build_s", s.buildSeconds},
                    {"merge_s", s.mergeSeconds},
                    {"wait_s", s.waitSeconds},
                    {"merges", s.merges}});
  }
  return rows;
}

Ranks& jobRanks() {
  Ranks* ranks = commandRanks();
  NEARSCAPE_EXPECTS(ranks, "distributed work needs an MPI job");
  return *ranks;
}

} // namespace

KnnResult searchOnRanks(const MatrixView<float>& queries, const MatrixView<float>& base, int k,
                        Metric metric, const Context& context, JobControl& job,
                        nlohmann::ordered_json& shares) {
  DistributedSearch found =
      distributedKnnSearch(queries, base, k, metric, context, jobRanks(), job);
  shares = sharesJson(found.shares);
  return std::move(found.result);
}

KnnResult graphOnRanks(const MatrixView<float>& data, int k, Metric metric, GraphMethod method,
                       const Context& context, JobControl& job, const NnDescentParams& params,
                       nlohmann::ordered_json& shares) {
  DistributedGraph built =
      distributedKnnGraph(data, k, metric, method, context, jobRanks(), job, params);
  shares = sharesJson(built.shares);
  return std::move(built.graph);
}

} // namespace nearscape::cli
