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

} // namespace nearscape
