#include "StandardOutput.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ext/stdio_sync_filebuf.h>
#include <iostream>
#include <unistd.h>

namespace nearscape::app {
namespace {

int g_firstError = 0; ///< errno of the first write to descriptor 1 that failed

ssize_t writeStandardOutput(void*, const char* data, std::size_t size) {
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = ::write(STDOUT_FILENO, data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (g_firstError == 0)
        g_firstError = n < 0 ? errno : EIO;
      return -1;
    }
    done += std::size_t(n);
  }
  return ssize_t(size);
}

} // namespace

void installCheckedStandardOutput() {
  std::fflush(stdout);
  const cookie_io_functions_t io{nullptr, writeStandardOutput, nullptr, nullptr};
  std::FILE* out = ::fopencookie(nullptr, "w", io);
  if (!out)
    return; // the plain stdout still works; only the reason of a failure would be vaguer
  std::setvbuf(out, nullptr, ::isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
  stdout = out;
  // Never destroyed: std::cout is flushed by the library's own exit handler, after every static
  // of ours is gone, and must still find its buffer then.
  static auto* buffer = new __gnu_cxx::stdio_sync_filebuf<char>(out);
  std::cout.rdbuf(buffer);
}

bool standardOutputWritten(const char* program) {
  errno = 0;
  std::cout.flush(); // through stdout: its flush is stdout's
  int err = errno;
  const bool streamFailed = std::cout.bad();
  errno = 0;
  const bool flushFailed = std::fflush(stdout) != 0;
  if (flushFailed && errno != 0)
    err = errno;
  if (!streamFailed && !flushFailed && !std::ferror(stdout) && g_firstError == 0)
    return true;
  if (g_firstError != 0)
    err = g_firstError;
  std::fprintf(stderr, "%s: cannot write standard output: %s\n", program,
               err != 0 ? std::strerror(err) : "a write failed");
  return false;
}

int exitCheckingStandardOutput(int code, const char* program) {
  return standardOutputWritten(program) || code != 0 ? code : 1;
}

} // namespace nearscape::app
