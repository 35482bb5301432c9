#pragma once
/// @file GraphFile.h
/// Our kNN graph file: a header (magic, version, n, k, metric, the data's content hash, the build
/// parameters as JSON), int32 ids, float32 distances and a checksum (docs/design.md, File formats).
///
/// Layout: "NSKNNG\0\0" (8 bytes), version (u32), header length H (u32), H bytes of JSON
/// {"n","k","metric","content_hash","params"}, n·k int32 ids, n·k float32 distances, then the
/// XXH3-64 of every byte before it (u64). Little-endian.

#include "nearscape/core/Dataset.h"
#include "nearscape/core/Matrix.h"
#include "nearscape/core/Metric.h"
#include "nearscape/core/Neighbours.h"

#include <filesystem>
#include <string>

namespace nearscape {

struct GraphFile {
  Matrix<std::int32_t> ids; ///< n × k
  Matrix<float> distances;  ///< n × k
  Metric metric = Metric::L2;
  std::string contentHash;       ///< Dataset::contentHash of the data it was built on
  std::string paramsJson = "{}"; ///< how it was built
};

/// The first problem of a kNN graph's cells, as every reader of graphs (files, the Python
/// module's (ids, distances)) checks them: an id neither −1 nor a row in [0, n), a distance not
/// finite where its id is real, or negative (beyond rounding) for L2 and cosine. Empty when there
/// is none. `ids` (int32) and `distances` (float32) hold `cells` values each, at any alignment.
std::string knnGraphProblem(const void* ids, const void* distances, std::size_t cells,
                            std::int64_t n, Metric metric);

/// How a graph file's graph was built, from its params as `nearscape-cli knn --out` writes them
/// ({"method": "exact" | "nndescent" | "…+merge", "exact": true | false, …}): Exact when they say
/// exact (STEP's exact graph too: the CLI names it "exact"), NnDescent, GgmMerge for "+merge",
/// Unknown when they do not say (another writer's params, the artefact cache's, not JSON).
/// Throws nothing.
KnnMethod graphFileMethod(const std::string& paramsJson);

/// Writes atomically (temporary file + rename). Throws IoError.
void writeGraphFile(const std::filesystem::path& path, const GraphFile& graph);

/// Reads and verifies magic, version, sizes, checksum, every id (−1 or a row) and distance (finite;
/// not negative for L2 and cosine) before anything is copied; the matrices view the file's
/// mapping when aligned. With `expectedHash` non-empty, refuses a graph built on other data.
/// Throws IoError, FormatError (naming the file and the problem).
GraphFile readGraphFile(const std::filesystem::path& path, const std::string& expectedHash = {});

/// True when the file starts with the graph magic (cheap sniffing for "--graph" arguments); false
/// when it does not exist. Throws IoError when it is not a regular file (a FIFO, a device).
bool isGraphFile(const std::filesystem::path& path);

/// The ids of a kNN graph's .npy (n × k, int32 or int64) as int32: an int32 file's viewed in its
/// mapping (nothing copied), an int64 file's converted. Every id is checked, on every core, to be
/// −1 or a row in [0, n); the first bad one (in row order) is named with its row and column
/// counted from 1. Throws FormatError, InvalidArgument, IoError.
Matrix<std::int32_t> readKnnIds(const std::filesystem::path& path);

/// A kNN graph as any command takes it: our graph file (refused when built on other data or with
/// another metric) or an ids .npy (n × k, int32/int64) whose distances are recomputed exactly.
/// With `ofFirstRows` (items added to a graph): the graph covers only the first rows of `data`,
/// at least two rows follow them, and a graph file's content hash must be that of those first
/// rows (an ids .npy carries no hash: only its ids are checked). The report's method is the graph
/// file's (graphFileMethod); Unknown for an ids .npy. Throws FormatError,
/// InvalidArgument, IoError.
KnnResult readKnnGraph(const std::filesystem::path& path, const Dataset& data, Metric metric,
                       bool ofFirstRows = false);

} // namespace nearscape
