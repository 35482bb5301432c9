// nearscape-cli facets: each metadata column's histogram (numbers) or values by count
// (categories), for all items and within facet filters — the explorer's Facets dock, headless.
#include "Commands.h"
#include "CommonOptions.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

namespace nearscape::cli {
namespace {

struct FacetsArgs {
  std::string path, meta, column;
  std::vector<std::string> filters;
  int bins = 10;
  int top = 10;
  CommonOptions common;
};

std::string binText(const FacetCounts& f, std::size_t b) {
  if (!f.numeric)
    return f.labels[b];
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.4g .. %.4g", f.edges[b], f.edges[b + 1]);
  return buffer;
}

int runFacets(const FacetsArgs& args) {
  OpenOptions options;
  options.metaPath = args.meta;
  options.loadThumbnails = false;
  const Dataset ds = openInput(args.path, options, commandJob());
  const std::vector<FacetColumn> columns = readFacetColumns(ds, commandJob());
  std::vector<FacetBrush> brushes;
  for (const std::string& text : args.filters)
    brushes.push_back(parseFacetBrush(text));
  const FacetPass pass = facetPass(columns, brushes); // names a missing column: refused
  std::vector<int> shown;
  for (int c = 0; c < int(columns.size()); ++c)
    if (args.column.empty() || columns[std::size_t(c)].name == args.column)
      shown.push_back(c);
  if (!args.column.empty() && shown.empty()) {
    std::string names;
    for (const FacetColumn& c : columns)
      names += (names.empty() ? "" : ", ") + c.name;
    throw InvalidArgument("no facet column '" + args.column +
                          "' (columns: " + (names.empty() ? std::string("none") : names) + ")");
  }
  std::int64_t passing = 0;
  for (std::size_t i = 0; i < pass.failed.size(); ++i)
    passing += pass.passes(i);
  if (args.common.json) {
    nlohmann::ordered_json j;
    j["items"] = ds.size();
    std::vector<std::string> filterTexts;
    for (const FacetBrush& b : brushes)
      filterTexts.push_back(facetBrushText(b));
    j["filters"] = filterTexts;
    j["passing"] = passing;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const int c : shown) {
      const FacetCounts f = countFacet(columns, c, pass, {}, args.bins, args.top);
      nlohmann::ordered_json one;
      one["column"] = f.column;
      one["kind"] = f.numeric ? "numeric" : "categorical";
      if (f.numeric) {
        one["scale"] = f.logBins ? "log" : "linear";
        one["edges"] = f.edges;
      } else {
        one["values"] = f.labels;
        one["other"] = f.hasOther;
      }
      one["total"] = f.total;
      one["filtered"] = f.filtered; // within every filter but this column's own
      one["missing"] = {{"total", f.missingTotal}, {"filtered", f.missingFiltered}};
      list.push_back(one);
    }
    j["facets"] = list;
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return kExitOk;
  }
  std::cout << ds.size() << " items";
  if (!brushes.empty()) {
    std::cout << ", " << passing << " pass";
    for (const FacetBrush& b : brushes)
      std::cout << ' ' << printableText(facetBrushText(b), 60);
  }
  std::cout << '\n';
  for (const int c : shown) {
    const FacetCounts f = countFacet(columns, c, pass, {}, args.bins, args.top);
    std::cout << '\n'
              << printableText(f.column, 60)
              << (f.numeric ? (f.logBins ? "  (numeric, log bins)" : "  (numeric)")
                            : "  (categorical)")
              << '\n';
    const std::int64_t most =
        std::max<std::int64_t>(1, *std::max_element(f.total.begin(), f.total.end()));
    for (std::size_t b = 0; b < f.total.size(); ++b) {
      const int bar = int(30 * f.total[b] / most);
      std::cout << "  " << printableText(binText(f, b), 28) << '\t' << f.total[b];
      if (!brushes.empty())
        std::cout << '\t' << f.filtered[b];
      std::cout << '\t' << std::string(std::size_t(bar), '#') << '\n';
    }
    if (f.missingTotal > 0)
      std::cout << "  (no value)\t" << f.missingTotal << '\n';
  }
  if (!brushes.empty())
    std::cout << "\ncolumns: value, all items, items passing the other columns' filters\n";
  return kExitOk;
}

} // namespace

void addFacetsCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<FacetsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "facets", "Each metadata column's histogram or values by count, within facet filters, as "
                "the explorer's Facets dock");
  cmd->add_option("path", args->path, "Data file or IDX folder")->required();
  cmd->add_option("--meta", args->meta, "Metadata TSV (default: the <stem>.meta.tsv sidecar)");
  cmd->add_option("--column", args->column, "Only this column (default: every facet column)");
  cmd->add_option("--filter", args->filters,
                  "Count within COLUMN=VALUE, COLUMN=A|B or COLUMN=FROM..TO (repeatable: all "
                  "must hold)");
  cmd->add_option("--bins", args->bins, "Bins of a numeric column's histogram")
      ->check(atLeast(1))
      ->capture_default_str();
  cmd->add_option("--top", args->top, "Values of a categorical column listed (the rest: other)")
      ->check(atLeast(1))
      ->capture_default_str();
  args->common.addTo(*cmd);
  cmd->callback([args, &exitCode] { exitCode = runGuarded([&] { return runFacets(*args); }); });
}

} // namespace nearscape::cli
