#pragma once
// Each subcommand registers itself on the top-level CLI::App.

#include <CLI/CLI.hpp>

namespace nearscape::cli {

/// `info PATH [--meta M]`: shape, types, labels, norms, NaN/Inf, content hash.
/// Sets `exitCode` when it runs.
void addInfoCommand(CLI::App& app, int& exitCode);

/// `knn PATH --k K [--queries Q] [--out IDS.npy] ...`: exact kNN graph or search.
void addKnnCommand(CLI::App& app, int& exitCode);

/// `path PATH --from I --to J [--graph G] [--bridge]`: the min-max path and the shortest path.
void addPathCommand(CLI::App& app, int& exitCode);

/// `layout PATH --dim 2|3 [--graph G] --out XY.npy`: the map and its neighbour-kept share.
void addLayoutCommand(CLI::App& app, int& exitCode);

/// `sweep PATH --index graph|ivf --k K [--queries Q] [--truth T] --out ROWS.csv`: recall/QPS sweep;
/// several `--build` values or `--run`s make a study of several indexes over the same queries.
void addSweepCommand(CLI::App& app, int& exitCode);

/// `find PATH TEXT [--regex]`: the items whose id or metadata matches TEXT.
void addFindCommand(CLI::App& app, int& exitCode);

/// `facets PATH [--meta M] [--column C] [--filter COL=V|COL=A..B]... [--json]`: each metadata
/// column's histogram or values by count, within the filters.
void addFacetsCommand(CLI::App& app, int& exitCode);

/// `cache [--clear]`: the artefact cache's folder and size, or clears it.
void addCacheCommand(CLI::App& app, int& exitCode);

/// `outliers PATH --k K [--score lof|kth] [--top N] [--out SCORES.npy]`: outlier scores.
void addOutliersCommand(CLI::App& app, int& exitCode);

/// nearscape-cli neighbours: one item's exact neighbours, with far-in-map flags given a map.
void addNeighboursCommand(CLI::App& app, int& exitCode);

/// `duplicates PATH (--threshold T | --quantile Q) [--out GROUPS.tsv]`: near-duplicate groups.
void addDuplicatesCommand(CLI::App& app, int& exitCode);

/// `compare A B --k K [--out OVERLAP.npy]`: two embeddings' neighbourhoods, item by item.
void addCompareCommand(CLI::App& app, int& exitCode);

/// `labels PATH [--meta M] [--column C] [--map XY.npy] [--clusters N...]`: cluster labels of the
/// map.
void addLabelsCommand(CLI::App& app, int& exitCode);

/// `self-test [--json]`: readers, exact graphs (CPU, GPU) against float64, a path, a map.
void addSelfTestCommand(CLI::App& app, int& exitCode);

} // namespace nearscape::cli
