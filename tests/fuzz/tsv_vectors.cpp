// TensorBoard-projector vectors: one item a line, values separated by tabs.
#include "DatasetChecks.h"
#include "FuzzCommon.h"

#include "nearscape/io/DatasetReader.h"

NEARSCAPE_FUZZ_TARGET(tsv_vectors) {
  using namespace nearscape;
  const auto path = fuzz::writeInput("fuzz.tsv", data, size);
  fuzz::expectEngineErrorsOnly([&] { fuzz::exerciseDataset(openDataset(path)); });
}
