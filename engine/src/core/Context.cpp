#include "nearscape/core/Context.h"

#include "nearscape/core/Error.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace nearscape {

std::string_view backendName(Backend backend) {
  switch (backend) {
  case Backend::Auto:
    return "auto";
  case Backend::Cpu:
    return "cpu";
  case Backend::Cuda:
    return "cuda";
  }
  return "?";
}

std::optional<Backend> parseBackend(std::string_view text) {
  if (text == "auto")
    return Backend::Auto;
  if (text == "cpu")
    return Backend::Cpu;
  if (text == "cuda" || text == "gpu")
    return Backend::Cuda;
  return std::nullopt;
}

std::uint64_t parseByteSize(std::string_view text) {
  double value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || value < 0 || !std::isfinite(value))
    throw InvalidArgument("not a size: '" + std::string(text) + "' (examples: 512M, 2G, 4096)");
  std::string_view suffix(ptr, end - ptr);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b'))
    suffix.remove_suffix(1);
  if (suffix.size() == 2 && (suffix[1] == 'i' || suffix[1] == 'I'))
    suffix.remove_suffix(1);
  double scale = 1;
  if (suffix.empty())
    scale = 1;
  else if (suffix.size() == 1) {
    switch (suffix[0]) {
    case 'k':
    case 'K':
      scale = 1024.0;
      break;
    case 'm':
    case 'M':
      scale = 1024.0 * 1024;
      break;
    case 'g':
    case 'G':
      scale = 1024.0 * 1024 * 1024;
      break;
    case 't':
    case 'T':
      scale = 1024.0 * 1024 * 1024 * 1024;
      break;
    default:
      throw InvalidArgument("unknown size suffix in '" + std::string(text) + "'");
    }
  } else
    throw InvalidArgument("unknown size suffix in '" + std::string(text) + "'");
  const double bytes = value * scale;
  if (bytes > 1.8e19)
    throw InvalidArgument("size too large: '" + std::string(text) + "'");
  return static_cast<std::uint64_t>(bytes);
}

namespace {

int hardwareThreads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

/// The stack each OpenMP thread takes: $OMP_STACKSIZE (or $GOMP_STACKSIZE) as libgomp reads it
/// (a number, kilobytes unless it ends in B, K, M or G), else the threads' default stack.
std::uint64_t openMpStackBytes() {
  for (const char* name : {"OMP_STACKSIZE", "GOMP_STACKSIZE"})
    if (const char* text = std::getenv(name); text && *text) {
      char* end = nullptr;
      const unsigned long long value = std::strtoull(text, &end, 10);
      std::uint64_t scale = 1024;
      switch (end && *end ? std::toupper(static_cast<unsigned char>(*end)) : 'K') {
      case 'B':
        scale = 1;
        break;
      case 'M':
        scale = 1024 * 1024;
        break;
      case 'G':
        scale = 1024 * 1024 * 1024;
        break;
      }
      if (value > 0)
        return std::uint64_t(value) * scale;
    }
  std::size_t bytes = 8 << 20;
  if (pthread_attr_t attr; pthread_getattr_default_np(&attr) == 0) {
    pthread_attr_getstacksize(&attr, &bytes);
    pthread_attr_destroy(&attr);
  }
  return bytes;
}

/// The process's address space in use now (/proc/self/statm); 0 when it cannot be read.
std::uint64_t mappedBytes() {
  unsigned long long pages = 0;
  if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%llu", &pages) != 1)
      pages = 0;
    std::fclose(statm);
  }
  return std::uint64_t(pages) * std::uint64_t(sysconf(_SC_PAGESIZE));
}

std::string megabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f MB", bytes / (1024.0 * 1024.0));
  return text;
}

ThreadLimit computeThreadLimit() {
  const int hardware = hardwareThreads();
  ThreadLimit limit{kThreadsPerHardwareThread * hardware,
                    std::to_string(kThreadsPerHardwareThread) +
                        " per hardware thread; this machine has " + std::to_string(hardware)};
  if (rlimit space; getrlimit(RLIMIT_AS, &space) == 0 && space.rlim_cur != RLIM_INFINITY) {
    // The stacks may take half of what the limit leaves now (the libraries' share is mapped
    // already); the other half is the data's.
    const std::uint64_t stack = std::max<std::uint64_t>(openMpStackBytes(), 64 * 1024);
    const std::uint64_t unused =
        std::uint64_t(space.rlim_cur) - std::min<std::uint64_t>(space.rlim_cur, mappedBytes());
    const std::uint64_t fit = unused / 2 / stack;
    if (fit < std::uint64_t(limit.threads)) {
      limit.threads = std::max(1, int(fit));
      limit.reason = "each thread's stack takes " + megabytes(double(stack)) +
                     ", and the address-space limit (ulimit -v) of " +
                     megabytes(double(space.rlim_cur)) + " leaves " + megabytes(double(unused));
    }
  }
  return limit;
}

} // namespace

ThreadLimit threadLimit() {
  static const ThreadLimit limit = computeThreadLimit();
  return limit;
}

int effectiveThreads(const Context& context) {
  static const int hardware = hardwareThreads();
  const int limit = threadLimit().threads;
  return std::min(context.threads > 0 ? context.threads : hardware, limit);
}

} // namespace nearscape
