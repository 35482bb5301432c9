// The levelled log (nearscape/core/Log.h).
#include "nearscape/core/Log.h"

#include <array>
#include <cstdio>

namespace nearscape {
namespace {
constexpr std::array<std::string_view, 5> kNames = {"quiet", "error", "warning", "info", "debug"};
}

std::string_view logLevelName(LogLevel level) {
  return kNames[std::size_t(level)];
}

std::optional<LogLevel> parseLogLevel(std::string_view text) {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (text == kNames[i])
      return LogLevel(i);
  return std::nullopt;
}

void logMessage(const Context& context, LogLevel level, std::string_view message) {
  if (!logs(context, level))
    return;
  try {
    if (context.logSink) {
      context.logSink(level, message);
      return;
    }
  } catch (...) {
    return; // a sink that fails loses its line, never the work
  }
  const std::string_view name = logLevelName(level);
  std::fprintf(stderr, "nearscape: %.*s: %.*s\n", int(name.size()), name.data(),
               int(message.size()), message.data());
}

void LogLaps::operator()(std::string_view what) {
  const auto now = std::chrono::steady_clock::now();
  if (logs(m_context, LogLevel::Debug)) {
    char line[160];
    std::snprintf(line, sizeof line, "%s %-12.*s %8.1f ms", m_prefix.c_str(), int(what.size()),
                  what.data(), std::chrono::duration<double, std::milli>(now - m_last).count());
    logMessage(m_context, LogLevel::Debug, line);
  }
  m_last = now;
}

} // namespace nearscape
