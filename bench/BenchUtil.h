#pragma once
// Helpers of nearscape-bench: timing, medians, peers run as subprocesses, tables.

#include "nearscape/Nearscape.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace nearscape::bench {

double secondsSince(std::chrono::steady_clock::time_point start);
double median(std::vector<double> values);

/// The log level NEARSCAPE_LOG names ("debug": the engine's phases), when it is set and valid.
void logLevelFromEnvironment(Context& context);

/// Runs `command` through the shell; returns the last line of its stdout parsed as JSON, or
/// throws Error with its output when it fails.
nlohmann::json runPeer(const std::string& command);

/// A float32 .npy copy of `m` in a temporary folder (peers read .npy); removed by the caller.
std::string writeTemporaryNpy(const MatrixView<float>& m, const std::string& name);

/// Writes `j` (indented, a final newline) to `path` as every output of the project is written:
/// atomically, the old file kept on failure, never over one of `inputs` (the data and queries the
/// benchmark read). Throws InvalidArgument, IoError, WriteError.
void writeJsonOutput(const std::string& path, const nlohmann::json& j,
                     const std::vector<std::string>& inputs);

/// One row of the printed table.
struct Row {
  std::string work;
  double ours = 0;
  std::string peer;
  double theirs = 0; ///< 0 when no peer ran
  std::string note;
};
void printTable(const std::string& title, const std::vector<Row>& rows);

} // namespace nearscape::bench
