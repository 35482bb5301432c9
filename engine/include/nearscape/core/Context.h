#pragma once
/// @file Context.h
/// The explicit execution context passed to engine calls: backend, threads, memory budget, seed.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace nearscape {

enum class Backend { Auto, Cpu, Cuda };

std::string_view backendName(Backend backend);
/// "auto", "cpu" or "cuda"; nullopt otherwise.
std::optional<Backend> parseBackend(std::string_view text);

/// How much the engine tells about its work (core/Log.h): each level includes those before it.
enum class LogLevel { Quiet, Error, Warning, Info, Debug };

/// Where log lines go: the level and the message (no trailing newline).
using LogSink = std::function<void(LogLevel level, std::string_view message)>;

/// What the engine may use. No globals: every long call takes one of these.
struct Context {
  Backend backend = Backend::Auto; ///< Auto takes CUDA when a usable device exists
  int threads = 0;                 ///< CPU threads; 0 = all hardware threads
  /// Bytes for working buffers; 0 = decide from the machine. With several `devices`, each GPU's
  /// share of the work (and the host buffers it fills) is held to it.
  std::uint64_t memoryBudget = 0;
  std::uint64_t seed = 0; ///< seed for every randomized step
  int device = 0;         ///< CUDA device ordinal
  /// Several GPUs of one host that work is split across (gpu/MultiDevice.h): the exact kNN by
  /// query rows, NN-Descent by shards, index searches by replicas. Fewer than two: `device` alone.
  std::vector<int> devices;
  LogLevel logLevel = LogLevel::Warning; ///< messages up to this level are written
  /// Empty: "nearscape: LEVEL: message" lines on stderr. Called from the engine's threads (several
  /// GPUs' at once), so it must be thread-safe.
  LogSink logSink;
};

/// Parses sizes such as "512M", "2G", "1.5G", "4096" (bytes). Throws InvalidArgument.
std::uint64_t parseByteSize(std::string_view text);

/// The number of CPU threads a context asks for (never less than 1), held to threadLimit().
int effectiveThreads(const Context& context);

/// The most CPU threads a context may ask for on this machine, and why no more.
struct ThreadLimit {
  int threads = 1;
  /// What sets it: "4 per hardware thread; this machine has 2" or the address-space limit.
  std::string reason;
};

/// kThreadsPerHardwareThread × the machine's hardware threads, and no more thread stacks than
/// half of what the address-space limit (ulimit -v) leaves at the first call: beyond it OpenMP
/// cannot start its threads and ends the program ("Thread creation failed"). Read once, at the
/// first call. Never throws.
ThreadLimit threadLimit();

/// More threads than this per hardware thread only add switching and memory.
inline constexpr int kThreadsPerHardwareThread = 4;

/// What the engine found about CUDA devices.
struct DeviceInfo {
  bool compiledWithCuda = false; ///< built with the CUDA backend
  bool usable = false;           ///< a device answered without error
  std::string name;              ///< the device's name when usable
  std::uint64_t totalMemory = 0; ///< bytes
  std::uint64_t freeMemory = 0;  ///< bytes
  int computeCapability = 0;     ///< e.g. 90
  std::string reason;            ///< why no GPU is used, when !usable
};

/// Queries device `ordinal`. Never throws: any CUDA error means "no GPU" with the reason.
DeviceInfo queryDevice(int ordinal = 0);

/// The backend `context` resolves to (Auto → Cuda when queryDevice says usable).
/// Throws DeviceUnavailable when Cuda is asked for explicitly and is not usable.
Backend resolveBackend(const Context& context);

/// How many CUDA devices the driver shows (0 without the CUDA plugin or a driver). Makes no
/// CUDA context on any of them. Never throws.
int deviceCount();

/// The GPUs `text` names, for `Context::devices`: "all" (every usable GPU; none on a machine
/// without one) or ordinals such as "0,1". Throws InvalidArgument (not such a list, an ordinal
/// repeated, or one with no usable GPU behind it, saying why).
std::vector<int> parseDevices(std::string_view text);

/// Starts the GPU that `context` resolves to on a background thread — the CUDA plugin loaded, the
/// device initialised, a cuBLAS handle made and pooled — so that a program's first GPU call does
/// not wait for that (0.3–0.5 s on an H100 host) while it reads its input. Does nothing for the
/// CPU backend; errors are left for the work that follows to report. The destructor waits for
/// the start to end: keep the object while the work runs and let it go before the program exits.
class DeviceWarmUp {
public:
  explicit DeviceWarmUp(const Context& context);
  ~DeviceWarmUp();
  DeviceWarmUp(const DeviceWarmUp&) = delete;
  DeviceWarmUp& operator=(const DeviceWarmUp&) = delete;

  /// The work needs no float16 GEMM through cuBLAS (a search the fused kernel takes:
  /// gpuSearchIsFused): the warm-up leaves out its last step, the float16 GEMM, unless it has
  /// begun it, and the program's end does not wait for it (a cold CLI search of manifold 1M
  /// waited 37–110 ms at its end on an H100 host). Told once the data's shape is known.
  void leaveOutFloat16Gemm() { m_float16Gemm->store(false); }

private:
  Context m_context; ///< its log level: the destructor's wait is a debug lap
  std::shared_ptr<std::atomic<bool>> m_float16Gemm = std::make_shared<std::atomic<bool>>(true);
  std::thread m_thread;
};

/// "CPU (2 threads)" or the GPU's name, for status bars and JSON.
std::string describeBackend(const Context& context);

} // namespace nearscape
