#pragma once
/// @file AnnIndex.h
/// Approximate nearest-neighbour indexes behind one interface: build, search, save, load, bytes,
/// and a description of their search parameters so that a GUI or a sweep can drive any index
/// without knowing it.
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
#include <string>
#include <string_view>
#include <vector>

namespace nearscape {

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

/// Parameter values by name; a missing name takes the parameter's default.
using ParameterValues = std::map<std::string, double>;

/// "ef=64,entries=8" (for logs and CSV).
std::string formatParameters(const ParameterValues& values);

class AnnIndex {
public:
  virtual ~AnnIndex() = default;

  /// "graph" or "ivf".
  virtual std::string_view kind() const = 0;
  /// The search-time tunables, with their ranges and defaults for this built index.
  virtual std::vector<IndexParameter> searchParameters() const = 0;
  /// The values it was built with (every build parameter, defaults resolved).
  virtual ParameterValues buildValues() const = 0;
  /// The k nearest base rows found for each query (k ≤ size()); rows with fewer reachable items
  /// pad with id −1. Throws InvalidArgument (k, dimension, unknown or out-of-range parameter),
  /// Cancelled (checked between batches of queries).
  virtual KnnResult search(const MatrixView<float>& queries, int k, const ParameterValues& params,
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

/// Builds an index of `kind` over `base` (kept by reference: the caller keeps it alive).
/// Throws InvalidArgument (unknown kind or parameter, empty base, NaN/Inf), Cancelled.
std::unique_ptr<AnnIndex> buildIndex(std::string_view kind, const MatrixView<float>& base,
                                     Metric metric, const ParameterValues& build,
                                     const Context& context, JobControl& job = noJobControl());

/// Reads an index written by AnnIndex::save over the same `base` (whose content hash must match,
/// when given). Throws IoError, FormatError (bad magic, version, size, checksum; other data).
std::unique_ptr<AnnIndex> loadIndex(const std::filesystem::path& path,
                                    const MatrixView<float>& base, const std::string& contentHash,
                                    const Context& context);

} // namespace nearscape
