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
  bool regex = false;
  std::int64_t limit = 20;
  CommonOptions common;
};

int runFind(const FindArgs& args) {
  OpenOptions options;
  options.metaPath = args.meta;
  options.loadThumbnails = false;
  const Dataset ds = openInput(args.path, options, commandJob());
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
    nlohmann::ordered_json items = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < shown; ++i)
      items.push_back({{"id", found[i]}, // JSON escapes control characters itself
                       {"label", ds.labelOf(found[i])},
                       {"text", ds.textOf(found[i])}});
    j["items"] = items;
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return kExitOk;
  }
  std::cout << found.size() << " of " << ds.size() << " items match\n";
  for (std::size_t i = 0; i < shown; ++i) {
    std::cout << found[i] << '\t' << printableText(ds.labelOf(found[i]), 80);
    const std::string text = ds.textOf(found[i]);
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
  cmd->add_flag("--regex", args->regex, "TEXT is a regular expression (RE2 syntax, any case)");
  cmd->add_option("--limit", args->limit, "Items listed at most (-1: all)")
      ->check(atLeast(-1))
      ->capture_default_str();
  args->common.addTo(*cmd);
  cmd->callback([args, &exitCode] { exitCode = runGuarded([&] { return runFind(*args); }); });
}

} // namespace nearscape::cli
