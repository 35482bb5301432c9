// Our index file (loadIndex: kinds graph and ivf) over fixed base data of 64 × 8 (the seeds are
// indexes built on the same data, tests/fuzz/make_seeds.cpp), with its checksum made valid
// (Checksum.h). A loaded index is searched: whatever loadIndex accepts must be safe to use.
#include "Checksum.h"
#include "FuzzBase.h"
#include "FuzzCommon.h"

#include "nearscape/index/AnnIndex.h"

NEARSCAPE_FUZZ_TARGET(index_file) {
  using namespace nearscape;
  static const Matrix<float> base = fuzz::indexFuzzBase();
  const auto path = fuzz::writeInput("fuzz.nsi", fuzz::withValidChecksum(data, size));
  Context context;
  context.backend = Backend::Cpu;
  context.threads = 1;
  fuzz::expectEngineErrorsOnly([&] {
    const auto index = loadIndex(path, base.view(), {}, context);
    const MatrixView<float> queries{base.data(), 4, base.cols()};
    const int k = int(std::min<std::int64_t>(5, index->size()));
    const KnnResult r = index->search(queries, k, {}, noJobControl());
    for (std::int64_t i = 0; i < r.ids.rows() * r.ids.cols(); ++i)
      if (r.ids.data()[i] < -1 || r.ids.data()[i] >= base.rows())
        std::abort();
  });
}
