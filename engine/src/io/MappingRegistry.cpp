#include "io/MappingRegistry.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <mutex>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace nearscape::io {
namespace {

// Fixed and lock-free: the handler may run on any thread at any moment, so it can take no lock
// and allocate nothing.
constexpr int kSlots = 1024;
static_assert(std::atomic<std::uintptr_t>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

std::atomic<std::uint64_t> g_events{0};

struct Slot {
  std::atomic<bool> taken{false};
  std::atomic<std::uintptr_t> begin{0};    ///< 0: free; published last, cleared first
  std::atomic<std::size_t> length{0};      ///< whole pages
  std::atomic<std::uint64_t> faultedAt{0}; ///< the fault's event, or 0
};

Slot g_slots[kSlots];
struct sigaction g_previous {};

void onSigbus(int signal, siginfo_t* info, void* /*context*/) {
  if (info->si_code > 0) { // a fault, not a signal sent by kill()
    const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
    for (Slot& slot : g_slots) {
      const std::uintptr_t begin = slot.begin.load(std::memory_order_acquire);
      const std::size_t length = slot.length.load(std::memory_order_acquire);
      if (begin == 0 || address < begin || address - begin >= length)
        continue;
      const int savedErrno = errno;
      // The raw system call: async-signal-safe, and unseen by the sanitizers' mmap interceptors.
      const long mapped = ::syscall(SYS_mmap, begin, length, PROT_READ,
                                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0L);
      errno = savedErrno;
      if (mapped == static_cast<long>(begin)) {
        slot.faultedAt.store(g_events.fetch_add(1) + 1, std::memory_order_release);
        return; // the access runs again and reads zeros
      }
      break;
    }
  }
  // Not a page of ours: what was there before handles it. A fault runs again and faults under
  // the previous disposition; a sent signal is sent again, delivered once this handler returns.
  ::sigaction(SIGBUS, &g_previous, nullptr);
  if (info->si_code <= 0)
    ::raise(signal);
}

void installHandler() {
  struct sigaction action {};
  action.sa_sigaction = onSigbus;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, &g_previous);
}

} // namespace

int registerMapping(const void* data, std::size_t size) {
  static std::once_flag installed;
  std::call_once(installed, installHandler);
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  for (int i = 0; i < kSlots; ++i) {
    Slot& slot = g_slots[i];
    bool expected = false;
    if (!slot.taken.compare_exchange_strong(expected, true, std::memory_order_acq_rel))
      continue;
    slot.faultedAt.store(0, std::memory_order_relaxed);
    slot.length.store((size + page - 1) / page * page, std::memory_order_release);
    slot.begin.store(reinterpret_cast<std::uintptr_t>(data), std::memory_order_release);
    return i;
  }
  return -1;
}

void unregisterMapping(int slot) {
  if (slot < 0)
    return;
  g_slots[slot].begin.store(0, std::memory_order_release);
  g_slots[slot].length.store(0, std::memory_order_release);
  g_slots[slot].taken.store(false, std::memory_order_release);
}

std::uint64_t mappingFaultedAt(int slot) {
  return slot >= 0 ? g_slots[slot].faultedAt.load(std::memory_order_acquire) : 0;
}

std::uint64_t nextMappingEvent() {
  return g_events.fetch_add(1) + 1;
}

std::uint64_t lastMappingEvent() {
  return g_events.load();
}

} // namespace nearscape::io
