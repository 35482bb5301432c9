#pragma once
// Options every nearscape-cli subcommand takes, and the exit-code policy.

#include "nearscape/Nearscape.h"
#include "nearscape/io/AtomicFile.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace nearscape::cli {

/// Exit codes: 0 success, 2 bad input, 1 anything else.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;

struct CommonOptions {
  bool json = false;
  std::string backend = "auto";
  int threads = 0;
  std::uint64_t seed = 0;
  std::string memoryBudget;
  std::string devices;  ///< --devices: "all" or GPU ordinals "0,1"; empty: GPU 0
  std::string logLevel; ///< --log-level; empty: $NEARSCAPE_LOG, else warning

  /// Adds --json, --backend, --devices, --threads, --seed, --memory-budget and --log-level to
  /// `command`.
  void addTo(CLI::App& command);
  /// The engine context these options describe. Throws InvalidArgument.
  Context context() const;
};

/// The command's GPU work needs no float16 GEMM from cuBLAS: the device's warm-up, started by
/// CommonOptions::context, leaves it out (DeviceWarmUp::leaveOutFloat16Gemm). No-op without one.
void warmUpWithoutFloat16Gemm();

/// A check for a whole-number option: at least `lowest` ("--show: must be at least 0, not -1").
/// What is no number is left to the option's own conversion.
CLI::Validator atLeast(std::int64_t lowest);

/// The job of the running command; SIGINT/SIGTERM request its stop.
JobControl& commandJob();
/// The MPI job this process is a rank of (set by main from joinRanks), or null: one process.
Ranks* commandRanks();
void setCommandRanks(Ranks* ranks);
/// Installs the signal handlers that cancel commandJob().
void installCancelHandlers();

/// The metric named by --metric (l2, ip, cos), else the one `data` declares, else L2.
/// Throws InvalidArgument for an unknown name.
Metric chooseMetric(const std::string& option, const Dataset& data);

/// openDataset, then each warning (a sidecar skipped) printed to stderr.
Dataset openInput(const std::string& path, const OpenOptions& options, JobControl& job);

/// True when `path` ends in .npy, in any case (`ids.NPY` too).
bool hasNpyExtension(const std::string& path);

/// Declares a data file the command reads as an input of `outputs`: the file (or IDX folder)
/// and its metadata sidecar `<stem>.meta.tsv`, so that no output can overwrite them.
void addDataInput(OutputSet& outputs, const std::string& path);

/// Ground-truth ids from `path` (.npy, int32 or int64): `rows` × ≥ k, each id in
/// [0, baseRows), the first k columns returned as int32. Throws InvalidArgument naming the file
/// and the first bad id's row and column (counted from 1), FormatError, IoError.
Matrix<std::int32_t> readTruthIds(const std::string& path, std::int64_t rows, int k,
                                  std::int64_t baseRows);

/// The files behind the engine's words "the data" and "the queries", for messages.
struct InputNames {
  std::string data, queries;
};

/// Runs `body`, mapping engine errors to messages on stderr and to exit codes. An engine message
/// about "the data" or "the queries" is prefixed with that file's name from `inputs`.
int runGuarded(const std::function<int()>& body, const InputNames& inputs = {});

} // namespace nearscape::cli
