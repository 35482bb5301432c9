#pragma once
/// @file AnnIndex.h
/// Approximate nearest-neighbour indexes behind one interface: build, search, save, load, bytes.
/// Each kind takes typed parameters (a struct per kind, chosen by a std::variant, as cuVS does);
/// a reflection layer names and describes them (parse, describe, ranges and defaults) so that a
/// GUI's controls, the CLI's `--build name=value` and a sweep's grid drive any index without
/// knowing it.
///
/// Kinds: "graph" (a fixed-degree search graph pruned from the kNN graph, searched best-first as
/// SONG does) and "ivf" (IVF-Flat: k-means lists, nprobe of them scanned). Distances follow
/// docs/design.md's conventions (L2 → Euclidean, cosine → 1 − cos, inner product → −⟨x, y⟩),
/// computed in float32: an index is approximate, its ids are what recall judges.

#include "nearscape/core/Context.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/Matrix.h"
#include "nearscape/core/Metric.h"
#include "nearscape/knn/Knn.h"

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace nearscape {

/// Build parameters of the graph index (kind "graph"). An empty value takes its default,
/// resolved for the base's n rows when the index is built.
struct GraphIndexParams {
  /// Edges per node of the search graph: 1 … min(256, n − 1); default min(32, n − 1).
  std::optional<int> degree;
  /// Neighbours per node of the kNN graph it is pruned from: 1 … min(512, n − 1), raised to
  /// `degree`; default min(32, n − 1) (fashion-mnist, 2 cores: 32/32 gives more QPS at recall
  /// 0.995 than 24/32 or 32/64, docs/benchmarks.md).
  std::optional<int> buildK;
};

/// Build parameters of IVF-Flat (kind "ivf").
struct IvfFlatParams {
  std::optional<int> nlist;    ///< k-means lists: 1 … min(n, 2^20); default 4·√n, rounded
  int iterations = 10;         ///< k-means (Lloyd) iterations: 1 … 100
  bool kmeansPlusPlus = false; ///< k-means++ seeding; false: seeded random rows
};

/// Which index to build and how: the alternative is the kind.
using IndexBuildParams = std::variant<GraphIndexParams, IvfFlatParams>;

/// Search parameters of the graph index. An empty value takes its default for the index.
struct GraphSearchParams {
  /// Candidates kept during the search, raised to k: 1 … 512 where the index lives on the GPU
  /// (gpu::kGraphSearchMaxQueue), 1 … min(4096, n) on the CPU; default min(64, that bound).
  std::optional<int> ef;
  /// Edges of each node followed: 1 … the index's degree; default all of them.
  std::optional<int> degree;
  /// Entry points of the upper layer's walk: 1 … min(256, its sample); default min(16, sample).
  std::optional<int> entries;
  /// Candidates kept during the upper layer's walk, on the CPU only (an index on the GPU refuses
  /// it): 1 … ef's bound; default ef. A small pool (4) scores fewer rows on data without
  /// well-separated clusters (fashion-mnist: 460 rather than 559 a query at recall 0.995); on
  /// such clusters a query's own may then go unfound (docs/benchmarks.md, session 26).
  std::optional<int> upperEf;
  /// On the CPU only (an index on the GPU refuses it): 1, the walk scores 8-bit codes of the
  /// rows (a quarter of a float row's bytes; index/ReorderedGraph.h) and re-ranks its final
  /// pool of ef in float32; 0, it scores the float32 rows. Default 1 where the codes are exact
  /// (columns of integers spanning at most 255: image pixels; fashion-mnist 1.6× the QPS at the
  /// same recall), else 0: elsewhere their rounding may cost recall at a small ef.
  std::optional<int> quantized;
  /// CPU threads of this search (default: the index's context's); results do not depend on it.
  std::optional<int> threads;
};

/// Search parameters of IVF-Flat.
struct IvfSearchParams {
  std::optional<int> nprobe; ///< lists scanned per query: 1 … nlist; default min(8, nlist)
  /// CPU threads of this search (default: the index's context's); results do not depend on it.
  std::optional<int> threads;
};

/// How to search: every parameter at the index's default (std::monostate, as GraphMethod::Auto
/// leaves the choice to the engine), or the index kind's own parameters.
using IndexSearchParams = std::variant<std::monostate, GraphSearchParams, IvfSearchParams>;

/// One tunable of an index, described for controls and sweeps.
struct IndexParameter {
  std::string name;
  std::string description;
  double minimum = 0;
  double maximum = 0;
  double defaultValue = 0;
  bool integer = true;
  bool higherIsMoreAccurate = true; ///< which way trades speed for recall
};

/// Parameter values by name (the reflection layer); a missing name takes the parameter's default.
using ParameterValues = std::map<std::string, double>;

/// "ef=64,entries=8" (for logs and CSV).
std::string formatParameters(const ParameterValues& values);

/// "graph" or "ivf": the kind `params` builds.
std::string_view indexKind(const IndexBuildParams& params);

/// The build parameters of `kind` named in `values` (the CLI's `--build`, the GUI's controls);
/// names left out keep their defaults. Ranges depend on the data and are checked by buildIndex.
/// Throws InvalidArgument (an unknown kind or name, a value that is not an integer).
IndexBuildParams parseIndexBuildParams(std::string_view kind, const ParameterValues& values);

/// The search parameters of `kind` named in `values` (a sweep's grid, the CLI's `--grid`).
/// Throws as parseIndexBuildParams; ranges are checked by the search.
IndexSearchParams parseIndexSearchParams(std::string_view kind, const ParameterValues& values);

/// The values `params` sets, by name (empty ones left out): the reverse of the parsers.
ParameterValues describeParameters(const IndexBuildParams& params);
ParameterValues describeParameters(const IndexSearchParams& params);

class AnnIndex {
public:
  virtual ~AnnIndex() = default;

  /// "graph" or "ivf".
  virtual std::string_view kind() const = 0;
  /// The search-time tunables, with their ranges and defaults for this built index.
  virtual std::vector<IndexParameter> searchParameters() const = 0;
  /// The parameters it was built with, every one resolved (its alternative is its kind).
  virtual IndexBuildParams buildParams() const = 0;
  /// The same by name (the index file's header, logs, CSV and JSON).
  ParameterValues buildValues() const { return describeParameters(buildParams()); }
  /// The k nearest base rows found for each query (k ≤ size()); rows with fewer reachable items
  /// pad with id −1. Throws InvalidArgument (k, dimension, another kind's parameters, a value out
  /// of range), Cancelled (checked between batches of queries).
  virtual KnnResult search(const MatrixView<float>& queries, int k, const IndexSearchParams& params,
                           JobControl& job = noJobControl()) const = 0;
  /// Bytes the index holds beyond the caller's base vectors.
  virtual std::uint64_t bytes() const = 0;
  virtual Metric metric() const = 0;
  /// Where searches run.
  virtual Backend backend() const = 0;
  virtual std::int64_t size() const = 0;
  virtual std::int64_t dim() const = 0;
  /// Seconds the build took.
  double buildSeconds() const { return m_buildSeconds; }

  /// Writes the index (not the base vectors) to our index file, atomically: magic, version, a
  /// JSON header (kind, n, d, metric, the data's content hash, build values), the index's
  /// arrays, an XXH3-64 checksum. Throws IoError.
  void save(const std::filesystem::path& path, const std::string& contentHash) const;

protected:
  /// One array saved after the header.
  struct Section {
    const void* data;
    std::size_t bytes;
  };
  /// The arrays saved after the header, in order (the kind's loader reads them back).
  virtual std::vector<Section> sections() const = 0;
  double m_buildSeconds = 0;
};

/// The kinds buildIndex knows.
std::vector<std::string> indexKinds();

/// The build-time tunables of `kind` for data of n rows (defaults may depend on n).
/// Throws InvalidArgument for an unknown kind.
std::vector<IndexParameter> indexBuildParameters(std::string_view kind, std::int64_t n);

/// Builds the index `params` chooses over `base` (kept by reference: the caller keeps it alive).
/// Throws InvalidArgument (a parameter out of range for the data, empty base, NaN/Inf),
/// Cancelled.
std::unique_ptr<AnnIndex> buildIndex(const MatrixView<float>& base, Metric metric,
                                     const IndexBuildParams& params, const Context& context,
                                     JobControl& job = noJobControl());

/// Reads an index written by AnnIndex::save over the same `base` (whose content hash must match,
/// when given). Throws IoError, FormatError (bad magic, version, size, checksum; other data).
std::unique_ptr<AnnIndex> loadIndex(const std::filesystem::path& path,
                                    const MatrixView<float>& base, const std::string& contentHash,
                                    const Context& context);

} // namespace nearscape
