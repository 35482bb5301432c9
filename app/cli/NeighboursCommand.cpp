// nearscape-cli neighbours: one item's exact nearest neighbours — the explorer's item inspector —
// and, with a map, where the map puts each of them (its map rank) and which are "far in the map"
// (layout/FarInMap.h: the map's worst-kept fifth of neighbour links).
#include "Commands.h"
#include "CommonOptions.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace nearscape::cli {
namespace {

struct NeighboursArgs {
  std::string path, metric, map;
  std::int64_t item = 0;
  int k = 10;
  std::int64_t sample = 256;
  CommonOptions common;
};

/// The exact k nearest other rows of each of `rows` (rows.size() × k, the row itself dropped).
Matrix<std::int32_t> nearestOthers(const Dataset& ds, const std::vector<std::int64_t>& rows, int k,
                                   Metric metric, const Context& context, JobControl& job,
                                   Matrix<float>* distances = nullptr) {
  const std::int64_t d = ds.dim();
  std::vector<float> queries(rows.size() * std::size_t(d));
  for (std::size_t r = 0; r < rows.size(); ++r)
    std::copy_n(ds.vectors.row(rows[r]), d, queries.begin() + std::ptrdiff_t(r * std::size_t(d)));
  const KnnResult nn = knnSearch({queries.data(), std::int64_t(rows.size()), d}, ds.vectors.view(),
                                 k + 1, metric, context, job);
  std::vector<std::int32_t> ids;
  std::vector<float> dists;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    int taken = 0;
    for (int c = 0; c <= k && taken < k; ++c) {
      if (nn.ids.row(std::int64_t(r))[c] == std::int32_t(rows[r]))
        continue;
      ids.push_back(nn.ids.row(std::int64_t(r))[c]);
      dists.push_back(nn.distances.row(std::int64_t(r))[c]);
      ++taken;
    }
    if (taken < k) { // the row itself was not among them (duplicates): drop the last
      ids.push_back(nn.ids.row(std::int64_t(r))[k]);
      dists.push_back(nn.distances.row(std::int64_t(r))[k]);
    }
  }
  if (distances)
    *distances = Matrix<float>(std::move(dists), std::int64_t(rows.size()), k);
  return Matrix<std::int32_t>(std::move(ids), std::int64_t(rows.size()), k);
}

int runNeighbours(const NeighboursArgs& a) {
  const Context context = a.common.context();
  JobControl& job = commandJob();
  OpenOptions options;
  options.loadThumbnails = false;
  const Dataset ds = openInput(a.path, options, job);
  const Metric metric = chooseMetric(a.metric, ds);
  NEARSCAPE_EXPECTS(a.item >= 0 && a.item < ds.size(),
                    "--item must lie in [0, " + std::to_string(ds.size() - 1) + "]");
  NEARSCAPE_EXPECTS(a.k >= 1 && a.k < ds.size(),
                    "--k must lie in [1, " + std::to_string(ds.size() - 1) + "]");
  NEARSCAPE_EXPECTS(a.sample >= 1, "--sample must be at least 1");
  Matrix<float> distances;
  const Matrix<std::int32_t> ids =
      nearestOthers(ds, {a.item}, a.k, metric, context, job, &distances);
  std::vector<std::int32_t> list(ids.row(0), ids.row(0) + a.k);

  std::vector<std::int64_t> ranks;
  std::int64_t limit = -1;
  if (!a.map.empty()) {
    const Matrix<float> map = readNpyFloat(a.map);
    NEARSCAPE_EXPECTS(map.rows() == ds.size() && (map.cols() == 2 || map.cols() == 3),
                      "--map must hold " + std::to_string(ds.size()) +
                          " rows of 2 or 3 "
                          "coordinates; " +
                          a.map + " holds " + std::to_string(map.rows()) + " × " +
                          std::to_string(map.cols()));
    ranks = mapRanks(map.view(), a.item, list);
    const std::vector<std::int64_t> sample = seededSample(ds.size(), a.sample, 42);
    const Matrix<std::int32_t> truth = nearestOthers(ds, sample, a.k, metric, context, job);
    limit = farInMapRankLimit(map.view(), sample, truth.view(), 0.2, effectiveThreads(context));
  }
  auto far = [&](std::size_t i) { return limit >= 0 && ranks[i] > limit; };

  if (a.common.json) {
    nlohmann::ordered_json j;
    j["item"] = a.item;
    j["k"] = a.k;
    j["metric"] = std::string(metricName(metric));
    nlohmann::ordered_json items = nlohmann::ordered_json::array();
    std::int64_t farCount = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
      nlohmann::ordered_json e = {{"id", list[i]}, {"distance", distances.row(0)[i]}};
      if (limit >= 0) {
        e["map_rank"] = ranks[i];
        e["far_in_map"] = far(i);
        farCount += far(i) ? 1 : 0;
      }
      e["label"] = ds.labelOf(list[i]);
      items.push_back(e);
    }
    j["neighbours"] = items;
    if (limit >= 0) {
      j["far_in_map_rank_limit"] = limit;
      j["far_in_map"] = farCount;
    }
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return kExitOk;
  }
  std::cout << "the " << a.k << " exact nearest neighbours of item " << a.item << " ("
            << metricName(metric) << ")";
  if (limit >= 0)
    std::cout << "; far in the map: map rank beyond " << limit
              << " (the map's worst-kept fifth of neighbour links)";
  std::cout << ":\n";
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::cout << "  " << list[i] << "  distance " << distances.row(0)[i];
    if (limit >= 0)
      std::cout << "  map rank " << ranks[i] << (far(i) ? "  far in map" : "");
    std::cout << "  " << printableText(ds.labelOf(list[i]), 80) << '\n';
  }
  return kExitOk;
}

} // namespace

void addNeighboursCommand(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<NeighboursArgs>();
  CLI::App* cmd = app.add_subcommand(
      "neighbours", "One item's exact nearest neighbours and, with a map, which the map places "
                    "far (the explorer's item inspector)");
  cmd->add_option("path", a->path, "Data file or IDX folder")->required();
  cmd->add_option("--item", a->item, "The item")->required();
  cmd->add_option("--k", a->k, "Neighbours listed")->capture_default_str();
  cmd->add_option("--metric", a->metric, "l2, ip or cos (default: the file's, else l2)");
  cmd->add_option("--map", a->map, "The map (.npy, n × 2 or 3), as `layout --out` writes it");
  cmd->add_option("--sample", a->sample,
                  "Items whose neighbour links set the map's far-in-map rank limit")
      ->capture_default_str();
  a->common.addTo(*cmd);
  cmd->callback([a, &exitCode] { exitCode = runGuarded([&] { return runNeighbours(*a); }); });
}

} // namespace nearscape::cli
