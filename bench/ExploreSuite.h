#pragma once
#include <CLI/CLI.hpp>

namespace nearscape::bench {
/// `explore`: the GUI's whole pipeline without a window — open the file, then the kNN graph, the
/// neighbours index, the map and the spanning forest (paths ready), each stage timed.
void addExploreSuite(CLI::App& app, int& exitCode);
} // namespace nearscape::bench
