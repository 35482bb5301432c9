#pragma once
// The address ranges of the live file mappings, and the SIGBUS handler that looks them up. A
// file truncated under its mapping (another program rewriting it in place) makes the next read
// of a vanished page fault; the handler maps zero pages over that whole mapping and marks it, so
// the read goes on harmlessly and the run ends with an error (MappedFile) instead of a signal.

#include <cstddef>
#include <cstdint>

namespace nearscape::io {

/// Numbers the opening of mappings and the faults under them, in the order they happen (from 1).
std::uint64_t nextMappingEvent();
/// The number of the last event so far (0: none yet).
std::uint64_t lastMappingEvent();

/// Registers the mapping [data, data + size), size > 0, installing the handler on first use.
/// Returns its slot, or −1 when every slot is taken (a vanished page of that mapping is then the
/// SIGBUS it always was). Thread-safe.
int registerMapping(const void* data, std::size_t size);

/// Forgets a slot that registerMapping returned (−1: nothing). Thread-safe.
void unregisterMapping(int slot);

/// The event at which the handler replaced the slot's pages, or 0 (never; slot −1).
std::uint64_t mappingFaultedAt(int slot);

} // namespace nearscape::io
