#include "nearscape/io/Npy.h"

#include "io/Convert.h"
#include "nearscape/core/Error.h"
#include "nearscape/io/AtomicFile.h"
#include "nearscape/io/DatasetReader.h"
#include "nearscape/io/MappedFile.h"

#include <cctype>
#include <cstring>
#include <limits>

namespace nearscape {
namespace {

// A tiny scanner for the Python-literal dictionary of a .npy header.
class HeaderScanner {
public:
  HeaderScanner(std::string_view text, const std::string& name) : m_text(text), m_name(name) {}

  void skipSpace() {
    while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\n'))
      ++m_pos;
  }
  bool consume(char c) {
    skipSpace();
    if (m_pos < m_text.size() && m_text[m_pos] == c) {
      ++m_pos;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!consume(c))
      fail(std::string("expected '") + c + "'");
  }
  std::string quoted() {
    skipSpace();
    if (m_pos >= m_text.size() || (m_text[m_pos] != '\'' && m_text[m_pos] != '"'))
      fail("expected a quoted string");
    const char quote = m_text[m_pos++];
    const auto end = m_text.find(quote, m_pos);
    if (end == std::string_view::npos)
      fail("unterminated string");
    std::string s(m_text.substr(m_pos, end - m_pos));
    m_pos = end + 1;
    return s;
  }
  std::string word() {
    skipSpace();
    const auto start = m_pos;
    while (m_pos < m_text.size() && std::isalnum(static_cast<unsigned char>(m_text[m_pos])))
      ++m_pos;
    return std::string(m_text.substr(start, m_pos - start));
  }
  std::int64_t integer() {
    skipSpace();
    std::int64_t value = 0;
    bool any = false;
    while (m_pos < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[m_pos]))) {
      if (value > (std::numeric_limits<std::int64_t>::max() - 9) / 10)
        fail("shape value too large");
      value = value * 10 + (m_text[m_pos++] - '0');
      any = true;
    }
    if (m_pos < m_text.size() && m_text[m_pos] == 'L') // Python 2 longs
      ++m_pos;
    if (!any)
      fail("expected a non-negative integer in the shape");
    return value;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw FormatError(m_name + ": malformed .npy header: " + what);
  }

private:
  std::string_view m_text;
  const std::string& m_name;
  std::size_t m_pos = 0;
};

/// The item size a descr such as "<f4" names: 1 to 16 bytes, else 0 (unsupported). Parsed by
/// hand: atoi overflows (undefined behaviour) on a hostile "<f99999999999".
std::size_t itemSizeOf(const std::string& descr) {
  if (descr.size() < 3 || descr.size() > 4)
    return 0;
  std::size_t size = 0;
  for (std::size_t i = 2; i < descr.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(descr[i])))
      return 0;
    size = size * 10 + std::size_t(descr[i] - '0');
  }
  return size >= 1 && size <= 16 ? size : 0;
}

/// The name of a vector dtype readNpyFloat converts, or nullptr.
const char* vectorDtypeName(const std::string& descr) {
  if (descr == "<f4" || descr == "=f4")
    return "float32";
  if (descr == "<f2" || descr == "=f2")
    return "float16";
  if (descr == "<f8" || descr == "=f8")
    return "float64";
  if (descr == "|u1" || descr == "<u1")
    return "uint8";
  if (descr == "|i1" || descr == "<i1")
    return "int8";
  return nullptr;
}

void writeNpyRaw(const std::filesystem::path& path, const char* descr, const void* data,
                 std::size_t itemSize, std::int64_t rows, std::int64_t cols) {
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" +
                     std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  // Version 1.0 header: magic (6) + version (2) + length (2) + dict padded to a multiple of 64.
  std::size_t total = 10 + dict.size() + 1;
  const std::size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict.push_back('\n');
  const auto headerLen = static_cast<std::uint16_t>(dict.size());
  writeFileAtomically(path, [&](std::FILE* f) {
    const unsigned char preamble[10] = {0x93,
                                        'N',
                                        'U',
                                        'M',
                                        'P',
                                        'Y',
                                        1,
                                        0,
                                        static_cast<unsigned char>(headerLen & 0xff),
                                        static_cast<unsigned char>(headerLen >> 8)};
    std::fwrite(preamble, 1, sizeof(preamble), f);
    std::fwrite(dict.data(), 1, dict.size(), f);
    const std::size_t count = static_cast<std::size_t>(rows * cols);
    if (count > 0 && std::fwrite(data, itemSize, count, f) != count)
      throw IoError(path.string() + ": write failed");
  });
}

} // namespace

NpyHeader parseNpyHeader(const std::uint8_t* bytes, std::size_t fileSize, const std::string& name) {
  static const unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (fileSize < 10 || std::memcmp(bytes, kMagic, 6) != 0)
    throw FormatError(name + ": not a .npy file (bad magic)");
  const int major = bytes[6];
  std::size_t headerLen = 0;
  std::size_t start = 0;
  if (major == 1) {
    headerLen = bytes[8] | (std::size_t(bytes[9]) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (fileSize < 12)
      throw FormatError(name + ": truncated .npy header");
    headerLen = bytes[8] | (std::size_t(bytes[9]) << 8) | (std::size_t(bytes[10]) << 16) |
                (std::size_t(bytes[11]) << 24);
    start = 12;
  } else {
    throw FormatError(name + ": unsupported .npy version " + std::to_string(major));
  }
  if (headerLen > fileSize - start)
    throw FormatError(name + ": truncated .npy header (header length " + std::to_string(headerLen) +
                      " exceeds the file)");

  NpyHeader header;
  header.dataOffset = start + headerLen;
  HeaderScanner scan(std::string_view(reinterpret_cast<const char*>(bytes + start), headerLen),
                     name);
  bool haveDescr = false, haveOrder = false, haveShape = false;
  scan.expect('{');
  while (!scan.consume('}')) {
    const std::string key = scan.quoted();
    scan.expect(':');
    if (key == "descr") {
      header.descr = scan.quoted();
      haveDescr = true;
    } else if (key == "fortran_order") {
      const std::string v = scan.word();
      if (v != "True" && v != "False")
        scan.fail("fortran_order must be True or False");
      header.fortranOrder = v == "True";
      haveOrder = true;
    } else if (key == "shape") {
      scan.expect('(');
      while (!scan.consume(')')) {
        header.shape.push_back(scan.integer());
        if (!scan.consume(',')) {
          scan.expect(')');
          break;
        }
      }
      haveShape = true;
    } else {
      scan.fail("unexpected key '" + printableText(key, 40) + "'");
    }
    if (!scan.consume(',')) {
      scan.expect('}');
      break;
    }
  }
  if (!haveDescr || !haveOrder || !haveShape)
    scan.fail("missing descr, fortran_order or shape");
  if (header.fortranOrder)
    throw FormatError(name + ": Fortran-order .npy arrays are not supported; save with C order "
                             "(numpy.ascontiguousarray)");
  header.itemSize = itemSizeOf(header.descr);
  if (header.itemSize == 0)
    throw FormatError(name + ": unsupported dtype '" + printableText(header.descr, 40) + "'");

  std::size_t count = 1;
  for (const auto dim : header.shape)
    if (__builtin_mul_overflow(count, static_cast<std::size_t>(dim), &count))
      throw FormatError(name + ": the shape's size overflows");
  std::size_t bytesNeeded = 0;
  if (__builtin_mul_overflow(count, header.itemSize, &bytesNeeded) ||
      bytesNeeded > fileSize - header.dataOffset)
    throw FormatError(name + ": truncated: the header's shape needs " + std::to_string(count) +
                      " × " + std::to_string(header.itemSize) +
                      " bytes of data but the file holds " +
                      std::to_string(fileSize - header.dataOffset));
  return header;
}

Matrix<float> readNpyFloat(const std::filesystem::path& path, std::string* dtypeOut,
                           bool* mappedOut) {
  const auto file = MappedFile::open(path);
  const std::string name = path.string();
  const NpyHeader h = parseNpyHeader(file->data(), file->size(), name);
  if (h.shape.empty() || h.shape.size() > 2)
    throw FormatError(name + ": expected a 1-D or 2-D array, got " +
                      std::to_string(h.shape.size()) + " dimensions");
  const std::int64_t rows = h.shape[0];
  const std::int64_t cols = h.shape.size() == 2 ? h.shape[1] : 1;
  if (rows == 0 || cols == 0)
    throw FormatError(name + ": the array is empty (shape " + std::to_string(rows) + " × " +
                      std::to_string(cols) + ")");
  // The dtype first: an unsupported one is refused before anything is allocated.
  const char* dtype = vectorDtypeName(h.descr);
  if (!dtype)
    throw FormatError(name + ": unsupported dtype '" + printableText(h.descr, 40) +
                      "' for vectors (supported: float32, float16, float64, uint8, int8, "
                      "little-endian)");
  if (dtypeOut)
    *dtypeOut = dtype;
  const std::uint8_t* src = file->data() + h.dataOffset;
  const auto count = static_cast<std::size_t>(rows * cols);
  if (mappedOut)
    *mappedOut = false;
  if (std::string_view(dtype) == "float32") {
    if (reinterpret_cast<std::uintptr_t>(src) % alignof(float) == 0) {
      if (mappedOut)
        *mappedOut = true;
      return Matrix<float>(reinterpret_cast<const float*>(src), rows, cols, file);
    }
    std::vector<float> values(count);
    std::memcpy(values.data(), src, count * sizeof(float));
    file->throwIfChanged(); // the copy must be of the file, not of a rewrite's first half
    return Matrix<float>(std::move(values), rows, cols);
  }
  std::vector<float> values(count);
  const std::string_view kind = dtype;
  if (kind == "float16")
    convertHalfToFloat(src, count, values.data());
  else if (kind == "float64")
    convertFloat64Rows(
        [src](std::size_t i) {
          double v;
          std::memcpy(&v, src + i * sizeof(double), sizeof(double));
          return v;
        },
        rows, cols, values.data(), 0, name);
  else if (kind == "uint8")
    convertToFloat<std::uint8_t>(src, count, values.data());
  else
    convertToFloat<std::int8_t>(src, count, values.data());
  file->throwIfChanged();
  return Matrix<float>(std::move(values), rows, cols);
}

Matrix<std::int64_t> readNpyIds(const std::filesystem::path& path) {
  const auto file = MappedFile::open(path);
  const std::string name = path.string();
  const NpyHeader h = parseNpyHeader(file->data(), file->size(), name);
  if (h.shape.size() != 2)
    throw FormatError(name + ": expected a 2-D array of ids");
  const bool int32 = h.descr == "<i4" || h.descr == "=i4";
  if (!int32 && h.descr != "<i8" && h.descr != "=i8")
    throw FormatError(name + ": ids must be int32 or int64, got '" + printableText(h.descr, 40) +
                      "'");
  const std::int64_t rows = h.shape[0], cols = h.shape[1];
  const auto count = static_cast<std::size_t>(rows * cols);
  const std::uint8_t* src = file->data() + h.dataOffset;
  std::vector<std::int64_t> values(count);
  if (int32) { // on every core: 10M ids are a path command's first tenth of a second
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < std::int64_t(count); ++i) {
      std::int32_t v;
      std::memcpy(&v, src + 4 * i, 4);
      values[std::size_t(i)] = v;
    }
  } else if (count > 0) { // (0, k): values.data() may be null, which memcpy must never get
    std::memcpy(values.data(), src, count * 8);
  }
  file->throwIfChanged();
  return Matrix<std::int64_t>(std::move(values), rows, cols);
}

void writeNpy(const std::filesystem::path& path, const MatrixView<float>& m) {
  writeNpyRaw(path, "<f4", m.data, sizeof(float), m.rows, m.cols);
}
void writeNpy(const std::filesystem::path& path, const MatrixView<std::int32_t>& m) {
  writeNpyRaw(path, "<i4", m.data, sizeof(std::int32_t), m.rows, m.cols);
}
void writeNpy(const std::filesystem::path& path, const MatrixView<std::int64_t>& m) {
  writeNpyRaw(path, "<i8", m.data, sizeof(std::int64_t), m.rows, m.cols);
}

} // namespace nearscape
