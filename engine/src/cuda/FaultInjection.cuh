#pragma once
// A test hook that makes the N-th GPU allocation, cuBLAS call or kernel launch fail, so that a
// test can walk every failure site of a command and check that each run ends with a correct
// result (smaller tiles, streaming, the CPU) or a clear error — never a crash, hang or wrong
// answer (tests/gpu/fault-walk.sh; the outcomes are in docs/reliability.md).
//   NEARSCAPE_FAULT_GPU=alloc:N   the N-th cudaMalloc / cudaHostAlloc reports out of memory
//   NEARSCAPE_FAULT_GPU=cublas:N  the N-th cuBLAS call fails (CUBLAS_STATUS_EXECUTION_FAILED)
//   NEARSCAPE_FAULT_GPU=launch:N  the N-th launch check reports cudaErrorLaunchOutOfResources
//   NEARSCAPE_FAULT_GPU=list      nothing fails; the first time each site is reached, a line
//                                 "nearscape-fault: KIND N FILE:LINE" goes to stderr
// Without the variable (always, outside tests) each site costs one read of a parsed-once flag.

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

namespace nearscape::cuda::fault {

enum class Site { Alloc, Cublas, Launch };

namespace detail {

inline const char* siteName(Site site) {
  switch (site) {
  case Site::Alloc:
    return "alloc";
  case Site::Cublas:
    return "cublas";
  case Site::Launch:
    return "launch";
  }
  return "?";
}

struct Plan {
  bool active = false;
  bool list = false;
  Site site = Site::Alloc;
  long failAt = 0;
  std::atomic<long> reached[3] = {0, 0, 0};
  std::mutex listed;
  std::set<std::string> seen;

  Plan() {
    const char* text = std::getenv("NEARSCAPE_FAULT_GPU");
    if (!text || !*text)
      return;
    active = true;
    if (std::strcmp(text, "list") == 0) {
      list = true;
      return;
    }
    for (Site s : {Site::Alloc, Site::Cublas, Site::Launch}) {
      const std::size_t length = std::strlen(siteName(s));
      if (std::strncmp(text, siteName(s), length) == 0 && text[length] == ':') {
        site = s;
        failAt = std::atol(text + length + 1);
        return;
      }
    }
    std::fprintf(stderr,
                 "nearscape: NEARSCAPE_FAULT_GPU=%s is not alloc:N, cublas:N, launch:N "
                 "or list; ignored\n",
                 text);
    active = false;
  }
  ~Plan() {
    if (list)
      std::fprintf(stderr, "nearscape-fault: reached alloc %ld cublas %ld launch %ld\n",
                   reached[0].load(), reached[1].load(), reached[2].load());
  }
};

inline Plan& plan() {
  static Plan p;
  return p;
}

} // namespace detail

/// Whether the site reached now (FILE:LINE) is the one told to fail.
inline bool inject(Site site, const char* file, int line) {
  detail::Plan& p = detail::plan();
  if (!p.active)
    return false;
  const long n = ++p.reached[int(site)];
  if (p.list) {
    const char* slash = std::strrchr(file, '/');
    const std::string where = std::string(slash ? slash + 1 : file) + ":" + std::to_string(line);
    std::lock_guard lock(p.listed);
    if (p.seen.insert(std::string(detail::siteName(site)) + " " + where).second)
      std::fprintf(stderr, "nearscape-fault: %s %ld %s\n", detail::siteName(site), n,
                   where.c_str());
    return false;
  }
  if (site == p.site && n == p.failAt) {
    std::fprintf(stderr, "nearscape-fault: failing %s %ld at %s:%d\n", detail::siteName(site), n,
                 file, line);
    return true;
  }
  return false;
}

} // namespace nearscape::cuda::fault
