#pragma once
// nearscape-bench duplicates: the exact near-duplicate range search against Faiss's.

#include <CLI/CLI.hpp>

namespace nearscape::bench {

void addDuplicatesSuite(CLI::App& app, int& exitCode);

} // namespace nearscape::bench
