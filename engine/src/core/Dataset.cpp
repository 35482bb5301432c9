#include "nearscape/core/Dataset.h"

#include "nearscape/core/Error.h"
#include "util/RowValues.h"

#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>

namespace nearscape {
namespace {

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

bool parseInteger(const std::string& s, long long& value) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
}

} // namespace

int Metadata::findColumn(std::string_view name) const {
  for (std::size_t c = 0; c < columnNames.size(); ++c)
    if (equalsIgnoreCase(columnNames[c], name))
      return static_cast<int>(c);
  return -1;
}

std::string Dataset::labelOf(std::int64_t item) const {
  if (item < 0 || item >= std::int64_t(labels.size()))
    return {};
  const auto label = labels[static_cast<std::size_t>(item)];
  return label >= 0 && label < std::int32_t(labelNames.size()) ? labelNames[label] : std::string();
}

std::string Dataset::imagePathOf(std::int64_t item) const {
  if (imageColumn < 0 || item < 0 || item >= metadata.rows())
    return {};
  const std::string& value =
      metadata.columns[static_cast<std::size_t>(imageColumn)][static_cast<std::size_t>(item)];
  if (value.empty())
    return {};
  const std::filesystem::path path(value);
  return (path.is_absolute() || imageFolder.empty() ? path
                                                    : std::filesystem::path(imageFolder) / path)
      .lexically_normal()
      .string();
}

std::string Dataset::textOf(std::int64_t item) const {
  if (textColumn < 0 || item < 0 || item >= metadata.rows())
    return {};
  return metadata.columns[static_cast<std::size_t>(textColumn)][static_cast<std::size_t>(item)];
}

NonFiniteScan scanNonFinite(const MatrixView<float>& m) {
  NonFiniteScan scan;
  std::int64_t count = 0;
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  double maxAbs = 0, maxSquaredNorm = 0;
  // A few rows (a click's query) are scanned by this thread alone: waking a team of threads
  // costs more than the scan.
  const bool parallel = m.rows * m.cols >= (std::int64_t(1) << 16);
  const simd::RowValuesKernel rowValues = simd::rowValuesKernel();
#pragma omp parallel for if (parallel) reduction(+ : count) reduction(min : first) \
    reduction(max : maxAbs, maxSquaredNorm) schedule(static)
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const float* x = m.row(r);
    // A row's values through simd::rowValues: its AVX2 version reads at about a core's memory
    // rate, 2.8× the baseline's loop (which was itself 2.4× the float64 loop with a branch a
    // value that took 7.7 ms of the GPU's 54 ms fashion-mnist graph on 16 cores). Float sums
    // suffice: the norm is only held against 2^120; a row beyond float's 2^128 sums to +Inf and
    // is summed again in float64 for the message.
    const simd::RowValues values = rowValues(x, m.cols);
    const std::int64_t bad = values.nonFinite;
    const float squared = values.squared, largest = values.largest;
    if (bad > 0)
      for (std::int64_t c = 0; c < m.cols; ++c)
        if (!std::isfinite(x[c])) {
          first = std::min(first, r * m.cols + c);
          break;
        }
    count += bad;
    maxAbs = std::max(maxAbs, double(largest));
    if (bad == 0) {
      double norm2 = squared;
      if (std::isinf(squared)) { // past float's range: the message names the real size
        norm2 = 0;
        for (std::int64_t c = 0; c < m.cols; ++c)
          norm2 += double(x[c]) * double(x[c]);
      }
      maxSquaredNorm = std::max(maxSquaredNorm, norm2);
    }
  }
  scan.count = count;
  scan.maxAbs = maxAbs;
  scan.maxSquaredNorm = maxSquaredNorm;
  if (count > 0) {
    scan.firstRow = first / m.cols;
    scan.firstCol = first % m.cols;
  }
  return scan;
}

void requireFinite(const MatrixView<float>& m, const std::string& what) {
  const NonFiniteScan scan = scanNonFinite(m);
  if (scan.count > 0)
    throw InvalidArgument(
        what + " holds " + std::to_string(scan.count) + " NaN/Inf value(s); the first at row " +
        std::to_string(scan.firstRow + 1) + ", column " + std::to_string(scan.firstCol + 1) +
        " (item " + std::to_string(scan.firstRow) + ")");
  char size[64];
  if (scan.maxSquaredNorm > kMaxSquaredNorm) {
    std::snprintf(size, sizeof(size), "%.3g", std::sqrt(scan.maxSquaredNorm));
    throw InvalidArgument(what + " holds vectors of norm up to " + size +
                          ": their squared distances overflow float32 (beyond ~1e36); scale the "
                          "data down");
  }
  if (scan.maxAbs > 0 && scan.maxAbs < kMinLargestValue) {
    std::snprintf(size, sizeof(size), "%.3g", scan.maxAbs);
    throw InvalidArgument(what + "'s values are all below " + size +
                          " in magnitude: float32 distances of such values lose their precision "
                          "(subnormal); scale the data up");
  }
}

std::string contentHash(const MatrixView<float>& m) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  const std::int64_t shape[2] = {m.rows, m.cols};
  XXH3_128bits_update(state, shape, sizeof(shape));
  if (m.data && m.rows > 0)
    XXH3_128bits_update(state, m.data, m.size() * sizeof(float));
  const XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  char text[33];
  std::snprintf(text, sizeof(text), "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return text;
}

std::string tsvCell(std::string text) {
  for (char& c : text)
    if (c == '\t' || c == '\n' || c == '\r')
      c = ' ';
  return text;
}

bool naturalLess(std::string_view a, std::string_view b) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      // Whole runs of digits: fewer significant digits is smaller, then digit by digit.
      std::size_t ei = i, ej = j;
      while (ei < a.size() && digit(a[ei]))
        ++ei;
      while (ej < b.size() && digit(b[ej]))
        ++ej;
      std::size_t si = i, sj = j;
      while (si + 1 < ei && a[si] == '0')
        ++si;
      while (sj + 1 < ej && b[sj] == '0')
        ++sj;
      if (ei - si != ej - sj)
        return ei - si < ej - sj;
      if (const int c = a.substr(si, ei - si).compare(b.substr(sj, ej - sj)); c != 0)
        return c < 0;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j])
      return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  if (a.size() - i != b.size() - j)
    return a.size() - i < b.size() - j;
  return a < b; // equal under the natural order ("v01" and "v1"): bytes decide, for a total order
}

void attachMetadata(Dataset& dataset, Metadata metadata, const std::string& source) {
  if (metadata.rows() != dataset.size())
    throw FormatError(source + ": metadata has " + std::to_string(metadata.rows()) +
                      " rows but the data has " + std::to_string(dataset.size()) + " items");
  int labelColumn = metadata.findColumn("label");
  if (labelColumn < 0)
    labelColumn = metadata.findColumn("class");
  if (labelColumn < 0 && metadata.columns.size() == 1)
    labelColumn = 0;

  if (labelColumn >= 0) {
    const auto& values = metadata.columns[static_cast<std::size_t>(labelColumn)];
    // Distinct values, ordered numerically when all are integers, else in natural order.
    std::vector<std::string> distinct(values.begin(), values.end());
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    bool numeric = true;
    long long scratch = 0;
    for (const auto& v : distinct)
      numeric = numeric && parseInteger(v, scratch);
    if (numeric)
      std::sort(distinct.begin(), distinct.end(), [](const std::string& a, const std::string& b) {
        return std::stoll(a) < std::stoll(b);
      });
    else
      std::stable_sort(
          distinct.begin(), distinct.end(),
          [](const std::string& a, const std::string& b) { return naturalLess(a, b); });
    // Too many distinct values is an id-like column, not a label.
    if (distinct.size() <= 1000 || metadata.columns.size() == 1) {
      std::map<std::string, std::int32_t> index;
      for (std::size_t i = 0; i < distinct.size(); ++i)
        index.emplace(distinct[i], static_cast<std::int32_t>(i));
      dataset.labels.resize(values.size());
      for (std::size_t i = 0; i < values.size(); ++i)
        dataset.labels[i] = index.at(values[i]);
      dataset.labelNames = std::move(distinct);
      dataset.labelSource =
          source + (metadata.columnNames.empty() ? std::string()
                                                 : " (" + metadata.columnNames[labelColumn] + ")");
    }
  }

  dataset.imageColumn = -1;
  for (const char* name : {"image", "image_path", "filepath", "file", "path"}) {
    if (const int c = metadata.findColumn(name); c >= 0 && c != labelColumn) {
      dataset.imageColumn = c;
      break;
    }
  }
  std::error_code error;
  const std::filesystem::path metadataFile = std::filesystem::absolute(source, error);
  dataset.imageFolder =
      (error ? std::filesystem::path(source) : metadataFile).parent_path().string();
  dataset.textColumn = -1;
  for (const char* name : {"text", "title", "name", "description", "caption"}) {
    if (const int c = metadata.findColumn(name); c >= 0 && c != labelColumn) {
      dataset.textColumn = c;
      break;
    }
  }
  if (dataset.textColumn < 0 && metadata.columns.size() == 2 && labelColumn >= 0 &&
      1 - labelColumn != dataset.imageColumn)
    dataset.textColumn = 1 - labelColumn;
  dataset.metadata = std::move(metadata);
}

} // namespace nearscape
