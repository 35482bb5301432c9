// nearscape-cli duplicates: groups of near-duplicate items — every pair within a distance found by
// an exact range search over all items, joined into connected components.
#include "Commands.h"
#include "CommonOptions.h"
#include "ResultJson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>

namespace nearscape::cli {
namespace {

struct DuplicatesArgs {
  std::string path, metric, out, keep, pairsOut;
  std::optional<double> threshold, quantileOf;
  std::int64_t show = 10;
  DuplicateParams params;
  CommonOptions common;
};

void writeText(const std::string& path, const std::string& text) {
  writeFileAtomically(path, [&](std::FILE* f) {
    if (std::fwrite(text.data(), 1, text.size(), f) != text.size())
      throw IoError(path + ": write failed");
  });
}

std::string pairsTsv(const std::vector<NearPair>& pairs) {
  std::string out = "a\tb\tdistance\n";
  char line[64];
  for (const NearPair& p : pairs) {
    std::snprintf(line, sizeof line, "%d\t%d\t%.17g\n", p.a, p.b, p.distance);
    out += line;
  }
  return out;
}

int runDuplicates(const DuplicatesArgs& a) {
  const Context context = a.common.context();
  JobControl& job = commandJob();
  OutputSet outputs; // checked now, written at the end or not at all
  addDataInput(outputs, a.path);
  outputs.addOutput(a.out);
  outputs.addOutput(a.keep);
  outputs.addOutput(a.pairsOut);
  NEARSCAPE_EXPECTS(a.threshold.has_value() != a.quantileOf.has_value(),
                    "give either --threshold or --quantile");
  NEARSCAPE_EXPECTS(!a.quantileOf || (*a.quantileOf >= 0 && *a.quantileOf <= 1),
                    "--quantile must lie in [0, 1]");
  OpenOptions options;
  options.loadThumbnails = false;
  const Dataset ds = openInput(a.path, options, job);
  const Metric metric = chooseMetric(a.metric, ds);

  // The threshold: given, or the quantile of every item's exact distance to its nearest other.
  NearPairs pairs;
  double reach = 0;
  if (a.quantileOf) {
    QuantilePairs found =
        pairsWithinQuantile(ds.vectors.view(), *a.quantileOf, metric, context, job, a.params);
    reach = found.reach;
    pairs = std::move(found.pairs);
    std::erase_if(pairs.pairs, [&](const NearPair& p) { return p.distance > pairs.threshold; });
  } else {
    pairs = pairsWithin(ds.vectors.view(), *a.threshold, metric, context, job, a.params);
  }
  const double threshold = pairs.threshold;
  const DuplicateGroups groups = groupPairs(ds.size(), pairs.pairs, threshold);
  job.check();
  if (!a.out.empty())
    writeText(a.out, duplicateGroupsTsv(groups, ds));
  if (!a.keep.empty())
    writeText(a.keep, keepOnePerGroup(groups, ds.size()));
  if (!a.pairsOut.empty())
    writeText(a.pairsOut, pairsTsv(pairs.pairs));
  outputs.commit();

  const std::size_t shown = std::min<std::size_t>(groups.groups.size(), std::size_t(a.show));
  if (a.common.json) {
    nlohmann::ordered_json j =
        results::duplicatesJson(ds.size(), metric, pairs, groups, a.quantileOf, reach);
    nlohmann::json listed = nlohmann::json::array();
    for (std::size_t g = 0; g < shown; ++g)
      listed.push_back(
          {{"group", g}, {"size", groups.groups[g].size()}, {"ids", groups.groups[g]}});
    j["top_groups"] = listed;
    j.update(results::duplicatesWorkJson(pairs));
    j["backend"] = pairs.backend == Backend::Cuda ? "cuda" : "cpu";
    j["seconds"] = pairs.seconds;
    j["out"] = a.out;
    j["keep"] = a.keep;
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return kExitOk;
  }
  std::cout << "near-duplicates of " << ds.size() << " items (" << metricName(metric)
            << ", distance ≤ " << threshold;
  if (a.quantileOf)
    std::cout << ", the " << *a.quantileOf << " quantile of nearest-neighbour distances";
  std::cout << "): " << pairs.pairs.size() << " pairs, " << groups.groups.size() << " groups of "
            << groups.itemsInGroups() << " items (" << groups.redundantItems()
            << " beyond one per group)\n";
  std::cout << "  " << pairs.report.describe() << ", " << std::fixed << std::setprecision(2)
            << pairs.seconds << " s\n";
  std::cout.unsetf(std::ios::fixed);
  for (std::size_t g = 0; g < shown; ++g) {
    std::cout << "  group " << g << " (" << groups.groups[g].size() << "):";
    for (std::size_t m = 0; m < std::min<std::size_t>(8, groups.groups[g].size()); ++m)
      std::cout << ' ' << groups.groups[g][m];
    if (groups.groups[g].size() > 8)
      std::cout << " …";
    std::cout << "  " << printableText(ds.labelOf(groups.groups[g].front()), 60) << '\n';
  }
  for (const std::string& path : {a.out, a.keep, a.pairsOut})
    if (!path.empty())
      std::cout << "wrote " << path << '\n';
  return kExitOk;
}

} // namespace

void addDuplicatesCommand(CLI::App& app, int& exitCode) {
  auto a = std::make_shared<DuplicatesArgs>();
  CLI::App* cmd = app.add_subcommand(
      "duplicates", "Groups of near-duplicate items: every pair within a distance (an exact range "
                    "search over all items), joined into connected groups");
  cmd->add_option("path", a->path, "Data file or IDX folder")->required();
  auto* threshold = cmd->add_option(
      "--threshold", a->threshold,
      "Largest distance of a duplicate pair, in the metric's distance (Euclidean for l2, 1 − cos, "
      "−ip)");
  auto* q = cmd->add_option("--quantile", a->quantileOf,
                            "Threshold at this quantile of every item's exact distance to its "
                            "nearest other item (0–1; linear interpolation, as NumPy)");
  threshold->excludes(q);
  cmd->add_option("--metric", a->metric, "l2, ip or cos (default: the file's, else l2)");
  cmd->add_option("--out", a->out,
                  "Write the groups here (TSV: group, id, then the label and metadata columns)");
  cmd->add_option("--keep", a->keep,
                  "Write the ids to keep, one per group plus every item in none (one per line)");
  cmd->add_option("--pairs", a->pairsOut, "Write every pair found here (TSV: a, b, distance)");
  cmd->add_option("--show", a->show, "How many of the largest groups to list")
      ->check(atLeast(0))
      ->capture_default_str();
  cmd->add_option("--tile-rows", a->params.tileRows,
                  "Items per tile (speed only: smaller tiles prune finer, larger run faster)")
      ->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 20))
      ->capture_default_str();
  cmd->add_option("--box-dims", a->params.boxDims,
                  "Principal directions of the tiles' boxes (speed only)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--max-pairs", a->params.maxPairs,
                  "Refuse thresholds that join more pairs than this (0: 100 million)")
      ->check(atLeast(0));
  a->common.addTo(*cmd);
  cmd->callback([a, &exitCode] {
    exitCode = runGuarded([&] { return runDuplicates(*a); }, {a->path, std::string()});
  });
}

} // namespace nearscape::cli
