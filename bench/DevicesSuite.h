#pragma once
#include <CLI/CLI.hpp>

namespace nearscape::bench {
/// `devices`: one piece of work on the first GPU of --devices, then split over all of them, in
/// the same run — the exact kNN graph, NN-Descent, or an index's batch search — with the
/// speed-up and whether the results agree (equal for exact work, recall for NN-Descent).
void addDevicesSuite(CLI::App& app, int& exitCode);
} // namespace nearscape::bench
