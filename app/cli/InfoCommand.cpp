// nearscape-cli info: what a file holds, without changing it.
#include "Commands.h"
#include "CommonOptions.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>

namespace nearscape::cli {
namespace {

struct InfoArgs {
  std::string path;
  std::string meta;
  CommonOptions common;
};

struct NormStats {
  double min = 0, mean = 0, max = 0;
  std::int64_t finiteRows = 0;
};

NormStats normStats(const std::vector<float>& squared) {
  NormStats s;
  s.min = INFINITY;
  s.max = -INFINITY;
  double sum = 0;
  for (float q : squared) {
    if (!std::isfinite(q))
      continue;
    const double v = std::sqrt(double(q));
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    sum += v;
    ++s.finiteRows;
  }
  if (s.finiteRows > 0)
    s.mean = sum / double(s.finiteRows);
  else
    s.min = s.max = 0;
  return s;
}

int runInfo(const InfoArgs& args) {
  const Context context = args.common.context();
  const auto t0 = std::chrono::steady_clock::now();
  OpenOptions options;
  options.metaPath = args.meta;
  JobControl& job = commandJob();
  const Dataset ds = openDataset(args.path, options, job);
  const auto t1 = std::chrono::steady_clock::now();
  const NonFiniteScan nonFinite = scanNonFinite(ds.vectors.view());
  const NormStats norms = normStats(rowNormsSquared(ds.vectors.view(), context));
  const auto t2 = std::chrono::steady_clock::now();
  const double openSeconds = std::chrono::duration<double>(t1 - t0).count();
  const double scanSeconds = std::chrono::duration<double>(t2 - t1).count();

  std::map<std::string, std::int64_t> labelCounts;
  for (std::size_t i = 0; i < ds.labels.size(); ++i)
    ++labelCounts[ds.labelNames.at(static_cast<std::size_t>(ds.labels[i]))];

  if (args.common.json) {
    nlohmann::ordered_json j;
    j["path"] = ds.path;
    j["format"] = ds.format;
    j["dtype"] = ds.sourceDtype;
    j["rows"] = ds.size();
    j["dim"] = ds.dim();
    j["memory_mapped"] = ds.memoryMapped;
    j["content_hash"] = ds.contentHash;
    j["metric"] = ds.metric ? nlohmann::json(std::string(metricName(*ds.metric))) : nullptr;
    j["non_finite"] = {{"count", nonFinite.count},
                       {"first_row", nonFinite.count ? nlohmann::json(nonFinite.firstRow) : nullptr},
                       {"first_col", nonFinite.count ? nlohmann::json(nonFinite.firstCol) : nullptr}};
    j["norms"] = {{"min", norms.min}, {"mean", norms.mean}, {"max", norms.max}};
    j["labels"] = {{"source", ds.labelSource}, {"count", ds.labelNames.size()}};
    nlohmann::ordered_json counts = nlohmann::ordered_json::object();
    for (const auto& name : ds.labelNames)
      counts[name] = labelCounts[name];
    j["label_counts"] = counts;
    j["metadata_columns"] = ds.metadata.columnNames;
    j["text_column"] =
        ds.textColumn >= 0 ? nlohmann::json(ds.metadata.columnNames[ds.textColumn]) : nullptr;
    j["thumbnails"] = ds.thumbnails.empty()
                          ? nlohmann::json(nullptr)
                          : nlohmann::json({{"width", ds.thumbnails.width},
                                            {"height", ds.thumbnails.height},
                                            {"channels", ds.thumbnails.channels}});
    j["queries"] = ds.queries.empty() ? nlohmann::json(nullptr)
                                      : nlohmann::json({ds.queries.rows(), ds.queries.cols()});
    j["ground_truth"] = ds.truthIds.empty()
                            ? nlohmann::json(nullptr)
                            : nlohmann::json({ds.truthIds.rows(), ds.truthIds.cols()});
    j["backend"] = describeBackend(context);
    j["timings"] = {{"open_s", openSeconds}, {"scan_s", scanSeconds}};
    std::cout << j.dump(2) << '\n';
    return kExitOk;
  }

  std::cout << "path          " << ds.path << '\n'
            << "format        " << ds.format << " (" << ds.sourceDtype
            << (ds.memoryMapped ? ", memory-mapped" : "") << ")\n"
            << "shape         " << ds.size() << " x " << ds.dim() << '\n'
            << "content hash  " << ds.contentHash << '\n';
  if (ds.metric)
    std::cout << "metric        " << metricName(*ds.metric) << '\n';
  std::cout << "NaN/Inf       " << nonFinite.count;
  if (nonFinite.count)
    std::cout << " (first at row " << nonFinite.firstRow << ", column " << nonFinite.firstCol << ")";
  std::cout << '\n'
            << std::setprecision(6) << "norms         min " << norms.min << ", mean " << norms.mean
            << ", max " << norms.max << '\n';
  if (!ds.queries.empty())
    std::cout << "queries       " << ds.queries.rows() << " x " << ds.queries.cols() << '\n';
  if (!ds.truthIds.empty())
    std::cout << "ground truth  " << ds.truthIds.rows() << " x " << ds.truthIds.cols() << '\n';
  if (!ds.thumbnails.empty())
    std::cout << "thumbnails    " << ds.thumbnails.width << " x " << ds.thumbnails.height << '\n';
  if (!ds.metadata.empty()) {
    std::cout << "metadata      ";
    for (std::size_t c = 0; c < ds.metadata.columnNames.size(); ++c)
      std::cout << (c ? ", " : "") << ds.metadata.columnNames[c];
    std::cout << '\n';
  }
  if (ds.hasLabels()) {
    std::cout << "labels        " << ds.labelNames.size() << " from " << ds.labelSource << '\n';
    for (const auto& name : ds.labelNames)
      std::cout << "  " << std::setw(8) << labelCounts[name] << "  " << name << '\n';
  }
  std::cout << "backend       " << describeBackend(context) << '\n'
            << "time          open " << openSeconds << " s, scan " << scanSeconds << " s\n";
  return kExitOk;
}

} // namespace

void addInfoCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand("info", "Shape, types, labels, norms, NaN/Inf and content hash");
  cmd->add_option("path", args->path, "Data file or IDX folder")->required();
  cmd->add_option("--meta", args->meta, "Metadata TSV (TensorBoard projector rules)");
  args->common.addTo(*cmd);
  cmd->callback([args, &exitCode] { exitCode = runGuarded([&] { return runInfo(*args); }); });
}

} // namespace nearscape::cli
