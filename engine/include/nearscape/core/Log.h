#pragma once
/// @file Log.h
/// The engine's levelled log: what it tells about its work (fallbacks, phase timings) goes to
/// the context's sink when the context's level asks for it, never through globals or getenv.
/// The CLI sets the level with --log-level (or NEARSCAPE_LOG); the GUI keeps the default.

#include "nearscape/core/Context.h"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace nearscape {

/// "quiet", "error", "warning", "info" or "debug".
std::string_view logLevelName(LogLevel level);
/// The level named by `text` (as logLevelName writes it); nullopt otherwise.
std::optional<LogLevel> parseLogLevel(std::string_view text);

/// Whether `context` wants messages of `level`.
inline bool logs(const Context& context, LogLevel level) {
  return level != LogLevel::Quiet && level <= context.logLevel;
}

/// Writes `message` at `level` to the context's sink (stderr when it has none), when
/// logs(context, level). Never throws.
void logMessage(const Context& context, LogLevel level, std::string_view message);

/// Where a call's time goes, at the debug level: each lap("what") logs "PREFIX what N ms", the
/// time since the previous lap (or since construction).
class LogLaps {
public:
  LogLaps(const Context& context, std::string prefix)
      : m_context(context), m_prefix(std::move(prefix)) {}
  void operator()(std::string_view what);

private:
  const Context& m_context;
  std::string m_prefix;
  std::chrono::steady_clock::time_point m_last = std::chrono::steady_clock::now();
};

} // namespace nearscape
