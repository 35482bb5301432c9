#pragma once
/// @file ArtefactCache.h
/// What was computed for a data set — its kNN graph, its 2D and 3D maps — kept on disk, so that
/// reopening the same data shows the refined map at once. Entries are keyed by the data's
/// content hash and every parameter that shapes the result, checksummed, and verified when read:
/// a corrupt, truncated or stale entry is a miss (removed, with the reason logged), never
/// trusted. The folder is bounded: beyond its size, the least recently used entries go.

#include "nearscape/core/Dataset.h"
#include "nearscape/core/Matrix.h"
#include "nearscape/core/Neighbours.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace nearscape {

class ArtefactCache {
public:
  /// Entries live in `folder` (made when first written), at most `maxBytes` in all. Why an
  /// entry was dropped goes to `log`'s sink at the warning level (default: stderr).
  ArtefactCache(std::filesystem::path folder, std::uint64_t maxBytes, Context log = {});

  /// The user's cache folder for artefacts: $NEARSCAPE_ARTEFACT_CACHE when set, else
  /// $XDG_CACHE_HOME/nearscape/artefacts (~/.cache/nearscape/artefacts).
  static std::filesystem::path defaultFolder();
  /// The default bound: 10 GB.
  static constexpr std::uint64_t kDefaultMaxBytes = 10'000'000'000ull;

  /// A kNN graph of `data` under `metric`; `params` names how it was built (method, k, seed…).
  std::optional<KnnResult> loadGraph(const Dataset& data, Metric metric,
                                     const std::string& params) const;
  /// Stores it; failures (a full disk, a read-only folder) are ignored: the cache is an aid.
  void storeGraph(const Dataset& data, Metric metric, const std::string& params,
                  const KnnResult& graph) const;

  /// A float matrix of `data` (a map: n × dim), named `what` with its `params`. An entry holding
  /// a value that is not finite or lies beyond ±kMaxCoordinate is a miss: no map the layout
  /// makes comes near it (it starts within ±10), and such spans leave nothing to draw.
  std::optional<Matrix<float>> loadMatrix(const Dataset& data, const std::string& what,
                                          const std::string& params, std::int64_t cols) const;
  void storeMatrix(const Dataset& data, const std::string& what, const std::string& params,
                   const MatrixView<float>& m) const;

  /// Small bytes of any kind (a thumbnail) stored under `key` — any text that changes whenever
  /// what it names changes (a file's path, size and time) — when present and intact.
  std::optional<std::string> loadBlob(const std::string& key) const;
  /// Stores them; failures are ignored, as for the other entries. Thread-safe (many decoding
  /// threads store at once); the folder's bound is enforced every few hundred stores.
  void storeBlob(const std::string& key, const std::string& bytes) const;
  /// Bytes and entries held now.
  std::uint64_t bytes() const;
  std::int64_t entries() const;
  /// The largest coordinate a map entry may hold.
  static constexpr float kMaxCoordinate = 1e6f;

  /// Removes every entry, carrying on past one it cannot remove. Returns the folders named like
  /// an entry, which it leaves alone (the cache makes none: they are someone else's). Throws
  /// WriteError, once it has removed what it could, naming each entry it could not remove (or
  /// the folder, when it cannot be listed).
  std::vector<std::filesystem::path> clear() const;

  const std::filesystem::path& folder() const { return m_folder; }

private:
  std::filesystem::path entryPath(const Dataset& data, const std::string& what,
                                  const std::string& params, const char* extension) const;
  /// Removes the least recently used entries until the folder is within its bound.
  void evict() const;
  /// Removes a damaged or stale entry, logging why.
  void drop(const std::filesystem::path& entry, const std::string& why) const;

  std::filesystem::path m_folder;
  std::uint64_t m_maxBytes;
  Context m_log; ///< its log level and sink
};

} // namespace nearscape
