// A .npy file opened as data (openDataset: the memory-mapped float32 path and the converted
// dtypes) and as ids (readNpyIds: graph ids and ground truth).
#include "DatasetChecks.h"
#include "FuzzCommon.h"

#include "nearscape/io/DatasetReader.h"
#include "nearscape/io/Npy.h"

NEARSCAPE_FUZZ_TARGET(npy) {
  using namespace nearscape;
  const auto path = fuzz::writeInput("fuzz.npy", data, size);
  fuzz::expectEngineErrorsOnly([&] { fuzz::exerciseDataset(openDataset(path)); });
  fuzz::expectEngineErrorsOnly([&] {
    const Matrix<std::int64_t> ids = readNpyIds(path);
    volatile std::int64_t sink = 0;
    for (std::int64_t i = 0; i < ids.rows() * ids.cols(); ++i)
      sink = sink ^ ids.data()[i];
  });
}
