// .fvecs / .bvecs / .ivecs (the TEXMEX corpus format): each record is an int32 dimension d
// followed by d values (float32, uint8 or int32).
#include "io/Readers.h"

#include "nearscape/core/Error.h"
#include "nearscape/io/MappedFile.h"

#include <cstring>

namespace nearscape::io {

Dataset readVecs(const std::filesystem::path& path, char kind, JobControl& job) {
  const auto file = MappedFile::open(path);
  const std::string name = path.string();
  const std::size_t valueSize = kind == 'b' ? 1 : 4;
  if (file->size() == 0)
    throw FormatError(name + ": the file is empty");
  if (file->size() < 4)
    throw FormatError(name + ": truncated: shorter than one record header");
  std::int32_t d = 0;
  std::memcpy(&d, file->data(), 4);
  if (d <= 0 || d > (1 << 24))
    throw FormatError(name + ": implausible dimension " + std::to_string(d) +
                      " in the first record (bad file or wrong format)");
  const std::size_t recordSize = 4 + std::size_t(d) * valueSize;
  if (file->size() % recordSize != 0)
    throw FormatError(name + ": truncated or mixed dimensions: " + std::to_string(file->size()) +
                      " bytes is not a whole number of " + std::to_string(recordSize) +
                      "-byte records (d = " + std::to_string(d) + ")");
  const std::int64_t n = std::int64_t(file->size() / recordSize);
  std::vector<float> values(std::size_t(n) * std::size_t(d));
  const std::int64_t chunk = 1 << 16;
  for (std::int64_t start = 0; start < n; start += chunk) {
    job.check();
    const std::int64_t end = std::min(n, start + chunk);
    for (std::int64_t i = start; i < end; ++i) {
      const std::uint8_t* rec = file->data() + std::size_t(i) * recordSize;
      std::int32_t di;
      std::memcpy(&di, rec, 4);
      if (di != d)
        throw FormatError(name + ": record " + std::to_string(i + 1) + " has dimension " +
                          std::to_string(di) + ", the first has " + std::to_string(d));
      float* out = values.data() + std::size_t(i) * d;
      const std::uint8_t* src = rec + 4;
      if (kind == 'f') {
        std::memcpy(out, src, std::size_t(d) * 4);
      } else if (kind == 'b') {
        for (std::int32_t j = 0; j < d; ++j)
          out[j] = src[j];
      } else {
        for (std::int32_t j = 0; j < d; ++j) {
          std::int32_t v;
          std::memcpy(&v, src + 4 * j, 4);
          out[j] = static_cast<float>(v);
        }
      }
    }
    job.progress(double(end) / double(n), "reading vectors");
  }
  file->throwIfChanged();
  Dataset ds;
  ds.path = name;
  ds.format = kind == 'f' ? "fvecs" : kind == 'b' ? "bvecs" : "ivecs";
  ds.sourceDtype = kind == 'f' ? "float32" : kind == 'b' ? "uint8" : "int32";
  ds.vectors = Matrix<float>(std::move(values), n, d);
  return ds;
}

} // namespace nearscape::io
