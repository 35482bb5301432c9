#pragma once
// What every fuzz target shares: the input written to a temporary file under a chosen name (most
// readers take paths, and the name picks the format), and the rule that a typed engine error is
// a correct answer to a hostile file. Anything else — a crash, a sanitizer report, another
// exception escaping (std::bad_alloc, a library's own exception), a hang or unbounded memory —
// ends the run and is a bug (scripts/ci-hardening.sh, README "Hardening").
//
// Each target defines NEARSCAPE_FUZZ_TARGET(name) { ... } over (const uint8_t* data, size_t size).
// Built with libFuzzer (NEARSCAPE_BUILD_FUZZ) it is the program's LLVMFuzzerTestOneInput; in a
// sanitizer build with tests, every target is linked into one replay program (ReplayMain.cpp)
// that runs the regression files of tests/fuzz/regressions/<name>/ through it.

#include "nearscape/core/Error.h"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace nearscape::fuzz {

using TargetFunction = void (*)(const std::uint8_t* data, std::size_t size);

/// Registers a target with the replay program (ReplayMain.cpp).
bool registerTarget(const char* name, TargetFunction function);

/// A folder of this process's own for the inputs (removed at exit).
inline const std::filesystem::path& scratchFolder() {
  static const std::filesystem::path folder = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/nearscape-fuzz-XXXXXX";
    if (!::mkdtemp(pattern.data())) {
      std::perror("nearscape fuzz: mkdtemp");
      std::abort();
    }
    static struct Remover {
      std::filesystem::path path;
      ~Remover() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
      }
    } remover{pattern};
    return std::filesystem::path(pattern);
  }();
  return folder;
}

/// Writes `size` bytes to scratchFolder()/name (replacing it) and returns its path.
inline std::filesystem::path writeInput(const std::string& name, const void* data,
                                        std::size_t size) {
  const std::filesystem::path path = scratchFolder() / name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror(("nearscape fuzz: writing " + path.string()).c_str());
    std::abort(); // the harness's own failure, never the engine's
  }
  return path;
}

inline std::filesystem::path writeInput(const std::string& name, std::string_view bytes) {
  return writeInput(name, bytes.data(), bytes.size());
}

/// Removes a file written by writeInput (for targets whose input names vary).
inline void removeInput(const std::string& name) {
  std::error_code ec;
  std::filesystem::remove(scratchFolder() / name, ec);
}

/// Runs `body`; an engine error (nearscape::Error and its subclasses) is the expected answer to
/// a malformed file. Every other exception escapes and aborts the run.
template <typename Body> void expectEngineErrorsOnly(Body&& body) {
  try {
    body();
  } catch (const nearscape::Error&) {
  }
}

} // namespace nearscape::fuzz

#ifdef NEARSCAPE_FUZZ_REPLAY
#define NEARSCAPE_FUZZ_TARGET(name)                                                                \
  static void nearscapeFuzz_##name(const std::uint8_t* data, std::size_t size);                    \
  [[maybe_unused]] static const bool nearscapeFuzzRegistered_##name =                              \
      ::nearscape::fuzz::registerTarget(#name, &nearscapeFuzz_##name);                             \
  static void nearscapeFuzz_##name(const std::uint8_t* data, std::size_t size)
#else
#define NEARSCAPE_FUZZ_TARGET(name)                                                                \
  static void nearscapeFuzz_##name(const std::uint8_t* data, std::size_t size);                    \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {              \
    nearscapeFuzz_##name(data, size);                                                              \
    return 0;                                                                                      \
  }                                                                                                \
  static void nearscapeFuzz_##name(const std::uint8_t* data, std::size_t size)
#endif
