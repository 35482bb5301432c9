// Our kNN graph file (readGraphFile), with its checksum made valid (Checksum.h). What it
// accepts must hold ids −1 or below n, and finite distances beside real ids.
#include "Checksum.h"
#include "FuzzCommon.h"

#include "nearscape/io/GraphFile.h"

#include <cmath>

NEARSCAPE_FUZZ_TARGET(graph_file) {
  using namespace nearscape;
  const auto path = fuzz::writeInput("fuzz.nsg", fuzz::withValidChecksum(data, size));
  fuzz::expectEngineErrorsOnly([&] {
    const GraphFile g = readGraphFile(path);
    const auto ids = g.ids.view();
    const auto distances = g.distances.view();
    if (ids.rows != distances.rows || ids.cols != distances.cols)
      std::abort();
    for (std::int64_t i = 0; i < ids.rows * ids.cols; ++i)
      if (ids.data[i] < -1 || ids.data[i] >= ids.rows ||
          (ids.data[i] >= 0 && !std::isfinite(distances.data[i])))
        std::abort();
  });
}
