#pragma once
/// @file Error.h
/// The engine's exception types. Every public function says which of these it throws.

#include <stdexcept>
#include <string>

namespace nearscape {

/// Base of every error the engine throws on purpose.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A file could not be opened, read, mapped or written.
class IoError : public Error {
public:
  using Error::Error;
};

/// An output could not be written (disk full, read-only folder, I/O error): not the input's
/// fault. The message ends with the system's reason.
class WriteError : public IoError {
public:
  using IoError::IoError;
};

/// A file was readable but its contents are malformed or unsupported.
class FormatError : public Error {
public:
  using Error::Error;
};

/// The caller asked for something impossible (k too large, wrong shape, non-finite data...).
class InvalidArgument : public Error {
public:
  using Error::Error;
};

/// A device allocation failed; callers fall back to smaller tiles or to the CPU.
class DeviceOutOfMemory : public Error {
public:
  using Error::Error;
};

/// A GPU call failed for another reason than memory (a cuBLAS error, a kernel that could not
/// launch or faulted): `auto` finishes the work on the CPU and says why; with the CUDA backend
/// asked for by name it is reported. The message names the call and where it was made.
class DeviceError : public Error {
public:
  using Error::Error;
};

/// The CUDA backend was asked for and no usable GPU is present (no driver, no device, a build
/// without CUDA): the machine's limit, not bad input. The message says why.
class DeviceUnavailable : public Error {
public:
  using Error::Error;
};

/// The GPU path has a limit this call exceeds (k, dimensions, rows): `auto` runs the CPU
/// instead; with the CUDA backend asked for by name, the message says which limit.
class Unsupported : public Error {
public:
  using Error::Error;
};

/// A job was stopped through its JobControl.
class Cancelled : public Error {
public:
  Cancelled() : Error("cancelled") {}
};

namespace detail {
[[noreturn]] void throwInvalidArgument(const char* file, int line, const std::string& message);
} // namespace detail

} // namespace nearscape

/// Checks a precondition; on failure throws InvalidArgument naming the source file and line.
#define NEARSCAPE_EXPECTS(cond, message)                                                           \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      ::nearscape::detail::throwInvalidArgument(__FILE__, __LINE__, (message));                    \
  } while (false)
