// nearscape-cli info: what a file holds, without changing it.
#include "Commands.h"
#include "CommonOptions.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
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

/// Norms in float64 from the rows themselves: float32 squares of values beyond ~1e19 overflow
/// and those below ~1e-19 vanish, where info must still say how large the vectors are.
NormStats normStats(const MatrixView<float>& m, int threads) {
  NormStats s;
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  std::int64_t finite = 0;
#pragma omp parallel for num_threads(threads) reduction(min : lo) reduction(max : hi) \
    reduction(+ : sum, finite) schedule(static)
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const float* x = m.row(r);
    double squared = 0;
    bool ok = true;
    for (std::int64_t c = 0; c < m.cols; ++c) {
      ok = ok && std::isfinite(x[c]);
      squared += double(x[c]) * double(x[c]);
    }
    if (!ok)
      continue;
    const double v = std::sqrt(squared);
    lo = std::min(lo, v), hi = std::max(hi, v), sum += v, ++finite;
  }
  s.finiteRows = finite;
  if (finite > 0)
    s.min = lo, s.max = hi, s.mean = sum / double(finite);
  return s;
}

/// Each metadata column as "colour by" would read it: numbers with their range, or categories.
nlohmann::ordered_json describeColumns(const Dataset& ds) {
  nlohmann::ordered_json columns = nlohmann::ordered_json::array();
  for (std::size_t c = 0; c < ds.metadata.columnNames.size(); ++c) {
    const ColumnValues v = readColumn(ds, int(c));
    nlohmann::ordered_json j;
    j["name"] = printableText(ds.metadata.columnNames[c], 200);
    j["kind"] = v.numeric ? "numeric" : "categorical";
    if (v.numeric) {
      j["min"] = v.minimum;
      j["max"] = v.maximum;
    } else {
      j["distinct"] = v.categories.size();
    }
    columns.push_back(j);
  }
  return columns;
}

int runInfo(const InfoArgs& args) {
  const Context context = args.common.context();
  const auto t0 = std::chrono::steady_clock::now();
  OpenOptions options;
  options.metaPath = args.meta;
  JobControl& job = commandJob();
  const Dataset ds = openInput(args.path, options, job);
  const QueryShapes side = queryShapes(args.path); // from the headers: nothing more is read
  const auto t1 = std::chrono::steady_clock::now();
  const NonFiniteScan nonFinite = scanNonFinite(ds.vectors.view());
  const NormStats norms = normStats(ds.vectors.view(), effectiveThreads(context));
  const auto t2 = std::chrono::steady_clock::now();
  const double openSeconds = std::chrono::duration<double>(t1 - t0).count();
  const double scanSeconds = std::chrono::duration<double>(t2 - t1).count();

  // Image files named by the metadata: how many exist as regular files (the rest show a
  // placeholder in the explorer), and the first that does not.
  std::int64_t imagesNamed = 0, imagesFound = 0;
  std::string firstMissing;
  for (std::int64_t i = 0; ds.imageColumn >= 0 && i < ds.size(); ++i) {
    const std::string image = ds.imagePathOf(i);
    if (image.empty())
      continue;
    ++imagesNamed;
    std::error_code error;
    if (std::filesystem::is_regular_file(image, error))
      ++imagesFound;
    else if (firstMissing.empty())
      firstMissing = image;
  }
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
    j["non_finite"] = {
        {"count", nonFinite.count},
        {"first_row", nonFinite.count ? nlohmann::json(nonFinite.firstRow) : nullptr},
        {"first_col", nonFinite.count ? nlohmann::json(nonFinite.firstCol) : nullptr}};
    j["norms"] = {{"min", norms.min}, {"mean", norms.mean}, {"max", norms.max}};
    j["labels"] = {{"source", ds.labelSource}, {"count", ds.labelNames.size()}};
    nlohmann::ordered_json counts = nlohmann::ordered_json::object();
    for (const auto& name : ds.labelNames)
      counts[name] = labelCounts[name];
    j["label_counts"] = counts;
    j["metadata_columns"] = ds.metadata.columnNames;
    j["columns"] = describeColumns(ds);
    j["text_column"] =
        ds.textColumn >= 0 ? nlohmann::json(ds.metadata.columnNames[ds.textColumn]) : nullptr;
    j["images"] = ds.imageColumn < 0
                      ? nlohmann::json(nullptr)
                      : nlohmann::json({{"column", ds.metadata.columnNames[ds.imageColumn]},
                                        {"folder", ds.imageFolder},
                                        {"named", imagesNamed},
                                        {"found", imagesFound},
                                        {"first_missing", firstMissing.empty()
                                                              ? nlohmann::json(nullptr)
                                                              : nlohmann::json(firstMissing)}});
    j["thumbnails"] = ds.thumbnails.empty()
                          ? nlohmann::json(nullptr)
                          : nlohmann::json({{"width", ds.thumbnails.width},
                                            {"height", ds.thumbnails.height},
                                            {"channels", ds.thumbnails.channels}});
    j["queries"] = side.queryRows == 0 ? nlohmann::json(nullptr)
                                       : nlohmann::json({side.queryRows, side.queryCols});
    j["ground_truth"] = side.truthRows == 0 ? nlohmann::json(nullptr)
                                            : nlohmann::json({side.truthRows, side.truthCols});
    j["backend"] = describeBackend(context);
    j["timings"] = {{"open_s", openSeconds}, {"scan_s", scanSeconds}};
    j["warnings"] = ds.warnings; // also on stderr, as for every command
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return kExitOk;
  }

  // Text from files (names, labels, headers) may hold escape sequences: printed visibly escaped.
  std::cout << "path          " << printableText(ds.path) << '\n'
            << "format        " << ds.format << " (" << ds.sourceDtype
            << (ds.memoryMapped ? ", memory-mapped" : "") << ")\n"
            << "shape         " << ds.size() << " x " << ds.dim() << '\n'
            << "content hash  " << ds.contentHash << '\n';
  if (ds.metric)
    std::cout << "metric        " << metricName(*ds.metric) << '\n';
  std::cout << "NaN/Inf       " << nonFinite.count;
  if (nonFinite.count) // counted from 1 like every position in a message; ids count from 0
    std::cout << " (first at row " << nonFinite.firstRow + 1 << ", column "
              << nonFinite.firstCol + 1 << ", counting from 1: item " << nonFinite.firstRow << ")";
  std::cout << '\n'
            << std::setprecision(6) << "norms         min " << norms.min << ", mean " << norms.mean
            << ", max " << norms.max << '\n';
  if (side.queryRows > 0)
    std::cout << "queries       " << side.queryRows << " x " << side.queryCols << '\n';
  if (side.truthRows > 0)
    std::cout << "ground truth  " << side.truthRows << " x " << side.truthCols << '\n';
  if (!ds.thumbnails.empty())
    std::cout << "thumbnails    " << ds.thumbnails.width << " x " << ds.thumbnails.height << '\n';
  if (ds.imageColumn >= 0) {
    std::cout << "images        " << imagesFound << " of " << imagesNamed << " files found (column "
              << printableText(ds.metadata.columnNames[ds.imageColumn], 80) << ")";
    if (!firstMissing.empty())
      std::cout << "; first missing: " << printableText(firstMissing, 200);
    std::cout << '\n';
  }
  if (!ds.metadata.empty()) {
    std::cout << "metadata      ";
    for (std::size_t c = 0; c < ds.metadata.columnNames.size(); ++c)
      std::cout << (c ? ", " : "") << printableText(ds.metadata.columnNames[c], 80);
    std::cout << '\n';
  }
  if (ds.hasLabels()) {
    std::cout << "labels        " << ds.labelNames.size() << " from "
              << printableText(ds.labelSource, 80) << '\n';
    for (const auto& name : ds.labelNames)
      std::cout << "  " << std::setw(8) << labelCounts[name] << "  " << printableText(name, 80)
                << '\n';
  }
  std::cout << "backend       " << describeBackend(context) << '\n'
            << "time          open " << openSeconds << " s, scan " << scanSeconds << " s\n";
  return kExitOk;
}

} // namespace

void addInfoCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd =
      app.add_subcommand("info", "Shape, types, labels, norms, NaN/Inf and content hash");
  cmd->add_option("path", args->path, "Data file or IDX folder")->required();
  cmd->add_option("--meta", args->meta, "Metadata TSV (TensorBoard projector rules)");
  args->common.addTo(*cmd);
  cmd->callback([args, &exitCode] { exitCode = runGuarded([&] { return runInfo(*args); }); });
}

} // namespace nearscape::cli
