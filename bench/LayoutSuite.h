#pragma once
#include <CLI/CLI.hpp>

namespace nearscape::bench {
/// `layout`: our kNN graph + map against umap-learn, both judged by the share of true 10-NN kept.
void addLayoutSuite(CLI::App& app, int& exitCode);
/// `mst`: symmetrise, spanning forest and path queries on a kNN graph.
void addMstSuite(CLI::App& app, int& exitCode);
/// `nndescent`: our NN-Descent graph against pynndescent, both judged by recall@k.
void addNnDescentSuite(CLI::App& app, int& exitCode);
} // namespace nearscape::bench
