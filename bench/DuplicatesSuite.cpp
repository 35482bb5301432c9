// nearscape-bench duplicates: every pair within a threshold (given, or a quantile of the items'
// nearest-other distances), ours against Faiss's IndexFlat range_search at the same threshold
// in the same run; the pair counts must agree.
#include "DuplicatesSuite.h"

#include "BenchUtil.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

namespace nearscape::bench {
namespace {

struct Args {
  std::string data, label, backend = "auto", peer = "faiss", python = "/usr/bin/python3",
                           peersDir = NEARSCAPE_PEERS_DIR, metric = "l2", jsonOut;
  std::optional<double> threshold, quantileOf;
  int repeats = 1, threads = 0;
  DuplicateParams params;
};

int run(const Args& a) {
  OpenOptions options;
  options.loadThumbnails = false;
  const Dataset ds = openDataset(a.data, options);
  const Metric metric = *parseMetric(a.metric);
  Context context;
  context.backend = *parseBackend(a.backend);
  context.threads = a.threads;
  const MatrixView<float> x = ds.vectors.view();
  std::vector<double> times;
  NearPairs last;
  double reach = 0;
  for (int r = 0; r < a.repeats; ++r) {
    const auto started = std::chrono::steady_clock::now();
    if (a.quantileOf) {
      QuantilePairs q =
          pairsWithinQuantile(x, *a.quantileOf, metric, context, noJobControl(), a.params);
      reach = q.reach;
      last = std::move(q.pairs);
      std::erase_if(last.pairs, [&](const NearPair& p) { return p.distance > last.threshold; });
    } else {
      last = pairsWithin(x, *a.threshold, metric, context, noJobControl(), a.params);
    }
    times.push_back(secondsSince(started));
  }
  const double ours = median(times);
  Row row{ds.path + " " + std::to_string(ds.size()) + " × " + std::to_string(ds.dim()), ours, "", 0,
          ""};
  nlohmann::ordered_json j;
  j["data"] = a.label.empty() ? ds.path : a.label;
  j["rows"] = ds.size();
  j["dim"] = ds.dim();
  j["metric"] = a.metric;
  j["threshold"] = last.threshold;
  if (a.quantileOf) {
    j["quantile"] = *a.quantileOf;
    j["searched_up_to"] = reach;
  }
  j["pairs"] = last.pairs.size();
  j["groups"] = groupPairs(ds.size(), last.pairs, last.threshold).groups.size();
  j["ours_seconds"] = ours;
  j["ours_run"] = last.report.describe();
  j["tile_pairs_computed"] = last.tilePairs;
  j["tile_pairs"] = last.tilePairsAll;
  j["tile_rows"] = a.params.tileRows;
  j["box_dims"] = a.params.boxDims;
  if (a.peer == "faiss") {
    const std::string npy =
        ds.format == "npy" ? ds.path : writeTemporaryNpy(x, "duplicates-base.npy");
    char radius[64];
    std::snprintf(radius, sizeof radius, "%.17g", last.threshold);
    const nlohmann::json p = runPeer(
        a.python + " " + a.peersDir + "/faiss_range.py " + npy + " " + radius + " --metric " +
        a.metric + (a.threads > 0 ? " --threads " + std::to_string(a.threads) : std::string()));
    if (npy != ds.path)
      std::filesystem::remove(npy);
    row.peer =
        "Faiss IndexFlat range_search (" + std::to_string(p.at("threads").get<int>()) + " threads)";
    row.theirs = p.at("seconds").get<double>();
    const std::int64_t theirPairs = p.at("pairs").get<std::int64_t>();
    j["faiss_seconds"] = row.theirs;
    j["faiss_pairs"] = theirPairs;
    row.note =
        std::to_string(last.pairs.size()) + " pairs (Faiss " + std::to_string(theirPairs) + ")";
  } else {
    row.note = std::to_string(last.pairs.size()) + " pairs";
  }
  printTable("near-duplicates: every pair within " + std::to_string(last.threshold) + " (" +
                 last.report.describe() + ")",
             {row});
  if (!a.jsonOut.empty())
    writeJsonOutput(a.jsonOut, j, {a.data});
  std::cout << j.dump() << '\n';
  return 0;
}

} // namespace

void addDuplicatesSuite(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "duplicates", "Every pair within a threshold: ours against Faiss's range_search");
  cmd->add_option("--data", a->data, "Data file or IDX folder")->required();
  cmd->add_option("--label", a->label, "Name in the output");
  auto* t = cmd->add_option("--threshold", a->threshold, "Distance threshold");
  auto* q = cmd->add_option("--quantile", a->quantileOf, "Quantile of nearest-other distances");
  t->excludes(q);
  cmd->add_option("--metric", a->metric, "l2, ip or cos (Faiss: l2, ip)")->capture_default_str();
  cmd->add_option("--backend", a->backend, "auto, cpu or cuda")->capture_default_str();
  cmd->add_option("--peer", a->peer, "faiss or none")->capture_default_str();
  cmd->add_option("--python", a->python, "Python with the peers' modules")->capture_default_str();
  cmd->add_option("--peers-dir", a->peersDir, "Folder of the peer scripts");
  cmd->add_option("--repeats", a->repeats, "Runs of ours (median)")->capture_default_str();
  cmd->add_option("--threads", a->threads, "CPU threads, ours and Faiss's (0: all)");
  cmd->add_option("--json-out", a->jsonOut, "Write the result here");
  cmd->add_option("--tile-rows", a->params.tileRows, "Items per tile")->capture_default_str();
  cmd->add_option("--box-dims", a->params.boxDims, "Box directions")->capture_default_str();
  cmd->callback([a, &exitCode] {
    if (!a->threshold && !a->quantileOf)
      throw CLI::ValidationError("give --threshold or --quantile");
    exitCode = run(*a);
  });
}

} // namespace nearscape::bench
