#include "CommonOptions.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sched.h>
#include <thread>
#include <unistd.h>

namespace nearscape::cli {

void CommonOptions::addTo(CLI::App& command) {
  command.add_flag("--json", json, "Print one JSON object on stdout (results and timings)");
  command.add_option("--backend", backend, "auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  command.add_option("--devices", devices,
                     "GPUs to use: all, or ordinals such as 0,1 (default: GPU 0). Several split "
                     "the work: an exact graph by its row pairs (else exact kNN by query rows), "
                     "NN-Descent by shards merged pairwise, index searches by replicas");
  // Beyond the machine's limit (threadLimit) OpenMP cannot start the threads and ends the
  // program: context() refuses such a count, naming the limit.
  command
      .add_option("--threads", threads,
                  "CPU threads (0 = all; at most " + std::to_string(kThreadsPerHardwareThread) +
                      " per hardware thread, and fewer under an address-space limit)")
      ->check(CLI::Range(0, 1024));
  command.add_option("--seed", seed, "Seed for randomized steps")->capture_default_str();
  command.add_option("--memory-budget", memoryBudget,
                     "Working-memory budget, e.g. 2G (forces tiles and shards beyond it; IDX data "
                     "needing more is refused)");
  command
      .add_option("--log-level", logLevel,
                  "What the engine tells on stderr: quiet, error, warning, info (GPU fallbacks) "
                  "or debug (phase timings); default $NEARSCAPE_LOG, else warning")
      ->check(CLI::IsMember({"quiet", "error", "warning", "info", "debug"}));
}

namespace {
/// --memory-budget of the command's context, which openInput's readers are held to as well.
std::uint64_t& commandMemoryBudget() {
  static std::uint64_t budget = 0;
  return budget;
}

/// The device started while the command reads its input (DeviceWarmUp); runGuarded waits for it
/// before the command returns, so no start outlives the program's exit.
std::optional<DeviceWarmUp>& deviceWarmUp() {
  static std::optional<DeviceWarmUp> warmUp;
  return warmUp;
}
} // namespace

Context CommonOptions::context() const {
  Context c;
  c.backend = parseBackend(backend).value_or(Backend::Auto);
  c.threads = threads;
  if (const ThreadLimit limit = threadLimit(); threads > limit.threads)
    throw InvalidArgument("--threads " + std::to_string(threads) + " is more than this machine " +
                          "can run: at most " + std::to_string(limit.threads) + " (" +
                          limit.reason + ")");
  // Ranks sharing a host share its cores (4 ranks × all cores each thrash on 2 cores), and a
  // rank bound to some cores (mpirun binds each to one core by default) uses only those.
  if (const Ranks* ranks = commandRanks(); ranks && threads == 0) {
    int cores = std::max(1, int(std::thread::hardware_concurrency()) / ranks->ranksOnThisHost());
    if (cpu_set_t allowed; sched_getaffinity(0, sizeof allowed, &allowed) == 0)
      cores = std::min(cores, CPU_COUNT(&allowed));
    c.threads = std::max(1, cores);
  }
  c.seed = seed;
  if (!devices.empty() && c.backend != Backend::Cpu) {
    c.devices = parseDevices(devices); // none for "all" on a machine without a GPU
    if (!c.devices.empty())
      c.device = c.devices.front();
  }
  // Ranks sharing a host share its GPUs: the i-th rank of a host takes the i-th of --devices
  // (else of the host's GPUs), in turn; a rank alone on its host splits over all of --devices.
  if (const Ranks* ranks = commandRanks();
      ranks && ranks->ranksOnThisHost() > 1 && c.backend != Backend::Cpu) {
    // Counted, not opened: a rank makes a CUDA context on its own GPU only.
    std::vector<int> gpus = c.devices;
    for (int ordinal = 0; gpus.empty() && ordinal < deviceCount(); ++ordinal)
      gpus.push_back(ordinal);
    if (gpus.size() > 1)
      c.device = gpus[std::size_t(ranks->rankOnThisHost()) % gpus.size()];
    c.devices.clear();
  }
  if (!memoryBudget.empty())
    c.memoryBudget = parseByteSize(memoryBudget);
  commandMemoryBudget() = c.memoryBudget;
  std::string level = logLevel;
  if (const char* fromEnvironment = std::getenv("NEARSCAPE_LOG"); level.empty() && fromEnvironment)
    level = fromEnvironment;
  if (!level.empty()) {
    const auto parsed = parseLogLevel(level);
    if (!parsed)
      throw InvalidArgument("unknown log level '" + level +
                            "' (quiet, error, warning, info, debug)");
    c.logLevel = *parsed;
  }
  if (!deviceWarmUp())
    deviceWarmUp().emplace(c); // the CUDA context and cuBLAS start while the input is read
  return c;
}

void warmUpWithoutFloat16Gemm() {
  if (deviceWarmUp())
    deviceWarmUp()->leaveOutFloat16Gemm();
}

namespace {
Ranks* g_ranks = nullptr;
} // namespace

Ranks* commandRanks() {
  return g_ranks;
}

void setCommandRanks(Ranks* ranks) {
  g_ranks = ranks;
}

CLI::Validator atLeast(std::int64_t lowest) {
  return CLI::Validator(
      [lowest](std::string& text) -> std::string {
        std::int64_t value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() || value >= lowest)
          return {};
        return "must be at least " + std::to_string(lowest) + ", not " + text;
      },
      "≥ " + std::to_string(lowest));
}

JobControl& commandJob() {
  static JobControl job;
  return job;
}

namespace {
extern "C" void onSignal(int) {
  commandJob().requestStop();
}
} // namespace

void installCancelHandlers() {
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
}

Metric chooseMetric(const std::string& option, const Dataset& data) {
  if (option.empty())
    return data.metric.value_or(Metric::L2);
  const auto parsed = parseMetric(option);
  if (!parsed)
    throw InvalidArgument("unknown metric '" + option + "' (l2, ip or cos)");
  return *parsed;
}

namespace {
/// NEARSCAPE_TEST_PAUSE_AFTER_READ=1, a test hook: once an input is read, say so on stderr and
/// wait for standard input to close, so that a test can rewrite the file at a known moment.
void pauseAfterReadForTests(const std::string& path) {
  if (!std::getenv("NEARSCAPE_TEST_PAUSE_AFTER_READ"))
    return;
  std::cerr << "nearscape-cli: paused after reading " << path
            << " (NEARSCAPE_TEST_PAUSE_AFTER_READ): close standard input to go on" << std::endl;
  char buffer[256];
  for (;;) {
    const ssize_t got = ::read(STDIN_FILENO, buffer, sizeof(buffer));
    if (got <= 0 && !(got < 0 && errno == EINTR))
      break;
  }
}
} // namespace

Dataset openInput(const std::string& path, const OpenOptions& options, JobControl& job) {
  OpenOptions held = options;
  if (held.memoryBudget == 0)
    held.memoryBudget = commandMemoryBudget();
  Dataset data = openDataset(path, held, job);
  for (const std::string& warning : data.warnings)
    std::cerr << "nearscape-cli: warning: " << path << ": " << warning << '\n';
  pauseAfterReadForTests(path);
  return data;
}

bool hasNpyExtension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".npy";
}

void addDataInput(OutputSet& outputs, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  outputs.addInput(p);
  // The reader's sidecar rule: <stem>.meta.tsv beside the file (x.npy, x.fvecs.gz → x.meta.tsv).
  fs::path stem = p.stem();
  outputs.addInput(p.parent_path() / (stem.string() + ".meta.tsv"));
  outputs.addInput(p.parent_path() / (stem.stem().string() + ".meta.tsv"));
}

Matrix<std::int32_t> readTruthIds(const std::string& path, std::int64_t rows, int k,
                                  std::int64_t baseRows) {
  const Matrix<std::int64_t> ids = readNpyIds(path);
  if (ids.rows() != rows || ids.cols() < k)
    throw InvalidArgument(path + ": ground truth is " + std::to_string(ids.rows()) + " × " +
                          std::to_string(ids.cols()) + ", expected " + std::to_string(rows) +
                          " × ≥" + std::to_string(k));
  std::vector<std::int32_t> first(std::size_t(rows) * std::size_t(k));
  for (std::int64_t r = 0; r < rows; ++r)
    for (int c = 0; c < k; ++c) {
      const std::int64_t id = ids.row(r)[c];
      if (id < 0 || id >= baseRows)
        throw InvalidArgument(path + ": row " + std::to_string(r + 1) + ", column " +
                              std::to_string(c + 1) + ": id " + std::to_string(id) +
                              " is outside the base's " + std::to_string(baseRows) + " items");
      first[std::size_t(r) * std::size_t(k) + std::size_t(c)] = std::int32_t(id);
    }
  return Matrix<std::int32_t>(std::move(first), rows, k);
}

namespace {
/// "the data holds …" → "x.npy: the data holds …" (the engine sees views, not files).
std::string withFileName(const std::string& message, const InputNames& inputs) {
  auto starts = [&](const char* phrase) { return message.rfind(phrase, 0) == 0; };
  if (!inputs.data.empty() && starts("the data"))
    return inputs.data + ": " + message;
  if (!inputs.queries.empty() && starts("the queries"))
    return inputs.queries + ": " + message;
  return message;
}
} // namespace

int runGuarded(const std::function<int()>& body, const InputNames& inputs) {
  struct WaitForDevice {
    ~WaitForDevice() { deviceWarmUp().reset(); }
  } waitForDevice;
  // Under mpirun every rank prints its own error: say which rank it is.
  auto errorTag = [] {
    const Ranks* ranks = commandRanks();
    return ranks ? "nearscape-cli (rank " + std::to_string(ranks->rank()) + " of " +
                       std::to_string(ranks->size()) + "): "
                 : std::string("nearscape-cli: ");
  };
  // One write a line: the ranks' lines reach mpirun's terminal whole, not interleaved.
  auto say = [&](const std::string& text) { std::cerr << errorTag() + text + '\n' << std::flush; };
  try {
    try {
      const int code = body();
      throwIfInputsChanged(); // a result read from a file that changed under it is no result
      return code;
    } catch (...) { // and what such a file made fail (a header of zeros) is that change
      throwIfInputsChanged();
      throw;
    }
  } catch (const InputChanged& e) { // not bad input: the finished file may well be fine
    say(e.what());
    return kExitFailure;
  } catch (const Cancelled&) {
    say("cancelled; no output was written");
    return kExitFailure;
  } catch (const WriteError& e) { // disk full, read-only folder: the machine, not the input
    say(e.what());
    return kExitFailure;
  } catch (const Unsupported& e) { // --backend cuda with what only the CPU path takes
    say(std::string("bad input: ") + e.what() + "; --backend auto runs it on the CPU");
    return kExitBadInput;
  } catch (const DeviceUnavailable& e) {
    say(e.what());
    return kExitFailure;
  } catch (const FormatError& e) {
    say(std::string("bad input: ") + e.what());
    return kExitBadInput;
  } catch (const InvalidArgument& e) {
    say(std::string("bad input: ") + withFileName(e.what(), inputs));
    return kExitBadInput;
  } catch (const IoError& e) {
    say(e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    say(std::string("error: ") + e.what());
    return kExitFailure;
  }
}

} // namespace nearscape::cli
