// TensorBoard-projector vectors (one item a line, values separated by tabs) and metadata.
#include "io/Convert.h"
#include "io/Readers.h"

#include "nearscape/core/Error.h"
#include "nearscape/io/DatasetReader.h"
#include "nearscape/io/MappedFile.h"

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace nearscape::io {
namespace {

/// Walks the lines of `text` without their "\n" / "\r\n", without holding them all: a file of
/// newlines must not cost 16 bytes of memory per byte. A final empty line is dropped; a leading
/// UTF-8 byte-order mark (written by some Windows tools) is skipped.
class Lines {
public:
  explicit Lines(std::string_view text) : m_text(text) {
    if (m_text.substr(0, 3) == "\xEF\xBB\xBF")
      m_text.remove_prefix(3);
  }
  bool next(std::string_view& line) {
    if (m_pos >= m_text.size())
      return false;
    std::size_t end = m_text.find('\n', m_pos);
    if (end == std::string_view::npos)
      end = m_text.size();
    line = m_text.substr(m_pos, end - m_pos);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    m_pos = end + 1;
    ++m_number;
    return true;
  }
  std::size_t number() const { return m_number; } ///< of the last line returned, from 1
  double fraction() const { return m_text.empty() ? 1.0 : double(m_pos) / double(m_text.size()); }
  std::size_t count() const { // lines left from the current position, for sizing
    if (m_pos >= m_text.size())
      return 0;
    std::size_t n = 0;
    for (std::size_t i = m_pos; i < m_text.size(); ++i)
      n += m_text[i] == '\n';
    return n + (!m_text.empty() && m_text.back() != '\n' ? 1 : 0);
  }
  std::string_view text() const { return m_text; }

private:
  std::string_view m_text;
  std::size_t m_pos = 0;
  std::size_t m_number = 0;
};

std::vector<std::string_view> splitTabs(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t tab = line.find('\t', start);
    if (tab == std::string_view::npos) {
      fields.push_back(line.substr(start));
      return fields;
    }
    fields.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
}

std::size_t countTabs(std::string_view line) {
  return std::size_t(std::count(line.begin(), line.end(), '\t'));
}

std::string_view fileText(const MappedFile& file) {
  return {reinterpret_cast<const char*>(file.data()), file.size()};
}

std::string_view trimSpaces(std::string_view f) {
  while (!f.empty() && f.front() == ' ')
    f.remove_prefix(1);
  while (!f.empty() && f.back() == ' ')
    f.remove_suffix(1);
  return f;
}

/// Parses one TSV value as float: what std::from_chars takes, plus a leading '+' (as strtof and
/// Python write it); `magnitude` is the written value's, before float32 rounds it (a value too
/// close to zero is kept, subnormal or 0: its row decides, float64RangeOf). Returns "" or why the
/// value is refused.
std::string parseValue(std::string_view field, float& value, double& magnitude) {
  std::string_view f = trimSpaces(field);
  if (f.size() > 1 && f.front() == '+' && f[1] != '-' && f[1] != '+')
    f.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(f.data(), f.data() + f.size(), value);
  if (ptr != f.data() + f.size() || f.empty() || ec == std::errc::invalid_argument)
    return "is not a number";
  magnitude = std::fabs(value);
  if (ec == std::errc::result_out_of_range) {
    const std::string text(f);
    const double wide = std::strtod(text.c_str(), nullptr); // ±HUGE_VAL on overflow
    if (std::fabs(wide) > 1)
      return "is out of float range (beyond float32's ±3.4e38)";
    value = std::strtof(text.c_str(), nullptr);
    magnitude = std::fabs(wide) > 0 ? std::fabs(wide) : DBL_MIN; // below DBL_MIN: still not 0
  }
  if (!std::isfinite(magnitude))
    magnitude = 0; // NaN and ±Inf are requireFinite's to name
  return {};
}

} // namespace

namespace {

/// The length of the valid UTF-8 sequence at `text[i]` (1 for ASCII) and its code point, or 0
/// for an invalid one (overlong forms, surrogates and values past U+10FFFF included).
std::size_t decodeUtf8(std::string_view text, std::size_t i, std::uint32_t& cp) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char c = s[i];
  std::size_t len = 0;
  if (c < 0x80) {
    cp = c;
    return 1;
  } else if ((c & 0xe0) == 0xc0) {
    len = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > text.size())
    return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((s[i + k] & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (s[i + k] & 0x3f);
  }
  static const std::uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return len;
}

/// Code points a terminal shows as nothing, or that reorder or hide what follows.
bool isInvisible(std::uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0xad || cp == 0x061c ||
         (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
         (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb);
}

std::string escapeCodePoint(std::uint32_t cp) {
  char buffer[16];
  if (cp == '\t')
    return "\\t";
  if (cp == '\n')
    return "\\n";
  if (cp == '\r')
    return "\\r";
  if (cp < 0x80)
    std::snprintf(buffer, sizeof(buffer), "\\x%02x", unsigned(cp));
  else
    std::snprintf(buffer, sizeof(buffer), "\\u{%04x}", unsigned(cp));
  return buffer;
}

} // namespace

bool isValidUtf8(std::string_view text, std::size_t* badOffset) {
  std::size_t i = 0;
  std::uint32_t cp = 0;
  while (i < text.size()) {
    const std::size_t len = decodeUtf8(text, i, cp);
    if (len == 0) {
      if (badOffset)
        *badOffset = i;
      return false;
    }
    i += len;
  }
  return true;
}

Dataset readTsvVectors(const std::filesystem::path& path, JobControl& job) {
  const auto file = MappedFile::open(path);
  const std::string name = path.string();
  Lines lines(fileText(*file));
  std::int64_t d = -1, n = 0;
  std::vector<float> values;
  std::string_view line;
  while (lines.next(line)) {
    if (lines.number() % 4096 == 1) {
      job.check();
      job.progress(lines.fraction(), "reading vectors");
    }
    const auto fields = splitTabs(line);
    if (d < 0) {
      d = std::int64_t(fields.size());
      // Each value takes at least two bytes (a digit and a separator): never reserve beyond that.
      const std::size_t bound = lines.text().size() / 2 + 1;
      const std::size_t rows = lines.count() + 1;
      values.reserve(rows > bound / std::size_t(d) ? bound : rows * std::size_t(d));
    } else if (std::int64_t(fields.size()) != d) {
      throw FormatError(name + ": line " + std::to_string(lines.number()) + " has " +
                        std::to_string(fields.size()) + " values, the first line has " +
                        std::to_string(d));
    }
    double largest = 0; // of the row, as written
    for (std::size_t j = 0; j < fields.size(); ++j) {
      float v = 0;
      double magnitude = 0;
      const std::string problem = parseValue(fields[j], v, magnitude);
      if (!problem.empty())
        throw FormatError(name + ": line " + std::to_string(lines.number()) + ", column " +
                          std::to_string(j + 1) + ": '" + printableText(trimSpaces(fields[j]), 40) +
                          "' " + problem);
      values.push_back(v);
      largest = std::max(largest, magnitude);
    }
    if (float64RangeOf(largest) == Float64Range::Below)
      throw FormatError(name + ": line " + std::to_string(lines.number()) +
                        ": every value is too close to zero for float32 (below its smallest "
                        "normal value, 1.18e-38, in magnitude): converted, the row would lose "
                        "its direction; scale the data up");
    ++n;
  }
  file->throwIfChanged();
  if (n == 0)
    throw FormatError(name + ": the file is empty");
  Dataset ds;
  ds.path = name;
  ds.format = "tsv";
  ds.sourceDtype = "text";
  ds.vectors = Matrix<float>(std::move(values), n, d);
  return ds;
}

} // namespace nearscape::io

namespace nearscape {

std::string printableText(std::string_view text, std::size_t maxBytes) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (out.size() >= maxBytes) {
      out += "…";
      break;
    }
    std::uint32_t cp = 0;
    const std::size_t len = io::decodeUtf8(text, i, cp);
    if (len == 0) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\x%02x",
                    unsigned(static_cast<unsigned char>(text[i])));
      out += buffer;
      ++i;
      continue;
    }
    if (io::isInvisible(cp))
      out += io::escapeCodePoint(cp);
    else
      out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

namespace {

void throwInvalidUtf8(const std::string& name, std::string_view text, std::size_t bad) {
  const std::size_t line = 1 + std::size_t(std::count(text.begin(), text.begin() + bad, '\n'));
  throw FormatError(name + ": invalid UTF-8 at byte " + std::to_string(bad + 1) + " (line " +
                    std::to_string(line) + ")");
}

/// Refuses a line with more columns or a longer field than the documented limits.
void checkMetadataLine(const std::string& name, std::string_view line, std::size_t number) {
  if (io::countTabs(line) + 1 > kMaxMetadataColumns)
    throw FormatError(name + ": line " + std::to_string(number) + " has " +
                      std::to_string(io::countTabs(line) + 1) +
                      " columns; metadata may have at most " + std::to_string(kMaxMetadataColumns));
  std::size_t start = 0;
  while (start <= line.size()) {
    std::size_t end = line.find('\t', start);
    if (end == std::string_view::npos)
      end = line.size();
    if (end - start > kMaxMetadataFieldBytes)
      throw FormatError(name + ": line " + std::to_string(number) + " has a field of " +
                        io::describeBytes(end - start) + "; metadata fields may be at most " +
                        io::describeBytes(kMaxMetadataFieldBytes));
    start = end + 1;
  }
}

} // namespace

Metadata readMetadataTsv(const std::filesystem::path& path, std::int64_t expectedRows) {
  const auto file = MappedFile::open(path);
  const std::string name = path.string();
  const std::string_view text = io::fileText(*file);
  std::size_t bad = 0;
  if (!io::isValidUtf8(text, &bad))
    throwInvalidUtf8(name, text, bad);
  io::Lines lines(text);
  std::string_view line;
  if (!lines.next(line))
    throw FormatError(name + ": the metadata file is empty");
  checkMetadataLine(name, line, 1);
  Metadata meta;
  const auto first = io::splitTabs(line);
  const bool header = first.size() > 1;
  const std::size_t rows = lines.count() + (header ? 0 : 1);
  // Compared before any cell is stored: a wrong file costs nothing.
  if (expectedRows >= 0 && std::int64_t(rows) != expectedRows)
    throw FormatError(name + ": metadata has " + std::to_string(rows) + " rows but the data has " +
                      std::to_string(expectedRows) + " items" +
                      (header ? " (the first line is a header because there are several columns)"
                       : std::int64_t(rows) == expectedRows + 1
                           ? " (a file of one column has no header row, so its first line, '" +
                                 printableText(io::trimSpaces(first[0]), 40) +
                                 "', is an item's value; if it is a header, remove it)"
                           : ""));
  if (header)
    meta.columnNames.assign(first.begin(), first.end());
  else
    meta.columnNames = {"label"};
  // Every cell is a std::string (32 bytes) for as little as one byte (a tab) on disk.
  io::requireFitsInMemory(io::checkedProduct(rows, meta.columnNames.size() * sizeof(std::string),
                                             name, "the metadata's size"),
                          name, "the metadata");
  meta.columns.resize(meta.columnNames.size());
  for (auto& c : meta.columns)
    c.reserve(rows);
  if (!header)
    meta.columns[0].emplace_back(first[0]);
  while (lines.next(line)) {
    checkMetadataLine(name, line, lines.number());
    const auto fields = io::splitTabs(line);
    if (fields.size() != meta.columnNames.size())
      throw FormatError(name + ": line " + std::to_string(lines.number()) + " has " +
                        std::to_string(fields.size()) + " columns, the header has " +
                        std::to_string(meta.columnNames.size()));
    for (std::size_t c = 0; c < fields.size(); ++c)
      meta.columns[c].emplace_back(fields[c]);
  }
  file->throwIfChanged();
  return meta;
}

} // namespace nearscape

namespace nearscape {
namespace {

std::string_view trimmedBlanks(std::string_view text) {
  const std::size_t a = text.find_first_not_of(" \t");
  if (a == std::string_view::npos)
    return {};
  return text.substr(a, text.find_last_not_of(" \t") - a + 1);
}

/// As colouring reads a number (ItemSearch's readColumn): an optional '+', then a finite value.
bool isNumberText(std::string_view text) {
  if (!text.empty() && text.front() == '+')
    text.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(value);
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

} // namespace

std::string oneColumnHeaderHint(const Metadata& metadata, const std::string& source) {
  if (metadata.columns.size() != 1 || metadata.rows() < 2)
    return {};
  const std::vector<std::string>& values = metadata.columns[0];
  const std::string_view first = trimmedBlanks(values[0]);
  if (first.empty())
    return {};
  // The names the explorer gives a meaning (label, text, images) and a few common others.
  static constexpr std::string_view kColumnNames[] = {
      "label", "labels",      "class",   "category", "text",       "title",    "name",
      "names", "description", "caption", "image",    "image_path", "filepath", "file",
      "path",  "filename",    "id",      "tag",      "word",       "token",    "target"};
  bool looksLikeHeader = false;
  if (std::any_of(std::begin(kColumnNames), std::end(kColumnNames),
                  [&](std::string_view name) { return equalsIgnoreCase(first, name); })) {
    // A word that is also another item's value is a category, not a header.
    looksLikeHeader = std::find(values.begin() + 1, values.end(), values[0]) == values.end();
  } else if (!isNumberText(first)) {
    // A word above numbers: every other non-empty value is one.
    bool anyNumber = false, allNumbers = true;
    for (std::size_t i = 1; i < values.size() && allNumbers; ++i) {
      const std::string_view v = trimmedBlanks(values[i]);
      if (v.empty())
        continue;
      allNumbers = isNumberText(v);
      anyNumber = true;
    }
    looksLikeHeader = anyNumber && allNumbers;
  }
  if (!looksLikeHeader)
    return {};
  return source + ": the first line, '" + printableText(first, 40) +
         "', looks like a header but was read as item 0's value (a metadata file of one column "
         "has no header row, as in TensorBoard). To make it a header, add a second column (with "
         "several columns the first line is the header); else remove the line. Either way the "
         "file must hold one value per item.";
}

void attachMetadataFile(Dataset& dataset, const std::filesystem::path& path) {
  Metadata metadata = readMetadataTsv(path, dataset.size());
  std::string hint = oneColumnHeaderHint(metadata, path.string());
  attachMetadata(dataset, std::move(metadata), path.string());
  if (!hint.empty())
    dataset.warnings.push_back(std::move(hint));
}

} // namespace nearscape
