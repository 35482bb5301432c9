// Any bytes as an .hdf5 file, through openDataset (with loadQueries) and queryShapes: libhdf5's
// own parser meets the corrupt bytes first. Its findings are mostly bugs of Debian's libhdf5
// 1.10.8 (for example a corrupt global heap makes H5Aread of a variable-length string memcpy
// petabytes), which Nearscape cannot fix; so CI runs the target hdf5 (well-formed files, our
// checks) and this one is for long runs by hand (README "Hardening").
#include "DatasetChecks.h"
#include "FuzzCommon.h"

#include "nearscape/io/DatasetReader.h"

NEARSCAPE_FUZZ_TARGET(hdf5_raw) {
  using namespace nearscape;
  const auto path = fuzz::writeInput("fuzz.hdf5", data, size);
  fuzz::expectEngineErrorsOnly([&] {
    OpenOptions options;
    options.loadQueries = true;
    fuzz::exerciseDataset(openDataset(path, options));
  });
  fuzz::expectEngineErrorsOnly([&] { queryShapes(path); });
}
