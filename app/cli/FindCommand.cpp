// nearscape-cli find: the items whose id or metadata matches a text — the explorer's search field.
#include "Commands.h"
#include "CommonOptions.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace nearscape::cli {
namespace {

struct FindArgs {
  std::string path, text, meta;
  std::string titleColumn;           ///< --title-column ("": none)
  CLI::Option* titleGiven = nullptr; ///< absent: picked (pickTitleColumn)
  bool regex = false;
  std::int64_t limit = 20;
  CommonOptions common;
};

int runFind(const FindArgs& args) {
  OpenOptions options;
  options.metaPath = args.meta;
  options.loadThumbnails = false;
  const Dataset ds = openInput(args.path, options, commandJob());
  // The column naming items, as the explorer's lists show it beside the id.
  TitleChoice title = pickTitleColumn(ds);
  if (args.titleGiven->count() > 0) {
    title = {-1, TitleReason::None};
    if (!args.titleColumn.empty()) {
      title = {ds.metadata.findColumn(args.titleColumn), TitleReason::Chosen};
      if (title.column < 0) {
        std::string names;
        for (const std::string& name : ds.metadata.columnNames)
          names += (names.empty() ? "" : ", ") + name;
        throw InvalidArgument("no metadata column '" + args.titleColumn +
                              "' for --title-column (columns: " +
                              (names.empty() ? std::string("none") : names) + ")");
      }
    }
  }
  const std::string titleName =
      title.column < 0 ? std::string() : ds.metadata.columnNames[std::size_t(title.column)];
  const std::vector<std::int64_t> found =
      findItems(ds, args.text, args.regex ? MatchMode::Regex : MatchMode::Substring,
                commandJob()); // Ctrl-C stops a long search
  const std::size_t shown =
      args.limit < 0 ? found.size() : std::min(found.size(), std::size_t(args.limit));
  if (args.common.json) {
    nlohmann::ordered_json j;
    j["text"] = args.text;
    j["mode"] = args.regex ? "regex" : "substring";
    j["count"] = found.size();
    j["title_column"] =
        title.column < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(titleName);
    j["title_reason"] = titleReasonName(title.reason);
    nlohmann::ordered_json items = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < shown; ++i)
      items.push_back({{"id", found[i]}, // JSON escapes control characters itself
                       {"title", titleOf(ds, title.column, found[i])},
                       {"label", ds.labelOf(found[i])},
                       {"text", ds.textOf(found[i])}});
    j["items"] = items;
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return kExitOk;
  }
  std::cout << found.size() << " of " << ds.size() << " items match";
  if (title.column >= 0)
    std::cout << " (title column: " << printableText(titleName, 80) << ", "
              << titleReasonName(title.reason) << ")";
  std::cout << '\n';
  for (std::size_t i = 0; i < shown; ++i) {
    std::cout << found[i];
    if (title.column >= 0)
      std::cout << '\t' << printableText(titleOf(ds, title.column, found[i]), 80);
    std::cout << '\t' << printableText(ds.labelOf(found[i]), 80);
    // The text column once, when it is not the title itself.
    const std::string text = title.column == ds.textColumn ? std::string() : ds.textOf(found[i]);
    if (!text.empty())
      std::cout << '\t' << printableText(text, 120);
    std::cout << '\n';
  }
  if (shown < found.size())
    std::cout << "… " << found.size() - shown << " more (--limit -1 lists all)\n";
  return kExitOk;
}

} // namespace

void addFindCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<FindArgs>();
  CLI::App* cmd = app.add_subcommand(
      "find", "Items whose id or metadata (any column) matches a text, as the explorer's search");
  cmd->add_option("path", args->path, "Data file or IDX folder")->required();
  cmd->add_option("text", args->text, "Text: an id, or a case-insensitive substring")->required();
  cmd->add_option("--meta", args->meta, "Metadata TSV (default: the <stem>.meta.tsv sidecar)");
  args->titleGiven =
      cmd->add_option("--title-column", args->titleColumn,
                      "Metadata column printed beside each id (\"\": none; default: one named "
                      "title, name, package, id…, else a string column of short, mostly unique "
                      "values)");
  cmd->add_flag("--regex", args->regex, "TEXT is a regular expression (RE2 syntax, any case)");
  cmd->add_option("--limit", args->limit, "Items listed at most (-1: all)")
      ->check(atLeast(-1))
      ->capture_default_str();
  args->common.addTo(*cmd);
  cmd->callback([args, &exitCode] { exitCode = runGuarded([&] { return runFind(*args); }); });
}

} // namespace nearscape::cli
