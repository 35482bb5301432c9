// TensorBoard-projector vectors (one item a line, values separated by tabs) and metadata.
#include "io/Readers.h"

#include "nearscape/core/Error.h"
#include "nearscape/io/DatasetReader.h"
#include "nearscape/io/MappedFile.h"

#include <charconv>

namespace nearscape::io {
namespace {

/// Splits `text` into lines without their "\n" / "\r\n"; a final empty line is dropped.
std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

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

std::string_view fileText(const MappedFile& file) {
  return {reinterpret_cast<const char*>(file.data()), file.size()};
}

} // namespace

bool isValidUtf8(std::string_view text, std::size_t* badOffset) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
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
      break;
    }
    if (i + len > n)
      break;
    bool ok = true;
    for (std::size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xc0) != 0x80) {
        ok = false;
        break;
      }
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    // Reject overlong forms, surrogates and values past U+10FFFF.
    static const std::uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (!ok || cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      break;
    i += len;
  }
  if (i < n) {
    if (badOffset)
      *badOffset = i;
    return false;
  }
  return true;
}

Dataset readTsvVectors(const std::filesystem::path& path, JobControl& job) {
  const auto file = MappedFile::open(path);
  const std::string name = path.string();
  const auto lines = splitLines(fileText(*file));
  if (lines.empty())
    throw FormatError(name + ": the file is empty");
  std::int64_t d = -1;
  std::vector<float> values;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i % 4096 == 0) {
      job.check();
      job.progress(double(i) / double(lines.size()), "reading vectors");
    }
    const auto fields = splitTabs(lines[i]);
    if (d < 0) {
      d = std::int64_t(fields.size());
      values.reserve(lines.size() * std::size_t(d));
    } else if (std::int64_t(fields.size()) != d) {
      throw FormatError(name + ": line " + std::to_string(i + 1) + " has " +
                        std::to_string(fields.size()) + " values, the first line has " +
                        std::to_string(d));
    }
    for (std::size_t j = 0; j < fields.size(); ++j) {
      std::string_view f = fields[j];
      while (!f.empty() && f.front() == ' ')
        f.remove_prefix(1);
      while (!f.empty() && f.back() == ' ')
        f.remove_suffix(1);
      float v = 0;
      auto [ptr, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
      if (ec != std::errc() || ptr != f.data() + f.size() || f.empty())
        throw FormatError(name + ": line " + std::to_string(i + 1) + ", column " +
                          std::to_string(j + 1) + ": '" + std::string(f.substr(0, 40)) +
                          "' is not a number");
      values.push_back(v);
    }
  }
  Dataset ds;
  ds.path = name;
  ds.format = "tsv";
  ds.sourceDtype = "text";
  ds.vectors = Matrix<float>(std::move(values), std::int64_t(lines.size()), d);
  return ds;
}

} // namespace nearscape::io

namespace nearscape {

Metadata readMetadataTsv(const std::filesystem::path& path, std::int64_t expectedRows) {
  const auto file = MappedFile::open(path);
  const std::string name = path.string();
  const std::string_view text = io::fileText(*file);
  std::size_t bad = 0;
  if (!io::isValidUtf8(text, &bad)) {
    std::size_t line = 1;
    for (std::size_t i = 0; i < bad; ++i)
      line += text[i] == '\n';
    throw FormatError(name + ": invalid UTF-8 at byte " + std::to_string(bad) + " (line " +
                      std::to_string(line) + ")");
  }
  const auto lines = io::splitLines(text);
  if (lines.empty())
    throw FormatError(name + ": the metadata file is empty");
  Metadata meta;
  const auto first = io::splitTabs(lines[0]);
  std::size_t firstData = 0;
  if (first.size() == 1) {
    meta.columnNames = {"label"};
  } else {
    for (auto f : first)
      meta.columnNames.emplace_back(f);
    firstData = 1;
  }
  meta.columns.resize(meta.columnNames.size());
  for (auto& c : meta.columns)
    c.reserve(lines.size());
  for (std::size_t i = firstData; i < lines.size(); ++i) {
    const auto fields = io::splitTabs(lines[i]);
    if (fields.size() != meta.columnNames.size())
      throw FormatError(name + ": line " + std::to_string(i + 1) + " has " +
                        std::to_string(fields.size()) + " columns, the header has " +
                        std::to_string(meta.columnNames.size()));
    for (std::size_t c = 0; c < fields.size(); ++c)
      meta.columns[c].emplace_back(fields[c]);
  }
  if (expectedRows >= 0 && meta.rows() != expectedRows)
    throw FormatError(name + ": metadata has " + std::to_string(meta.rows()) +
                      " rows but the data has " + std::to_string(expectedRows) + " items" +
                      (firstData ? " (the first line is a header because there are several "
                                   "columns)"
                                 : ""));
  return meta;
}

} // namespace nearscape
