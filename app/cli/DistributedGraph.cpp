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

bool isLeadRank() {
  const Ranks* ranks = commandRanks();
  return !ranks || ranks->rank() == 0;
}

void refuseUnderRanks(bool given, const std::string& what) {
  if (given && commandRanks())
    throw InvalidArgument(what + " runs as one process; under mpirun only the kNN graph is "
                                 "distributed");
}

KnnResult graphOnRanks(const MatrixView<float>& data, int k, Metric metric, GraphMethod method,
                       const Context& context, JobControl& job, const NnDescentParams& params,
                       nlohmann::ordered_json& shares) {
  Ranks* ranks = commandRanks();
  NEARSCAPE_EXPECTS(ranks, "graphOnRanks needs an MPI job");
  DistributedGraph built =
      distributedKnnGraph(data, k, metric, method, context, *ranks, job, params);
  shares = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < built.shares.size(); ++r) {
    const RankShare& s = built.shares[r];
    shares.push_back({{"rank", r},
                      {"rows", s.rows},
                      {"seconds", s.seconds},
                      {"wait_s", s.waitSeconds},
                      {"merges", s.merges}});
  }
  return std::move(built.graph);
}

} // namespace nearscape::cli
