// IDX (MNIST family). The first byte chooses how the rest becomes files:
//   bits 0-1: 0 a plain file, 1 gzip-compressed here (the reader's gz path over valid streams),
//             2 the bytes as a .gz file themselves (corrupt streams), 3 a folder of them
//   bit 2:    a labels file too: two bytes (little-endian) give the images part's length, the
//             labels file is what follows it
// Images are "fuzz-images-idx3-ubyte" (the reader pairs "fuzz-labels-idx1-ubyte" with them);
// a folder holds "train-images-idx3-ubyte" and "train-labels-idx1-ubyte".
#include "DatasetChecks.h"
#include "FuzzCommon.h"

#include "nearscape/io/DatasetReader.h"

#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <string>

namespace {

std::string gzipped(std::string_view bytes) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    std::abort();
  std::string out(deflateBound(&z, uLong(bytes.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = uInt(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END)
    std::abort();
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

} // namespace

NEARSCAPE_FUZZ_TARGET(idx) {
  using namespace nearscape;
  namespace fs = std::filesystem;
  if (size < 1)
    return;
  const int mode = data[0] & 3;
  const bool withLabels = data[0] & 4;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string_view images = rest, labels;
  if (withLabels) {
    if (rest.size() < 2)
      return;
    const std::size_t length = std::uint8_t(rest[0]) | (std::size_t(std::uint8_t(rest[1])) << 8);
    rest.remove_prefix(2);
    images = rest.substr(0, std::min(length, rest.size()));
    labels = rest.substr(images.size());
  }
  const fs::path folder = fuzz::scratchFolder() / "idx";
  std::error_code ec;
  fs::remove_all(folder, ec);
  fs::create_directory(folder);
  const std::string prefix = mode == 3 ? "train-" : "fuzz-";
  const std::string suffix = mode == 1 || mode == 2 ? ".gz" : "";
  auto put = [&](const std::string& name, std::string_view bytes) {
    const std::string content = mode == 1 ? gzipped(bytes) : std::string(bytes);
    return fuzz::writeInput("idx/" + prefix + name + suffix, content);
  };
  const fs::path imagesPath = put("images-idx3-ubyte", images);
  if (withLabels)
    put("labels-idx1-ubyte", labels);
  fuzz::expectEngineErrorsOnly([&] {
    OpenOptions options;
    options.loadThumbnails = true;
    fuzz::exerciseDataset(openDataset(mode == 3 ? folder : imagesPath, options));
  });
}
