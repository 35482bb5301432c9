#include "io/Readers.h"

#include "nearscape/io/Npy.h"

namespace nearscape::io {

Dataset readNpyDataset(const std::filesystem::path& path) {
  Dataset ds;
  ds.path = path.string();
  ds.format = "npy";
  ds.vectors = readNpyFloat(path, &ds.sourceDtype, &ds.memoryMapped);
  return ds;
}

} // namespace nearscape::io
