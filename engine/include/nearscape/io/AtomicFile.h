#pragma once
/// @file AtomicFile.h
/// Writes that either complete or leave nothing behind, and never land on a file being read.

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

namespace nearscape {

/// Writes a file through `writer` into a temporary file in the target's folder, flushes and
/// fsyncs it, and renames it over the target (a symlink's destination, so the link stays a link).
/// A FIFO or character device (`/dev/null`, `/dev/stdout`) is written through, never replaced.
/// On any failure (an exception from `writer` included) the temporary file is removed and the
/// target is untouched. Temporary files are named `.NAME.tmp-PID-XXXXXX` (and commit backups
/// `.NAME.old-PID-XXXXXX`); those of the same output that a killed run left behind (no process
/// has their PID any more) are removed before this write. When an OutputSet active on this thread
/// declared `path`, the write is staged there instead and lands at its commit(). Throws
/// InvalidArgument (a folder or a block device), IoError (a missing folder), WriteError, or
/// rethrows what `writer` threw.
void writeFileAtomically(const std::filesystem::path& path,
                         const std::function<void(std::FILE* file)>& writer);

/// The files one command writes, all-or-nothing and never over one of the files it reads.
///
/// Declare inputs and outputs first (outputs are checked at once, before any work: an output
/// that resolves to an input — through a symlink, a hard link or another spelling — or to another
/// output, a folder, a block device or a file in a missing folder is refused). While the set
/// lives, writeFileAtomically() of a declared output on this thread only stages it; commit()
/// then moves every staged file into place, restoring the earlier files if one of them fails.
/// A set destroyed without commit() (an error, a cancelled job) leaves every target untouched
/// and no temporary file behind.
class OutputSet {
public:
  OutputSet();
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  /// A file (or a folder, with the files directly in it) the command reads. Missing paths are
  /// ignored: their reader reports them.
  void addInput(const std::filesystem::path& path);
  /// An output; empty paths are ignored. Throws InvalidArgument, IoError (a missing folder),
  /// WriteError (a folder not writable).
  void addOutput(const std::filesystem::path& path);
  /// Writes the staged streams (FIFOs, devices: they cannot be taken back, so they go first and
  /// a failing one stops the rest), then moves every staged file into place. When a move fails,
  /// the files already moved are put back from hard-link backups of what was there (a target
  /// that did not exist is removed; one whose backup could not be made keeps its new contents).
  /// Throws WriteError; InputChanged, before anything lands, when a mapped input changed.
  void commit();

  struct Impl;

private:
  std::unique_ptr<Impl> m_impl;
};

} // namespace nearscape
