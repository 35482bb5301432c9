#pragma once
// nearscape-bench bridge: joining a graph's components (what `path --bridge` and the GUI's
// "Join?" run), against the exact join measured in the same run.

#include <CLI/CLI.hpp>

namespace nearscape::bench {

void addBridgeSuite(CLI::App& app, int& exitCode);

} // namespace nearscape::bench
