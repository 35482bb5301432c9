// IDX files (the MNIST family), plain or gzip-compressed, and folders of them.
#include "io/Readers.h"

#include "nearscape/core/Error.h"
#include "nearscape/io/MappedFile.h"

#include <libdeflate.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>
#include <optional>

namespace nearscape::io {
namespace {

namespace fs = std::filesystem;

struct IdxArray {
  int type = 0; ///< 0x08 ubyte, 0x09 sbyte, 0x0B int16, 0x0C int32, 0x0D f32, 0x0E f64
  std::vector<std::int64_t> dims;
  std::vector<std::uint8_t> data; ///< raw big-endian values
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

/// Gzip files whose data (the trailer's ISIZE) is at most this are inflated whole by libdeflate,
/// about three times zlib's speed (fashion-mnist's 47 MB of training images: 0.10 s against
/// 0.31 s on the build machine); larger ones stream through zlib in bounded pieces.
constexpr std::uint64_t kWholeInflateLimit = std::uint64_t(256) << 20;

/// The whole data of the gzip file open on `fd` (`size` bytes), or nothing where it is not a
/// single gzip member of at most kWholeInflateLimit bytes that inflates cleanly (zlib then reads
/// it, and reports what is wrong). The output buffer is the trailer's size, within the deflate
/// ratio: libdeflate never writes past it.
std::optional<std::vector<std::uint8_t>> inflateWhole(int fd, std::uint64_t size) {
  std::uint8_t magic[2] = {};
  if (size < 18 || size > kWholeInflateLimit || ::pread(fd, magic, 2, 0) != 2 || magic[0] != 0x1f ||
      magic[1] != 0x8b)
    return std::nullopt;
  std::vector<std::uint8_t> packed(static_cast<std::size_t>(size));
  for (std::size_t done = 0; done < packed.size();) {
    const ssize_t got = ::pread(fd, packed.data() + done, packed.size() - done, off_t(done));
    if (got <= 0)
      return std::nullopt;
    done += std::size_t(got);
  }
  const std::uint64_t isize =
      std::uint64_t(packed[size - 4]) | std::uint64_t(packed[size - 3]) << 8 |
      std::uint64_t(packed[size - 2]) << 16 | std::uint64_t(packed[size - 1]) << 24;
  if (isize > kWholeInflateLimit || isize > size * kMaxDeflateRatio)
    return std::nullopt;
  std::vector<std::uint8_t> data(static_cast<std::size_t>(isize));
  std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> inflater(
      libdeflate_alloc_decompressor(), libdeflate_free_decompressor);
  std::size_t in = 0, out = 0;
  if (!inflater ||
      libdeflate_gzip_decompress_ex(inflater.get(), packed.data(), packed.size(), data.data(),
                                    data.size(), &in, &out) != LIBDEFLATE_SUCCESS ||
      in != packed.size() || out != data.size())
    return std::nullopt;
  return data;
}

// Reads a gzip (or plain: zlib passes it through) stream in bounded pieces, never more than the
// caller asks for: what follows the header's shape is never inflated — except gzip files of up
// to kWholeInflateLimit bytes, inflated whole at open by libdeflate and read from memory.
class GzStream {
public:
  explicit GzStream(const fs::path& path) : m_name(path.string()) {
    const int fd = openRegularFile(path, &m_fileSize); // a FIFO or device is refused, not read
    if (auto whole = inflateWhole(fd, m_fileSize)) {
      ::close(fd);
      m_whole = std::move(*whole);
      return;
    }
    if (::lseek(fd, 0, SEEK_SET) != 0) {
      ::close(fd);
      throw IoError(m_name + ": cannot read");
    }
    m_file = gzdopen(fd, "rb");
    if (!m_file) {
      ::close(fd);
      throw IoError(m_name + ": cannot open");
    }
    gzbuffer(m_file, 1 << 17);
  }
  ~GzStream() {
    if (m_file)
      gzclose(m_file);
  }
  GzStream(const GzStream&) = delete;
  GzStream& operator=(const GzStream&) = delete;

  /// Reads up to `size` bytes into `dst`; returns how many were read (fewer at the end).
  std::size_t read(std::uint8_t* dst, std::size_t size, JobControl* job) {
    if (!m_file) {
      if (job)
        job->check();
      const std::size_t n = std::min<std::size_t>(size, m_whole.size() - m_at);
      if (n > 0) // an empty inflated body has no data() to copy from
        std::memcpy(dst, m_whole.data() + m_at, n);
      m_at += n;
      return n;
    }
    std::size_t done = 0;
    while (done < size) {
      if (job)
        job->check();
      const std::size_t want = std::min<std::size_t>(size - done, 1 << 22);
      const int got = gzread(m_file, dst + done, static_cast<unsigned>(want));
      if (got < 0) {
        int errnum = 0;
        const char* msg = gzerror(m_file, &errnum);
        throw FormatError(m_name + ": corrupt compressed data: " + (msg ? msg : "?"));
      }
      done += std::size_t(got);
      if (got == 0)
        break;
      if (job && m_fileSize > 0)
        job->progress(std::min(1.0, double(gzoffset(m_file)) / double(m_fileSize)),
                      "reading " + fs::path(m_name).filename().string());
    }
    return done;
  }

  /// The next `size` bytes where the data is in memory (inflated whole) and holds them, taken
  /// as read; null otherwise.
  const std::uint8_t* take(std::size_t size) {
    if (m_file || m_whole.size() - m_at < size)
      return nullptr;
    const std::uint8_t* at = m_whole.data() + m_at;
    m_at += size;
    return at;
  }

  /// The most bytes of data the file can yield after the `consumed` ones: its own size, or the
  /// deflate ratio times it when compressed (known once a first read has looked at it).
  std::uint64_t capacityAfter(std::uint64_t consumed) const {
    if (!m_file)
      return m_whole.size() > consumed ? m_whole.size() - consumed : 0;
    const std::uint64_t ratio = gzdirect(m_file) ? 1 : kMaxDeflateRatio;
    const std::uint64_t total = m_fileSize > UINT64_MAX / ratio ? UINT64_MAX : m_fileSize * ratio;
    return total > consumed ? total - consumed : 0;
  }
  bool compressed() const { return !m_file || !gzdirect(m_file); }
  const std::string& name() const { return m_name; }

private:
  gzFile m_file = nullptr;           // null: inflated whole into m_whole
  std::vector<std::uint8_t> m_whole; // read from m_at on
  std::size_t m_at = 0;
  std::string m_name;
  std::uint64_t m_fileSize = 0;
};

/// An IDX file whose header has been read and checked; its body is still in the stream.
struct IdxSource {
  std::unique_ptr<GzStream> in;
  int type = 0;
  std::vector<std::int64_t> dims;
  std::uint64_t count = 0; ///< values
  std::uint64_t bytes = 0; ///< of the body
};

std::string hexByte(int value) {
  char text[8];
  std::snprintf(text, sizeof(text), "0x%02X", unsigned(value) & 0xffu);
  return text;
}

/// Reads the magic and the dims and checks the shape they promise against what the file can
/// hold, before anything of that size is allocated or inflated.
IdxSource openIdx(const fs::path& path, JobControl* job) {
  IdxSource src;
  src.in = std::make_unique<GzStream>(path);
  const std::string& name = src.in->name();
  std::uint8_t head[4 + 4 * 4] = {};
  if (src.in->read(head, 4, job) != 4)
    throw FormatError(name + ": truncated: no IDX header");
  if (head[0] != 0 || head[1] != 0)
    throw FormatError(name + ": not an IDX file (bad magic)");
  src.type = head[2];
  const int ndims = head[3];
  const std::size_t typeSize = idxTypeSize(src.type);
  if (typeSize == 0)
    throw FormatError(name + ": unsupported IDX element type " + hexByte(src.type));
  if (ndims < 1 || ndims > 4)
    throw FormatError(name + ": unsupported IDX rank " + std::to_string(ndims));
  if (src.in->read(head + 4, std::size_t(4 * ndims), job) != std::size_t(4 * ndims))
    throw FormatError(name + ": truncated IDX header");
  src.count = 1;
  for (int i = 0; i < ndims; ++i) {
    const std::uint8_t* p = head + 4 + 4 * i;
    const std::uint32_t v = (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) |
                            (std::uint32_t(p[2]) << 8) | p[3];
    src.dims.push_back(v);
    src.count = checkedProduct(src.count, v, name, "the product of the IDX dimensions");
  }
  src.bytes = checkedProduct(src.count, typeSize, name, "the product of the IDX dimensions");
  if (src.count == 0)
    throw FormatError(name + ": the IDX array is empty");
  const std::uint64_t capacity = src.in->capacityAfter(4 + 4 * std::uint64_t(ndims));
  if (src.bytes > capacity)
    throw FormatError(name + ": truncated: the header declares " + describeBytes(src.bytes) +
                      " of data, the file " +
                      (src.in->compressed() ? "cannot inflate to more than " : "holds ") +
                      describeBytes(capacity));
  return src;
}

/// Reads the whole body raw (labels: one small value per item).
IdxArray readBody(IdxSource& src, JobControl* job) {
  IdxArray a;
  a.type = src.type;
  a.dims = src.dims;
  a.data.resize(src.bytes);
  const std::size_t got = src.in->read(a.data.data(), a.data.size(), job);
  if (got != a.data.size())
    throw FormatError(src.in->name() + ": truncated: the header declares " +
                      std::to_string(src.bytes) + " bytes of data, the file holds " +
                      std::to_string(got));
  return a;
}

float idxValueAt(const std::uint8_t* p, int type) {
  switch (type) {
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

float idxValue(const IdxArray& a, std::size_t i) {
  return idxValueAt(a.data.data() + i * idxTypeSize(a.type), a.type);
}

/// Streams the body into `values` (as float) and, for uint8 data, `pixels` (may be null), a
/// bounded piece at a time: the raw data is never held whole beside its float copy. Inflating a
/// piece overlaps with converting the one before (a second thread): each took about half of
/// reading fashion-mnist (the conversion mostly first-touch page faults of the float array).
void convertBody(IdxSource& src, float* values, std::uint8_t* pixels, JobControl& job) {
  const std::size_t typeSize = idxTypeSize(src.type);
  // Inflated whole: converted by every core at once (the float array's first-touch page faults
  // spread with it).
  if (const std::uint8_t* raw = src.in->take(std::size_t(src.count) * typeSize)) {
    job.check();
    const int type = src.type;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < std::int64_t(src.count); ++i)
      values[i] = idxValueAt(raw + std::size_t(i) * typeSize, type);
    if (pixels)
      std::memcpy(pixels, raw, std::size_t(src.count));
    return;
  }
  const std::size_t piece = (std::size_t(1) << 22) / typeSize; // values per read
  std::vector<std::uint8_t> buffers[2];
  for (auto& b : buffers)
    b.resize(std::size_t(std::min<std::uint64_t>(src.count, piece) * typeSize));
  auto convert = [&src, values, pixels, typeSize](const std::uint8_t* raw, std::uint64_t at,
                                                  std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
      values[at + i] = idxValueAt(raw + i * typeSize, src.type);
    if (pixels)
      std::memcpy(pixels + at, raw, n);
  };
  std::future<void> converting; // waits in its destructor: never outlives the buffers
  std::uint64_t done = 0;
  for (int current = 0; done < src.count; current ^= 1) {
    const std::size_t n = std::size_t(std::min<std::uint64_t>(src.count - done, piece));
    std::vector<std::uint8_t>& buffer = buffers[current];
    const std::size_t got = src.in->read(buffer.data(), n * typeSize, &job);
    if (got != n * typeSize)
      throw FormatError(src.in->name() + ": truncated: the header declares " +
                        std::to_string(src.bytes) + " bytes of data, the file holds " +
                        std::to_string(done * typeSize + got));
    if (converting.valid())
      converting.get();
    converting = std::async(std::launch::async, convert, buffer.data(), done, n);
    done += n;
  }
  if (converting.valid())
    converting.get();
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
const std::vector<std::string> kFashionClasses = {"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                                  "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                                  "Bag",         "Ankle boot"};

struct IdxPart {
  IdxSource images; // header read, body still to stream
  IdxArray labels;  // empty when no labels file
  fs::path labelsPath;
};

IdxPart openPart(const fs::path& imagesPath, JobControl& job) {
  IdxPart part;
  part.images = openIdx(imagesPath, &job);
  if (part.images.dims.size() < 2)
    throw FormatError(imagesPath.string() + ": an IDX file of labels holds no vectors; open the "
                                            "images file or the folder");
  const fs::path labelsPath = labelsPathFor(imagesPath);
  std::error_code ec;
  if (!labelsPath.empty() && fs::exists(labelsPath, ec)) {
    IdxSource labels = openIdx(labelsPath, &job); // a FIFO or device is refused here
    part.labelsPath = labelsPath;
    if (labels.dims.size() != 1 || labels.dims[0] != part.images.dims[0])
      throw FormatError(labelsPath.string() + ": holds " + std::to_string(labels.dims[0]) +
                        " labels but " + imagesPath.filename().string() + " holds " +
                        std::to_string(part.images.dims[0]) + " images");
    requireFitsInMemory(labels.bytes, labelsPath.string(), "the IDX labels");
    part.labels = readBody(labels, &job);
  }
  return part;
}

/// Items per part and values per item, checked alike across parts.
struct IdxShape {
  std::int64_t n = 0, d = 0;
};

IdxShape shapeOf(const std::vector<IdxPart>& parts, const fs::path& source) {
  const auto& first = parts.front().images;
  IdxShape shape;
  shape.d = std::int64_t(first.count / std::uint64_t(first.dims[0]));
  for (const auto& p : parts) {
    if (p.images.dims.size() != first.dims.size() ||
        !std::equal(first.dims.begin() + 1, first.dims.end(), p.images.dims.begin() + 1))
      throw FormatError(source.string() + ": the IDX files have different image shapes");
    shape.n += p.images.dims[0];
  }
  return shape;
}

/// The labels of every part, or none when a part has no labels file.
std::vector<std::int32_t> collectLabels(const std::vector<IdxPart>& parts) {
  std::vector<std::int32_t> labels;
  if (!std::all_of(parts.begin(), parts.end(),
                   [](const IdxPart& p) { return !p.labels.dims.empty(); }))
    return labels;
  for (const auto& p : parts)
    for (std::size_t i = 0; i < std::size_t(p.labels.dims[0]); ++i) {
      const float value = idxValue(p.labels, i);
      if (!(value >= 0 && value <= 100000)) // also NaN
        throw FormatError(p.labelsPath.string() + ": label " + std::to_string(value) + " of item " +
                          std::to_string(i + 1) + " is out of range [0, 100000]");
      labels.push_back(static_cast<std::int32_t>(value));
    }
  return labels;
}

Dataset assemble(std::vector<IdxPart>& parts, const fs::path& source, bool thumbnails,
                 JobControl& job) {
  const auto& first = parts.front().images;
  const std::string name = source.string();
  const IdxShape shape = shapeOf(parts, source);
  const std::uint64_t count =
      checkedProduct(std::uint64_t(shape.n), std::uint64_t(shape.d), name, "the IDX shape");
  // Thumbnails are small grey images; a huge "image" is data, not something to draw.
  const bool grey8 = first.type == 0x08 && first.dims.size() == 3 && first.dims[1] <= 4096 &&
                     first.dims[2] <= 4096 && thumbnails;
  requireFitsInMemory(checkedProduct(count, grey8 ? 5 : 4, name, "the IDX shape"), name,
                      "the IDX data");
  std::vector<float> values(count);
  std::vector<std::uint8_t> pixels(grey8 ? count : 0);
  // The parts (fashion-mnist's train and t10k files) inflate at once, each into its own rows;
  // the first reports progress, the others only stop with the job.
  std::vector<std::uint64_t> offsets(parts.size(), 0);
  for (std::size_t i = 1; i < parts.size(); ++i)
    offsets[i] = offsets[i - 1] + parts[i - 1].images.count;
  std::vector<std::unique_ptr<JobControl>> quietJobs;
  std::vector<std::future<void>> others; // wait in their destructors, before quietJobs go
  for (std::size_t i = 1; i < parts.size(); ++i) {
    quietJobs.push_back(std::make_unique<JobControl>(job, nullptr));
    others.push_back(std::async(std::launch::async, [&, i, quiet = quietJobs.back().get()] {
      convertBody(parts[i].images, values.data() + offsets[i],
                  grey8 ? pixels.data() + offsets[i] : nullptr, *quiet);
    }));
  }
  try {
    convertBody(parts.front().images, values.data(), grey8 ? pixels.data() : nullptr, job);
  } catch (...) { // the others stop too, and are waited for as `others` goes
    for (const auto& quiet : quietJobs)
      quiet->requestStop();
    throw;
  }
  for (std::future<void>& part : others)
    part.get();

  Dataset ds;
  ds.path = name;
  ds.format = "idx";
  ds.sourceDtype = idxTypeName(first.type);
  ds.vectors = Matrix<float>(std::move(values), shape.n, shape.d);
  if (grey8) {
    ds.thumbnails.height = int(first.dims[1]);
    ds.thumbnails.width = int(first.dims[2]);
    ds.thumbnails.channels = 1;
    ds.thumbnails.pixels = Matrix<std::uint8_t>(std::move(pixels), shape.n, shape.d);
  }
  std::vector<std::int32_t> labels = collectLabels(parts);
  if (!labels.empty()) {
    const std::int32_t maxLabel = *std::max_element(labels.begin(), labels.end());
    const bool fashion = lower(name).find("fashion") != std::string::npos &&
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
    std::error_code ec;
    if (fs::exists(p, ec))
      return p; // a FIFO or device found here is refused when opened, never read
  }
  return {};
}

} // namespace

Dataset readIdxFile(const fs::path& path, bool thumbnails, JobControl& job) {
  std::vector<IdxPart> parts;
  parts.push_back(openPart(path, job));
  return assemble(parts, path, thumbnails, job);
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
    parts.push_back(openPart(p, job));
  return assemble(parts, folder, thumbnails, job);
}

} // namespace nearscape::io
