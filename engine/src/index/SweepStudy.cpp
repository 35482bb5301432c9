#include "nearscape/index/SweepStudy.h"

#include "nearscape/core/Error.h"
#include "nearscape/io/MappedFile.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

namespace nearscape {
namespace {

constexpr std::string_view kBuildPrefix = "build.";

/// The columns every row has after its parameters, in order.
const std::vector<std::string>& measureColumns() {
  static const std::vector<std::string> columns = {"recall",  "qps",   "p50_ms", "p99_ms",
                                                   "build_s", "bytes", "pareto", "pareto_all"};
  return columns;
}

std::vector<std::string_view> splitCells(std::string_view line) {
  std::vector<std::string_view> cells;
  for (std::size_t start = 0;;) {
    const std::size_t comma = line.find(',', start);
    cells.push_back(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos)
      return cells;
    start = comma + 1;
  }
}

} // namespace

std::string SweepRun::label() const {
  const std::string values = formatParameters(build);
  const std::string name = kind.empty() ? std::string("run") : kind;
  return values.empty() ? name : name + ' ' + values;
}

SweepRun sweepRunOf(const HeldOutSweep& sweep) {
  SweepRun run;
  run.kind = std::string(sweep.index->kind());
  run.build = sweep.index->buildValues();
  run.backend = std::string(backendName(sweep.index->backend()));
  run.rows = sweep.rows;
  return run;
}

namespace {

/// The front of every run's rows (in order) and the exact reference (last, when there is one).
std::vector<bool> flatFront(const SweepStudy& study) {
  std::vector<SweepRow> all;
  for (const SweepRun& run : study.runs)
    all.insert(all.end(), run.rows.begin(), run.rows.end());
  if (study.exact)
    all.push_back(*study.exact);
  return paretoFront(all);
}

} // namespace

std::vector<std::vector<bool>> overallParetoFront(const SweepStudy& study) {
  const std::vector<bool> front = flatFront(study);
  std::vector<std::vector<bool>> out;
  std::size_t at = 0;
  for (const SweepRun& run : study.runs) {
    out.emplace_back(front.begin() + std::ptrdiff_t(at),
                     front.begin() + std::ptrdiff_t(at + run.rows.size()));
    at += run.rows.size();
  }
  if (study.exact)
    out.push_back({front.back()});
  return out;
}

std::string sweepStudyCsv(const SweepStudy& study) {
  std::set<std::string> buildNames, searchNames;
  for (const SweepRun& run : study.runs) {
    for (const auto& [name, value] : run.build)
      buildNames.insert(name);
    for (const SweepRow& row : run.rows)
      for (const auto& [name, value] : row.params)
        searchNames.insert(name);
  }
  std::ostringstream out;
  out.precision(10);
  out << "run,index,k";
  for (const std::string& name : buildNames)
    out << ',' << kBuildPrefix << name;
  for (const std::string& name : searchNames)
    out << ',' << name;
  for (const std::string& name : measureColumns())
    out << ',' << name;
  out << '\n';
  const std::vector<std::vector<bool>> front = overallParetoFront(study);
  const bool exactOnFront = study.exact && front.back().front();
  auto writeRow = [&](std::size_t run, std::string_view kind, const ParameterValues& build,
                      const SweepRow& row, bool onAll) {
    out << run << ',' << kind << ',' << study.k;
    for (const std::string& name : buildNames) {
      out << ',';
      if (const auto it = build.find(name); it != build.end())
        out << it->second;
    }
    for (const std::string& name : searchNames) {
      out << ',';
      if (const auto it = row.params.find(name); it != row.params.end())
        out << it->second;
    }
    out << ',' << row.recall << ',' << row.qps << ',' << row.p50Ms << ',' << row.p99Ms << ','
        << row.buildSeconds << ',' << row.bytes << ',' << (row.pareto ? 1 : 0) << ','
        << (onAll ? 1 : 0) << '\n';
  };
  for (std::size_t r = 0; r < study.runs.size(); ++r) {
    const SweepRun& run = study.runs[r];
    for (std::size_t i = 0; i < run.rows.size(); ++i)
      writeRow(r + 1, run.kind, run.build, run.rows[i], front[r][i]);
  }
  if (study.exact)
    writeRow(0, "exact", {}, *study.exact, exactOnFront);
  return out.str();
}

SweepStudy parseSweepStudyCsv(std::string_view text, const std::string& source) {
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (text.substr(0, kByteOrderMark.size()) == kByteOrderMark)
    text.remove_prefix(kByteOrderMark.size());
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  while (!lines.empty() && lines.back().empty())
    lines.pop_back();
  if (lines.empty())
    throw FormatError(source + ": empty; expected a sweep's CSV (a header line, then rows)");
  const std::vector<std::string_view> header = splitCells(lines[0]);
  std::map<std::string, std::size_t, std::less<>> column;
  for (std::size_t c = 0; c < header.size(); ++c) {
    if (header[c].empty() || !column.emplace(std::string(header[c]), c).second)
      throw FormatError(source + ": line 1: column " + std::to_string(c + 1) +
                        (header[c].empty() ? " has no name" : " repeats a name"));
  }
  const std::vector<std::string> required = {"recall",  "qps",   "p50_ms", "p99_ms",
                                             "build_s", "bytes", "pareto"};
  for (const std::string& name : required)
    if (!column.count(name))
      throw FormatError(source + ": line 1: no '" + name +
                        "' column; expected the CSV of nearscape-cli sweep --out");
  const std::set<std::string, std::less<>> known = {"run",   "index",  "k",         "recall",
                                                    "qps",   "p50_ms", "p99_ms",    "build_s",
                                                    "bytes", "pareto", "pareto_all"};

  SweepStudy study;
  std::map<long long, std::size_t> runAt; // run number → index in study.runs
  for (std::size_t l = 1; l < lines.size(); ++l) {
    const std::string where = source + ": line " + std::to_string(l + 1);
    const std::vector<std::string_view> cells = splitCells(lines[l]);
    if (cells.size() != header.size())
      throw FormatError(where + ": " + std::to_string(cells.size()) + " cells, the header has " +
                        std::to_string(header.size()));
    auto number = [&](std::size_t c) {
      const std::string_view cell = cells[c];
      double value = 0;
      const auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
      if (cell.empty() || error != std::errc() || end != cell.data() + cell.size())
        throw FormatError(where + ", column '" + std::string(header[c]) + "': '" +
                          std::string(cell) + "' is not a number");
      return value;
    };
    auto at = [&](const char* name) { return column.find(name)->second; };
    SweepRow row;
    ParameterValues build;
    for (std::size_t c = 0; c < header.size(); ++c) {
      if (known.count(header[c]) || cells[c].empty())
        continue;
      if (header[c].substr(0, kBuildPrefix.size()) == kBuildPrefix)
        build[std::string(header[c].substr(kBuildPrefix.size()))] = number(c);
      else
        row.params[std::string(header[c])] = number(c);
    }
    row.recall = number(at("recall"));
    row.qps = number(at("qps"));
    row.p50Ms = number(at("p50_ms"));
    row.p99Ms = number(at("p99_ms"));
    row.buildSeconds = number(at("build_s"));
    const double bytes = number(at("bytes"));
    if (bytes < 0 || bytes > 1e18)
      throw FormatError(where + ", column 'bytes': out of range");
    row.bytes = std::uint64_t(bytes);
    row.pareto = number(at("pareto")) != 0;
    if (!(row.recall >= 0 && row.recall <= 1))
      throw FormatError(where + ", column 'recall': " + std::string(cells[at("recall")]) +
                        " does not lie in [0, 1]");
    // The chart's QPS axis is logarithmic: 0 or infinity would leave nothing to draw.
    if (!(row.qps > 0 && std::isfinite(row.qps)))
      throw FormatError(where + ", column 'qps': " + std::string(cells[at("qps")]) +
                        " is not a number of queries per second (finite, above 0)");
    for (const char* name : {"p50_ms", "p99_ms", "build_s"}) {
      const double value = number(at(name));
      if (!(value >= 0 && std::isfinite(value)))
        throw FormatError(where + ", column '" + name + "': " + std::string(cells[at(name)]) +
                          " is not a finite time ≥ 0");
    }
    if (column.count("k")) {
      const double k = number(at("k"));
      if (!(k >= 1 && k <= 1e6))
        throw FormatError(where + ", column 'k': out of range");
      study.k = int(k);
    }
    const double runNumber = column.count("run") ? number(at("run")) : 1;
    const std::string kind = column.count("index") ? std::string(cells[at("index")]) : "";
    if (!(runNumber >= 0 && runNumber <= 1e6) || runNumber != double((long long)runNumber))
      throw FormatError(where + ", column 'run': not a run number");
    if (runNumber == 0 || kind == "exact") {
      if (study.exact)
        throw FormatError(where + ": a second exact-search row");
      study.exact = row;
      continue;
    }
    const auto [it, added] = runAt.emplace((long long)runNumber, study.runs.size());
    if (added) {
      SweepRun run;
      run.kind = kind;
      run.build = build;
      study.runs.push_back(run);
    } else if (study.runs[it->second].kind != kind) {
      throw FormatError(where + ": run " + std::to_string((long long)runNumber) +
                        " changes its index from '" + study.runs[it->second].kind + "' to '" +
                        kind + "'");
    }
    study.runs[it->second].rows.push_back(std::move(row));
  }
  return study;
}

SweepStudy readSweepStudyCsv(const std::filesystem::path& path) {
  std::uint64_t size = 0;
  const int fd = openRegularFile(path, &size);
  std::string text;
  try {
    if (size > (std::uint64_t(1) << 30))
      throw FormatError(path.string() + ": larger than 1 GB: not a study's CSV");
    text.resize(std::size_t(size));
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        throw IoError(path.string() + ": cannot read: " + std::strerror(errno));
      if (n == 0)
        break; // cut short while being read: what is there is parsed
      got += std::size_t(n);
    }
    text.resize(got);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return parseSweepStudyCsv(text, path.string());
}

} // namespace nearscape
