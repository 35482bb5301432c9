#pragma once
/// @file SweepStudy.h
/// A trade-off study: several indexes (or one index built with other parameters) swept over the
/// same held-out queries and their exact truth, with the exact search measured on those queries
/// as the reference. The GUI's trade-off studio holds one; `nearscape-cli sweep` writes one
/// (several `--build` values or `--run`s) as CSV and JSON; `nearscape --sweep-plot` draws one
/// read back from that CSV.

#include "nearscape/index/HeldOutSweep.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nearscape {

/// One index built and swept: a run of a study.
struct SweepRun {
  std::string kind;           ///< "graph" or "ivf" ("" for a run read from an older CSV)
  ParameterValues build;      ///< its build values, every one resolved
  std::string backend;        ///< where it searched ("cpu", "cuda"; "" when unknown)
  std::vector<SweepRow> rows; ///< its settings in sweep order, its own Pareto front marked
  /// "graph degree=32,build_k=32": the kind and its build values, for legends and logs.
  std::string label() const;
};

/// Several runs over one set of queries, and the exact search's reference.
struct SweepStudy {
  int k = 10;
  std::int64_t queries = 0; ///< held-out (or given) queries (0: unknown)
  std::vector<SweepRun> runs;
  /// The exact search on the same queries (measureExactSearch): recall 1, its QPS and latency.
  std::optional<SweepRow> exact;
  std::string exactBackend;
};

/// A run as a held-out sweep measured it (its kind, build values, backend and rows).
SweepRun sweepRunOf(const HeldOutSweep& sweep);

/// For each row of each run (one vector per run, in order), whether it is on the recall/QPS front
/// of every run's rows and the exact reference together (a setting slower than the exact search
/// at lower recall never is); then, when the study has the reference, a last vector of one flag:
/// whether the reference itself is on that front.
std::vector<std::vector<bool>> overallParetoFront(const SweepStudy& study);

/// The study as CSV, one row per setting, the exact reference last: `run` (1, 2, … in order; 0
/// for the exact search), `index` (the kind, or `exact`), `k`, one `build.NAME` column per build
/// parameter of any run, one column per search parameter of any run (columns sorted by name,
/// empty where a run has no such parameter), then recall, qps, p50_ms, p99_ms, build_s, bytes,
/// pareto (on its own run's front), pareto_all (on the front of every run and the reference).
std::string sweepStudyCsv(const SweepStudy& study);

/// Reads sweepStudyCsv's text back (`source` names it in errors); also a one-run CSV of
/// sweepCsv (no `run` column: one run of unknown kind). A leading UTF-8 byte-order mark (a
/// spreadsheet's export) is skipped. Throws FormatError naming the line and column: a missing
/// required column, a cell that is not a number, a row of the wrong length, a recall outside
/// [0, 1], a QPS that is not a finite number above 0, a negative or infinite latency.
SweepStudy parseSweepStudyCsv(std::string_view text, const std::string& source);

/// parseSweepStudyCsv of the file `path` (a regular file: a FIFO or a device is refused at once,
/// never waited on). Throws IoError, FormatError.
SweepStudy readSweepStudyCsv(const std::filesystem::path& path);

} // namespace nearscape
