// IDX files (the MNIST family), plain or gzip-compressed, and folders of them.
#include "io/Readers.h"

#include "nearscape/core/Error.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>

namespace nearscape::io {
namespace {

namespace fs = std::filesystem;

struct IdxArray {
  int type = 0;                    ///< 0x08 ubyte, 0x09 sbyte, 0x0B int16, 0x0C int32, 0x0D f32, 0x0E f64
  std::vector<std::int64_t> dims;
  std::vector<std::uint8_t> data;  ///< raw big-endian values
};

std::size_t idxTypeSize(int type) {
  switch (type) {
  case 0x08:
  case 0x09:
    return 1;
  case 0x0B:
    return 2;
  case 0x0C:
  case 0x0D:
    return 4;
  case 0x0E:
    return 8;
  default:
    return 0;
  }
}

// Reads exactly `size` bytes from a gzip (or plain: zlib passes it through) stream, growing the
// buffer as data arrives so that a lying header cannot make us allocate a huge block up front.
class GzStream {
public:
  explicit GzStream(const fs::path& path) : m_name(path.string()) {
    m_file = gzopen(path.c_str(), "rb");
    if (!m_file)
      throw IoError(m_name + ": cannot open");
    gzbuffer(m_file, 1 << 17);
    std::error_code ec;
    m_compressedSize = fs::file_size(path, ec);
  }
  ~GzStream() { gzclose(m_file); }
  GzStream(const GzStream&) = delete;
  GzStream& operator=(const GzStream&) = delete;

  /// Appends up to `size` bytes to `out`; returns how many were read.
  std::size_t read(std::vector<std::uint8_t>& out, std::size_t size, JobControl* job) {
    std::size_t done = 0;
    while (done < size) {
      if (job)
        job->check();
      const std::size_t want = std::min<std::size_t>(size - done, 1 << 22);
      const std::size_t old = out.size();
      out.resize(old + want);
      const int got = gzread(m_file, out.data() + old, static_cast<unsigned>(want));
      if (got < 0) {
        int errnum = 0;
        const char* msg = gzerror(m_file, &errnum);
        throw FormatError(m_name + ": corrupt compressed data: " + (msg ? msg : "?"));
      }
      out.resize(old + std::size_t(got));
      done += std::size_t(got);
      if (got == 0)
        break;
      if (job && m_compressedSize > 0)
        job->progress(std::min(1.0, double(gzoffset(m_file)) / double(m_compressedSize)),
                      "reading " + fs::path(m_name).filename().string());
    }
    return done;
  }

private:
  gzFile m_file = nullptr;
  std::string m_name;
  std::uintmax_t m_compressedSize = 0;
};

IdxArray readIdx(const fs::path& path, JobControl* job) {
  const std::string name = path.string();
  GzStream in(path);
  std::vector<std::uint8_t> head;
  if (in.read(head, 4, job) != 4)
    throw FormatError(name + ": truncated: no IDX header");
  if (head[0] != 0 || head[1] != 0)
    throw FormatError(name + ": not an IDX file (bad magic)");
  IdxArray a;
  a.type = head[2];
  const int ndims = head[3];
  const std::size_t typeSize = idxTypeSize(a.type);
  if (typeSize == 0)
    throw FormatError(name + ": unsupported IDX element type 0x" + std::to_string(a.type));
  if (ndims < 1 || ndims > 4)
    throw FormatError(name + ": unsupported IDX rank " + std::to_string(ndims));
  std::vector<std::uint8_t> dimBytes;
  if (in.read(dimBytes, std::size_t(4 * ndims), job) != std::size_t(4 * ndims))
    throw FormatError(name + ": truncated IDX header");
  std::size_t count = 1;
  for (int i = 0; i < ndims; ++i) {
    const std::uint32_t v = (std::uint32_t(dimBytes[4 * i]) << 24) |
                            (std::uint32_t(dimBytes[4 * i + 1]) << 16) |
                            (std::uint32_t(dimBytes[4 * i + 2]) << 8) | dimBytes[4 * i + 3];
    a.dims.push_back(v);
    if (__builtin_mul_overflow(count, std::size_t(v), &count))
      throw FormatError(name + ": IDX dimensions overflow");
  }
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(count, typeSize, &bytes))
    throw FormatError(name + ": IDX dimensions overflow");
  if (count == 0)
    throw FormatError(name + ": the IDX array is empty");
  const std::size_t got = in.read(a.data, bytes, job);
  if (got != bytes)
    throw FormatError(name + ": truncated: the header declares " + std::to_string(bytes) +
                      " bytes of data, the file holds " + std::to_string(got));
  return a;
}

float idxValue(const IdxArray& a, std::size_t i) {
  const std::uint8_t* p = a.data.data() + i * idxTypeSize(a.type);
  switch (a.type) {
  case 0x08:
    return p[0];
  case 0x09:
    return static_cast<std::int8_t>(p[0]);
  case 0x0B:
    return static_cast<std::int16_t>((p[0] << 8) | p[1]);
  case 0x0C:
    return static_cast<float>(static_cast<std::int32_t>((std::uint32_t(p[0]) << 24) |
                                                         (std::uint32_t(p[1]) << 16) |
                                                         (std::uint32_t(p[2]) << 8) | p[3]));
  case 0x0D: {
    const std::uint32_t bits = (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) |
                               (std::uint32_t(p[2]) << 8) | p[3];
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  default: {
    std::uint64_t bits = 0;
    for (int k = 0; k < 8; ++k)
      bits = (bits << 8) | p[k];
    double f;
    std::memcpy(&f, &bits, 8);
    return static_cast<float>(f);
  }
  }
}

const char* idxTypeName(int type) {
  switch (type) {
  case 0x08:
    return "uint8";
  case 0x09:
    return "int8";
  case 0x0B:
    return "int16";
  case 0x0C:
    return "int32";
  case 0x0D:
    return "float32";
  default:
    return "float64";
  }
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

/// The labels file beside an images file ("…-images-idx3-ubyte…" → "…-labels-idx1-ubyte…").
fs::path labelsPathFor(const fs::path& images) {
  std::string file = images.filename().string();
  const auto pos = file.find("images-idx3");
  if (pos == std::string::npos)
    return {};
  file.replace(pos, std::strlen("images-idx3"), "labels-idx1");
  return images.parent_path() / file;
}

/// Fashion-MNIST's ten classes, used only when the data is recognised as Fashion-MNIST.
const std::vector<std::string> kFashionClasses = {"T-shirt/top", "Trouser", "Pullover", "Dress",
                                                  "Coat",        "Sandal",  "Shirt",    "Sneaker",
                                                  "Bag",         "Ankle boot"};

struct IdxPart {
  IdxArray images;
  IdxArray labels; // empty when no labels file
  fs::path labelsPath;
};

IdxPart readPart(const fs::path& imagesPath, JobControl& job) {
  IdxPart part;
  part.images = readIdx(imagesPath, &job);
  if (part.images.dims.size() < 2)
    throw FormatError(imagesPath.string() + ": an IDX file of labels holds no vectors; open the "
                                            "images file or the folder");
  const fs::path labelsPath = labelsPathFor(imagesPath);
  if (!labelsPath.empty() && fs::exists(labelsPath)) {
    part.labels = readIdx(labelsPath, &job);
    part.labelsPath = labelsPath;
    if (part.labels.dims.size() != 1 || part.labels.dims[0] != part.images.dims[0])
      throw FormatError(labelsPath.string() + ": holds " + std::to_string(part.labels.dims[0]) +
                        " labels but " + imagesPath.filename().string() + " holds " +
                        std::to_string(part.images.dims[0]) + " images");
  }
  return part;
}

Dataset assemble(const std::vector<IdxPart>& parts, const fs::path& source, bool thumbnails) {
  const auto& first = parts.front().images;
  std::int64_t d = 1;
  for (std::size_t i = 1; i < first.dims.size(); ++i)
    d *= first.dims[i];
  std::int64_t n = 0;
  for (const auto& p : parts) {
    if (p.images.dims.size() != first.dims.size() ||
        !std::equal(first.dims.begin() + 1, first.dims.end(), p.images.dims.begin() + 1))
      throw FormatError(source.string() + ": the IDX files have different image shapes");
    n += p.images.dims[0];
  }
  std::vector<float> values(static_cast<std::size_t>(n * d));
  const bool grey8 = first.type == 0x08 && first.dims.size() == 3;
  std::vector<std::uint8_t> pixels;
  if (grey8 && thumbnails)
    pixels.resize(std::size_t(n * d));
  std::vector<std::int32_t> labels;
  const bool allLabelled =
      std::all_of(parts.begin(), parts.end(), [](const IdxPart& p) { return !p.labels.dims.empty(); });
  std::size_t offset = 0;
  std::int32_t maxLabel = -1;
  for (const auto& p : parts) {
    const std::size_t count = p.images.data.size() / idxTypeSize(p.images.type);
    if (p.images.type == 0x08) {
      std::transform(p.images.data.begin(), p.images.data.end(), values.begin() + offset,
                     [](std::uint8_t v) { return float(v); });
      if (!pixels.empty())
        std::copy(p.images.data.begin(), p.images.data.end(), pixels.begin() + offset);
    } else {
      for (std::size_t i = 0; i < count; ++i)
        values[offset + i] = idxValue(p.images, i);
    }
    offset += count;
    if (allLabelled)
      for (std::size_t i = 0; i < std::size_t(p.labels.dims[0]); ++i) {
        const auto label = static_cast<std::int32_t>(idxValue(p.labels, i));
        if (label < 0 || label > 100000)
          throw FormatError(p.labelsPath.string() + ": label " + std::to_string(label) +
                            " at item " + std::to_string(i) + " is out of range");
        labels.push_back(label);
        maxLabel = std::max(maxLabel, label);
      }
  }

  Dataset ds;
  ds.path = source.string();
  ds.format = "idx";
  ds.sourceDtype = idxTypeName(first.type);
  ds.vectors = Matrix<float>(std::move(values), n, d);
  if (!pixels.empty()) {
    ds.thumbnails.height = int(first.dims[1]);
    ds.thumbnails.width = int(first.dims[2]);
    ds.thumbnails.channels = 1;
    ds.thumbnails.pixels = Matrix<std::uint8_t>(std::move(pixels), n, d);
  }
  if (allLabelled) {
    const bool fashion = lower(source.string()).find("fashion") != std::string::npos &&
                         first.dims.size() == 3 && first.dims[1] == 28 && first.dims[2] == 28 &&
                         maxLabel <= 9;
    ds.labels = std::move(labels);
    if (fashion) {
      ds.labelNames = kFashionClasses;
    } else {
      for (std::int32_t i = 0; i <= maxLabel; ++i)
        ds.labelNames.push_back(std::to_string(i));
    }
    ds.labelSource = "IDX labels";
  }
  return ds;
}

fs::path findIdx(const fs::path& folder, const std::string& stem) {
  for (const char* suffix : {"", ".gz"}) {
    const fs::path p = folder / (stem + suffix);
    if (fs::exists(p))
      return p;
  }
  return {};
}

} // namespace

Dataset readIdxFile(const fs::path& path, bool thumbnails, JobControl& job) {
  std::vector<IdxPart> parts;
  parts.push_back(readPart(path, job));
  return assemble(parts, path, thumbnails);
}

Dataset readIdxFolder(const fs::path& folder, bool thumbnails, JobControl& job) {
  std::vector<fs::path> images;
  for (const char* prefix : {"train", "t10k"}) {
    const fs::path p = findIdx(folder, std::string(prefix) + "-images-idx3-ubyte");
    if (!p.empty())
      images.push_back(p);
  }
  if (images.empty())
    throw FormatError(folder.string() + ": no IDX images (train-images-idx3-ubyte[.gz] or "
                                        "t10k-images-idx3-ubyte[.gz]) in this folder");
  std::vector<IdxPart> parts;
  for (const auto& p : images)
    parts.push_back(readPart(p, job));
  return assemble(parts, folder, thumbnails);
}

} // namespace nearscape::io
