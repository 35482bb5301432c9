// Entries of the artefact cache (ArtefactCache: the explorer's kNN graphs and maps kept on disk),
// with their checksum made valid (Checksum.h). The first byte picks a graph entry (a graph
// file) or a map entry (a matrix file); the rest replaces the entry a valid store just wrote,
// and is loaded back for the same data (FuzzBase.h). A load must give the entry's exact shape
// with finite values, or a miss (the entry removed) — never a crash or an escaping exception.
#include "Checksum.h"
#include "FuzzBase.h"
#include "FuzzCommon.h"

#include "nearscape/io/ArtefactCache.h"

#include <cmath>

NEARSCAPE_FUZZ_TARGET(cache_entry) {
  using namespace nearscape;
  namespace fs = std::filesystem;
  if (size < 1)
    return;
  static const Dataset items = fuzz::cacheFuzzData();
  static const fs::path folder = fuzz::scratchFolder() / "cache";
  static const ArtefactCache cache(folder, 1 << 20);
  // The entries' names, learnt once from a valid store of each kind (fsync-ed atomic writes are
  // slow); every input then takes the place of one of them.
  static const auto [graphEntry, mapEntry] = [] {
    const std::vector<float> zeros(std::size_t(items.size()) * 2, 0.0f);
    auto stored = [&](auto store) {
      std::error_code ec;
      fs::remove_all(folder, ec);
      store();
      fs::path entry;
      for (const auto& e : fs::directory_iterator(folder))
        entry = e.path();
      if (entry.empty())
        std::abort(); // the store itself failed
      return fs::relative(entry, fuzz::scratchFolder()).string();
    };
    const std::string graph = stored([&] {
      KnnResult r;
      r.ids = Matrix<std::int32_t>(std::vector<std::int32_t>(zeros.size(), -1), items.size(), 2);
      r.distances = Matrix<float>(zeros, items.size(), 2);
      cache.storeGraph(items, Metric::L2, fuzz::kCacheGraphParams, r);
    });
    const std::string map = stored([&] {
      cache.storeMatrix(items, fuzz::kCacheMapWhat, fuzz::kCacheMapParams,
                        MatrixView<float>{zeros.data(), items.size(), 2});
    });
    return std::pair{graph, map};
  }();
  const bool graph = data[0] % 2 == 0;
  const std::string bytes = fuzz::withValidChecksum(data + 1, size - 1);
  fuzz::writeInput(graph ? graphEntry : mapEntry, bytes);
  fuzz::expectEngineErrorsOnly([&] {
    if (graph) {
      const auto g = cache.loadGraph(items, Metric::L2, fuzz::kCacheGraphParams);
      if (g && (g->ids.rows() != items.size() || g->distances.rows() != items.size() ||
                g->ids.cols() != g->distances.cols()))
        std::abort();
      if (g)
        for (std::int64_t i = 0; i < g->ids.rows() * g->ids.cols(); ++i)
          if (g->ids.data()[i] < -1 || g->ids.data()[i] >= items.size())
            std::abort();
    } else {
      const auto m = cache.loadMatrix(items, fuzz::kCacheMapWhat, fuzz::kCacheMapParams, 2);
      if (m && (m->rows() != items.size() || m->cols() != 2))
        std::abort();
      if (m)
        for (std::int64_t i = 0; i < m->rows() * m->cols(); ++i)
          if (!std::isfinite(m->data()[i]))
            std::abort();
    }
  });
}
