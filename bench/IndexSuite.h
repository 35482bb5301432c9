#pragma once
// The ANN index suite: our index's recall/QPS sweep against hnswlib or Faiss IVF-Flat (CPU),
// and against our exact search (any backend), on the same queries and ground truth.

#include <CLI/CLI.hpp>

namespace nearscape::bench {

void addIndexSuite(CLI::App& app, int& exitCode);

} // namespace nearscape::bench
