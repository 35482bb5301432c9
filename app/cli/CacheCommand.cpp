// nearscape-cli cache: the artefact cache the explorer reopens data from (graphs, maps).
#include "Commands.h"
#include "CommonOptions.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>

namespace nearscape::cli {
namespace {

struct CacheArgs {
  bool clear = false;
  CommonOptions common;
};

int runCache(const CacheArgs& args) {
  const ArtefactCache cache(ArtefactCache::defaultFolder(), ArtefactCache::kDefaultMaxBytes);
  const std::uint64_t bytes = cache.bytes();
  const std::int64_t entries = cache.entries();
  if (args.clear)
    for (const std::filesystem::path& folder : cache.clear()) // what it could not remove: throws
      std::cerr << "nearscape-cli: note: left " << folder.string()
                << ": a folder, not a cache entry\n";
  if (args.common.json) {
    nlohmann::ordered_json j;
    j["folder"] = cache.folder().string();
    j["entries"] = entries;
    j["bytes"] = bytes;
    j["max_bytes"] = ArtefactCache::kDefaultMaxBytes;
    j["cleared"] = args.clear;
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << cache.folder().string() << ": " << entries << " entries, " << std::fixed
              << std::setprecision(1) << double(bytes) / 1e6 << " MB (at most "
              << std::setprecision(0) << double(ArtefactCache::kDefaultMaxBytes) / 1e9 << " GB)"
              << (args.clear ? "; cleared" : "") << '\n';
  }
  return kExitOk;
}

} // namespace

void addCacheCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<CacheArgs>();
  CLI::App* cmd = app.add_subcommand(
      "cache", "The explorer's artefact cache (graphs and maps by content hash): size, or --clear");
  cmd->add_flag("--clear", args->clear, "Remove every entry");
  args->common.addTo(*cmd);
  cmd->callback([args, &exitCode] { exitCode = runGuarded([&] { return runCache(*args); }); });
}

} // namespace nearscape::cli
