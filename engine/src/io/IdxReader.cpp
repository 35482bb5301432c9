// IDX files (the MNIST family), plain or gzip-compressed, and folders of them.
#include "io/Convert.h"
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

/// Gzip files of uint8 values whose data (the trailer's ISIZE) is at most this are inflated
/// whole by libdeflate, about three times zlib's speed (fashion-mnist's 47 MB of training
/// images: 0.10 s against 0.31 s on the build machine), straight into the memory the values
/// take; the others stream through zlib in bounded pieces.
constexpr std::uint64_t kWholeInflateLimit = std::uint64_t(256) << 20;

/// Compressed bytes read from the file at a time.
constexpr std::size_t kInputPiece = std::size_t(1) << 20;

// Reads a gzip file (every member, one after the other, through one zlib stream of constant
// memory) or a plain one in bounded pieces, never more than the caller asks for: what follows
// the header's shape is inflated only by finish(), which checks each member's CRC-32 and length
// (zlib checks them as it reaches a member's end: a file cut inside its trailer is an error).
class GzStream {
public:
  explicit GzStream(const fs::path& path) : m_name(path.string()) {
    m_fd = openRegularFile(path, &m_fileSize); // a FIFO or device is refused, not read
    std::uint8_t magic[2] = {};
    m_compressed = ::pread(m_fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (m_compressed && inflateInit2(&m_z, 16 + MAX_WBITS) != Z_OK) {
      ::close(m_fd);
      throw IoError(m_name + ": cannot start zlib");
    }
  }
  ~GzStream() {
    if (m_compressed)
      inflateEnd(&m_z);
    ::close(m_fd);
  }
  GzStream(const GzStream&) = delete;
  GzStream& operator=(const GzStream&) = delete;

  /// Reads up to `size` bytes into `dst`; returns how many were read (fewer at the end).
  /// Throws FormatError (corrupt or truncated compressed data), IoError, Cancelled.
  std::size_t read(std::uint8_t* dst, std::size_t size, JobControl* job) {
    std::size_t done = 0;
    while (done < size) {
      if (job)
        job->check();
      const std::size_t want = std::min<std::size_t>(size - done, std::size_t(1) << 22);
      const std::size_t got =
          m_compressed ? inflateSome(dst + done, want) : readPlain(dst + done, want);
      done += got;
      if (got == 0)
        break;
      if (job && m_fileSize > 0)
        job->progress(std::min(1.0, double(m_fileOffset) / double(m_fileSize)),
                      "reading " + fs::path(m_name).filename().string());
    }
    m_consumed += done;
    return done;
  }

  /// Reads on to the end of the gzip member the caller's data ended in, so that the trailer of
  /// every member that data came from is checked (what more that member holds is not kept;
  /// later members are never inflated). Throws as read does.
  void finish(JobControl* job) {
    std::vector<std::uint8_t> scratch;
    while (m_compressed && !m_memberEnded) {
      if (job)
        job->check();
      scratch.resize(std::size_t(1) << 16);
      inflateSome(scratch.data(), scratch.size(), /*toMemberEnd=*/true);
    }
  }

  /// The most bytes of data the file can yield after the `consumed` ones: its own size, or the
  /// deflate ratio times it when compressed.
  std::uint64_t capacityAfter(std::uint64_t consumed) const {
    const std::uint64_t ratio = m_compressed ? kMaxDeflateRatio : 1;
    const std::uint64_t total = m_fileSize > UINT64_MAX / ratio ? UINT64_MAX : m_fileSize * ratio;
    return total > consumed ? total - consumed : 0;
  }
  bool compressed() const { return m_compressed; }
  const std::string& name() const { return m_name; }
  /// The data read so far.
  std::uint64_t consumed() const { return m_consumed; }

  /// The whole file's data, inflated by libdeflate into `dst` (exactly `size` bytes, the
  /// trailer's CRC-32 and length checked), where the file is one gzip member of at most
  /// kWholeInflateLimit bytes that holds exactly that; false otherwise (nothing is promised
  /// of `dst`: stream it instead). Takes the compressed file whole into memory, not the data.
  bool inflateWholeInto(std::uint8_t* dst, std::uint64_t size) const {
    if (!m_compressed || m_fileSize < 18 || m_fileSize > kWholeInflateLimit ||
        size > kWholeInflateLimit)
      return false;
    std::uint8_t trailer[4] = {};
    if (::pread(m_fd, trailer, 4, off_t(m_fileSize - 4)) != 4)
      return false;
    const std::uint64_t isize = std::uint64_t(trailer[0]) | std::uint64_t(trailer[1]) << 8 |
                                std::uint64_t(trailer[2]) << 16 | std::uint64_t(trailer[3]) << 24;
    if (isize != size)
      return false;
    std::vector<std::uint8_t> packed(static_cast<std::size_t>(m_fileSize));
    for (std::size_t done = 0; done < packed.size();) {
      const ssize_t got = ::pread(m_fd, packed.data() + done, packed.size() - done, off_t(done));
      if (got <= 0)
        return false;
      done += std::size_t(got);
    }
    std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> inflater(
        libdeflate_alloc_decompressor(), libdeflate_free_decompressor);
    std::size_t in = 0, out = 0;
    return inflater &&
           libdeflate_gzip_decompress_ex(inflater.get(), packed.data(), packed.size(), dst,
                                         std::size_t(size), &in, &out) == LIBDEFLATE_SUCCESS &&
           in == packed.size() && out == size;
  }

private:
  std::size_t readPlain(std::uint8_t* dst, std::size_t size) {
    const ssize_t got = ::pread(m_fd, dst, size, off_t(m_fileOffset));
    if (got < 0)
      throw IoError(m_name + ": cannot read");
    m_fileOffset += std::uint64_t(got);
    return std::size_t(got);
  }

  /// Inflates up to `size` bytes (0 only at the end of the last member); with `toMemberEnd`,
  /// no further than the end of the member in progress.
  std::size_t inflateSome(std::uint8_t* dst, std::size_t size, bool toMemberEnd = false) {
    m_z.next_out = dst;
    m_z.avail_out = uInt(size);
    while (m_z.avail_out > 0) {
      if (m_z.avail_in == 0 && !refill()) {
        if (m_memberEnded)
          break; // the end of the last member
        throw FormatError(m_name + ": truncated: the compressed data ends inside a gzip member" +
                          " (its data or its 8-byte CRC-32 and length trailer)");
      }
      if (m_memberEnded) { // what follows a member must be another one
        if (m_z.avail_in >= 1 && m_z.next_in[0] != 0x1f)
          throw FormatError(m_name + ": data after the end of the gzip stream is not gzip");
        inflateReset(&m_z);
        m_memberEnded = false;
      }
      const int rc = inflate(&m_z, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        m_memberEnded = true; // zlib has checked the member's CRC-32 and length
        if (toMemberEnd)
          break;
      } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && m_z.avail_in == 0)) {
        throw FormatError(m_name +
                          ": corrupt compressed data: " + (m_z.msg ? m_z.msg : zError(rc)));
      }
    }
    return size - m_z.avail_out;
  }

  bool refill() {
    m_input.resize(kInputPiece);
    const ssize_t got = ::pread(m_fd, m_input.data(), m_input.size(), off_t(m_fileOffset));
    if (got < 0)
      throw IoError(m_name + ": cannot read");
    m_fileOffset += std::uint64_t(got);
    m_z.next_in = m_input.data();
    m_z.avail_in = uInt(got);
    return got > 0;
  }

  int m_fd = -1;
  bool m_compressed = false;
  z_stream m_z{};
  bool m_memberEnded = false; ///< the last member read ended (its trailer checked)
  std::vector<std::uint8_t> m_input;
  std::string m_name;
  std::uint64_t m_fileSize = 0, m_fileOffset = 0, m_consumed = 0;
};

/// An IDX file whose header has been read and checked; its body is still in the stream.
struct IdxSource {
  std::unique_ptr<GzStream> in;
  int type = 0;
  std::vector<std::int64_t> dims;
  std::uint64_t count = 0; ///< values
  std::uint64_t bytes = 0; ///< of the body
  std::uint64_t headerBytes = 0;
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
  src.headerBytes = 4 + 4 * std::uint64_t(ndims);
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
  src.in->finish(job);
  return a;
}

/// A big-endian float64 (IDX type 0x0E).
double idxDoubleAt(const std::uint8_t* p) {
  std::uint64_t bits = 0;
  for (int k = 0; k < 8; ++k)
    bits = (bits << 8) | p[k];
  double f;
  std::memcpy(&f, &bits, 8);
  return f;
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
  default:
    return static_cast<float>(idxDoubleAt(p)); // out of float32's range: see convertRaw
  }
}

float idxValue(const IdxArray& a, std::size_t i) {
  return idxValueAt(a.data.data() + i * idxTypeSize(a.type), a.type);
}

/// Converts `n` raw values (IDX type `type`, `cols` a row) to float; float64 rows are checked
/// against float32's range (Convert.h), named from row `firstRow` of `name`.
void convertRaw(const std::uint8_t* raw, int type, std::uint64_t n, std::int64_t cols,
                std::int64_t firstRow, float* values, const std::string& name) {
  if (type == 0x0E) {
    convertFloat64Rows([raw](std::size_t i) { return idxDoubleAt(raw + 8 * i); },
                       std::int64_t(n) / cols, cols, values, firstRow, name);
    return;
  }
  const std::size_t typeSize = idxTypeSize(type);
#pragma omp parallel for schedule(static) if (n > (1u << 20))
  for (std::int64_t i = 0; i < std::int64_t(n); ++i)
    values[i] = idxValueAt(raw + std::size_t(i) * typeSize, type);
}

/// Streams the body into `values` (as float; `cols` a row, the first being row `firstRow` of the
/// data) and, for uint8 data, `pixels` (may be null): the inflated data goes into the memory it
/// ends in, never whole beside it, and that memory is written only as the data arrives.
/// Inflating a piece overlaps with converting the one before (a second thread): each took about
/// half of reading fashion-mnist (the conversion mostly first-touch page faults of the floats).
/// Then the rest of the file is read for its gzip trailers.
void convertBody(IdxSource& src, std::int64_t cols, std::int64_t firstRow, float* values,
                 std::uint8_t* pixels, JobControl& job) {
  const std::string& name = src.in->name();
  if (src.type == 0x08 && src.in->compressed()) {
    // Inflated whole (libdeflate) into the tail of the part's own float memory, then converted
    // forward: float i ends before the raw byte i + 1 it has not read yet.
    const std::uint64_t count = src.count, header = src.headerBytes;
    auto* tail = reinterpret_cast<std::uint8_t*>(values) + 3 * count - std::min(header, 3 * count);
    job.check();
    if (3 * count >= header && src.in->inflateWholeInto(tail, header + count)) {
      const std::uint8_t* raw = tail + header;
      if (pixels) {
        std::memcpy(pixels, raw, std::size_t(count));
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < std::int64_t(count); ++i)
          values[i] = pixels[i];
      } else {
        for (std::uint64_t i = 0; i < count; ++i)
          values[i] = raw[i];
      }
      return;
    }
  }
  const std::size_t typeSize = idxTypeSize(src.type);
  const std::uint64_t rowsPerPiece =
      std::max<std::uint64_t>(1, (std::uint64_t(1) << 22) / typeSize / std::uint64_t(cols));
  const std::uint64_t piece = rowsPerPiece * std::uint64_t(cols); // values per read: whole rows
  if (typeSize != 1)
    pixels = nullptr; // (assemble keeps pixels for uint8 data only)
  std::vector<std::uint8_t> buffers[2];
  if (!pixels) // uint8 with pixels: read straight into them
    for (auto& b : buffers)
      b.resize(std::size_t(std::min(src.count, piece) * typeSize));
  auto convert = [&src, values, cols, firstRow, &name](const std::uint8_t* raw, std::uint64_t at,
                                                       std::uint64_t n) {
    convertRaw(raw, src.type, n, cols, firstRow + std::int64_t(at) / cols, values + at, name);
  };
  std::future<void> converting; // waits in its destructor: never outlives the buffers
  std::uint64_t done = 0;
  for (int current = 0; done < src.count; current ^= 1) {
    const std::uint64_t n = std::min(src.count - done, piece);
    std::uint8_t* into = pixels ? pixels + done : buffers[current].data();
    const std::size_t got = src.in->read(into, std::size_t(n * typeSize), &job);
    if (got != n * typeSize)
      throw FormatError(name + ": truncated: the header declares " + std::to_string(src.bytes) +
                        " bytes of data, the file holds " + std::to_string(done * typeSize + got));
    if (converting.valid())
      converting.get();
    converting = std::async(std::launch::async, convert, into, done, n);
    done += n;
  }
  if (converting.valid())
    converting.get();
  src.in->finish(&job);
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

IdxPart openPart(const fs::path& imagesPath, std::uint64_t budget, JobControl& job) {
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
    requireFitsInMemory(labels.bytes, labelsPath.string(), "the IDX labels", budget);
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
    if (p.images.type != first.type)
      throw FormatError(source.string() + ": the IDX files have different element types");
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

Dataset assemble(std::vector<IdxPart>& parts, const fs::path& source, const OpenOptions& options,
                 JobControl& job) {
  const auto& first = parts.front().images;
  const std::string name = source.string();
  const IdxShape shape = shapeOf(parts, source);
  const std::uint64_t count =
      checkedProduct(std::uint64_t(shape.n), std::uint64_t(shape.d), name, "the IDX shape");
  // Thumbnails are small grey images; a huge "image" is data, not something to draw.
  const bool grey8 = first.type == 0x08 && first.dims.size() == 3 && first.dims[1] <= 4096 &&
                     first.dims[2] <= 4096 && options.loadThumbnails;
  requireFitsInMemory(checkedProduct(count, grey8 ? 5 : 4, name, "the IDX shape"), name,
                      "the IDX data", options.memoryBudget);
  // Not zeroed: each page is first written by the data read into it, so a file that ends early
  // has cost the memory of what it held, not of what its header declared.
  const std::shared_ptr<float[]> values(new float[count]);
  const std::shared_ptr<std::uint8_t[]> pixels(grey8 ? new std::uint8_t[count] : nullptr);
  // The parts (fashion-mnist's train and t10k files) inflate at once, each into its own rows;
  // the first reports progress, the others only stop with the job.
  std::vector<std::uint64_t> offsets(parts.size(), 0);
  for (std::size_t i = 1; i < parts.size(); ++i)
    offsets[i] = offsets[i - 1] + parts[i - 1].images.count;
  auto convertPart = [&](std::size_t i, JobControl& partJob) {
    convertBody(parts[i].images, shape.d, std::int64_t(offsets[i]) / shape.d,
                values.get() + offsets[i], grey8 ? pixels.get() + offsets[i] : nullptr, partJob);
  };
  std::vector<std::unique_ptr<JobControl>> quietJobs;
  std::vector<std::future<void>> others; // wait in their destructors, before quietJobs go
  for (std::size_t i = 1; i < parts.size(); ++i) {
    quietJobs.push_back(std::make_unique<JobControl>(job, nullptr));
    others.push_back(std::async(
        std::launch::async, [&, i, quiet = quietJobs.back().get()] { convertPart(i, *quiet); }));
  }
  try {
    convertPart(0, job);
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
  ds.vectors = Matrix<float>(values.get(), shape.n, shape.d, values);
  if (grey8) {
    ds.thumbnails.height = int(first.dims[1]);
    ds.thumbnails.width = int(first.dims[2]);
    ds.thumbnails.channels = 1;
    ds.thumbnails.pixels = Matrix<std::uint8_t>(pixels.get(), shape.n, shape.d, pixels);
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

Dataset readIdxFile(const fs::path& path, const OpenOptions& options, JobControl& job) {
  std::vector<IdxPart> parts;
  parts.push_back(openPart(path, options.memoryBudget, job));
  return assemble(parts, path, options, job);
}

Dataset readIdxFolder(const fs::path& folder, const OpenOptions& options, JobControl& job) {
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
    parts.push_back(openPart(p, options.memoryBudget, job));
  return assemble(parts, folder, options, job);
}

} // namespace nearscape::io
