// TEXMEX files: the first byte picks .fvecs, .bvecs or .ivecs, the rest is the file.
#include "DatasetChecks.h"
#include "FuzzCommon.h"

#include "nearscape/io/DatasetReader.h"

NEARSCAPE_FUZZ_TARGET(vecs) {
  using namespace nearscape;
  if (size < 1)
    return;
  static const char* const kNames[3] = {"fuzz.fvecs", "fuzz.bvecs", "fuzz.ivecs"};
  const auto path = fuzz::writeInput(kNames[data[0] % 3], data + 1, size - 1);
  fuzz::expectEngineErrorsOnly([&] { fuzz::exerciseDataset(openDataset(path)); });
}
