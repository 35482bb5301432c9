#pragma once
/// @file MappedFile.h
/// Read-only memory mapping of a whole file, and opening input files without ever blocking.

#include "nearscape/core/Error.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace nearscape {

/// Throws IoError "<path>: not a regular file (it is a FIFO…)" unless `path`, symlinks followed,
/// is a regular file. Only stats the path: a FIFO or a device is never opened.
void requireRegularFile(const std::filesystem::path& path);

/// Opens `path` read-only as a regular file and returns its descriptor (close-on-exec; the caller
/// closes it). Never blocks: the path is stat'ed first and opened with O_NONBLOCK, so a FIFO, a
/// device, a socket or a folder is refused at once even if it replaced the file in between.
/// Sets `sizeOut` to the file's size. Throws IoError.
int openRegularFile(const std::filesystem::path& path, std::uint64_t* sizeOut = nullptr);

/// An input file changed (rewritten, truncated, grown) while it was mapped: what was read from it
/// is not the file's contents. The message is "PATH changed while it was being read…". Not bad
/// input: the same command on the finished file may well succeed.
class InputChanged : public IoError {
public:
  using IoError::IoError;
};

/// A read-only, private mapping of a file. Shared ownership keeps the mapping alive for views.
///
/// Another program may rewrite the file in place while it is mapped (numpy.save truncates, then
/// writes). A read of a page the truncation took away does not end the process with SIGBUS: the
/// whole mapping then reads as zeros, and the change is reported by throwIfChanged() and
/// throwIfInputsChanged().
class MappedFile {
public:
  /// Maps `path` (a regular file: see openRegularFile). Throws IoError when it cannot be opened
  /// or mapped. An empty file maps to size() == 0 and data() == nullptr.
  static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::uint8_t* data() const { return m_data; }
  std::size_t size() const { return m_size; }
  const std::filesystem::path& path() const { return m_path; }

  /// Whether the file changed since open(): a page of it vanished under a read, or its size or
  /// modification time differ.
  bool changed() const;
  /// Throws InputChanged when changed().
  void throwIfChanged() const;
  /// changed(), for a file read after `since` (inputsMark()): opened then, or a page of it
  /// vanished under a read then.
  bool changedSince(std::uint64_t since) const;

private:
  MappedFile() = default;
  std::filesystem::path m_path;
  const std::uint8_t* m_data = nullptr;
  std::size_t m_size = 0;
  int m_fd = -1; ///< kept open: fstat sees the mapped file, whatever the path names now
  std::int64_t m_mtimeNs = 0;   ///< the modification time at open
  std::uint64_t m_openedAt = 0; ///< the registry's event number at open
  int m_slot = -1;              ///< in the fault handler's registry, or −1
};

/// A moment of the process, for the checks below: they cover the mappings read after it.
std::uint64_t inputsMark();

/// The first input that changed while mapped, among those read after `since` (opened then, or
/// a page of which vanished under a read then; 0: every mapping of the process, released ones
/// included), as InputChanged's message ("PATH changed while it was being read…"); empty when
/// none did.
std::string changedInputMessage(std::uint64_t since = 0);

/// Throws InputChanged when changedInputMessage(since) is not empty. Called before outputs land
/// and before a command or a job reports success: a result read from a file that changed under
/// it is no result.
void throwIfInputsChanged(std::uint64_t since = 0);

} // namespace nearscape
