#pragma once
#include <CLI/CLI.hpp>

namespace nearscape::bench {
/// `exact`: exact kNN graph or query search against a peer (Faiss CPU or PyTorch GPU).
void addExactSuite(CLI::App& app, int& exitCode);
/// `topk`: one query at a time, k from 10 to 100,000, against a resident base (vs PyTorch).
void addTopkSuite(CLI::App& app, int& exitCode);
} // namespace nearscape::bench
