// Long calls off the interpreter's lock, Ctrl-C and progress on the calling thread, and the
// engine's errors as Python exceptions.
#include "Bindings.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>

namespace nearscape::python {
namespace {

/// The exception classes (created once, kept for the interpreter's life).
struct ErrorClasses {
  PyObject* base = nullptr;        ///< NearscapeError
  PyObject* invalid = nullptr;     ///< InvalidInputError(NearscapeError, ValueError)
  PyObject* memory = nullptr;      ///< OutOfMemoryError(NearscapeError, MemoryError)
  PyObject* io = nullptr;          ///< NearscapeIOError(NearscapeError, OSError)
  PyObject* device = nullptr;      ///< DeviceError(NearscapeError)
  PyObject* unsupported = nullptr; ///< UnsupportedError(NearscapeError, ValueError)
  PyObject* cancelled = nullptr;   ///< CancelledError(NearscapeError)
};
ErrorClasses g_errors;

PyObject* newError(py::module_& m, const char* name, PyObject* base, PyObject* other,
                   const char* doc) {
  const std::string qualified = std::string("nearscape.") + name;
  py::tuple bases = other ? py::make_tuple(py::handle(base), py::handle(other))
                          : py::make_tuple(py::handle(base));
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (!cls)
    throw py::error_already_set();
  m.add_object(name, py::handle(cls));
  return cls;
}

/// The message without the " [Knn.cpp:29]" that NEARSCAPE_EXPECTS appends for the CLI's logs: a
/// Python user reads the traceback, not the engine's sources.
std::string withoutSourceTag(const char* what) {
  std::string message = what;
  const std::size_t open = message.rfind(" [");
  if (open == std::string::npos || message.empty() || message.back() != ']')
    return message;
  const std::string tag = message.substr(open + 2, message.size() - open - 3);
  const std::size_t colon = tag.rfind(':');
  if (colon == std::string::npos || colon + 1 == tag.size() ||
      tag.find_first_not_of("0123456789", colon + 1) != std::string::npos)
    return message;
  const std::string_view file = std::string_view(tag).substr(0, colon);
  const bool sourceTag = file.find(' ') == std::string_view::npos &&
                         (file.ends_with(".cpp") || file.ends_with(".cu") || file.ends_with(".h"));
  if (sourceTag)
    message.erase(open);
  return message;
}

void raise(PyObject* type, const std::exception& e) {
  PyErr_SetString(type, withoutSourceTag(e.what()).c_str());
}

} // namespace

void registerErrors(py::module_& m) {
  g_errors.base = PyErr_NewExceptionWithDoc(
      "nearscape.NearscapeError", "Base of every error the engine raises.", nullptr, nullptr);
  m.add_object("NearscapeError", py::handle(g_errors.base));
  g_errors.invalid = newError(m, "InvalidInputError", g_errors.base, PyExc_ValueError,
                              "Bad input: a wrong dtype, shape, NaN/Inf, k out of range… "
                              "(a ValueError).");
  g_errors.memory = newError(m, "OutOfMemoryError", g_errors.base, PyExc_MemoryError,
                             "A device or host allocation failed with no fallback left.");
  g_errors.io = newError(m, "NearscapeIOError", g_errors.base, PyExc_OSError,
                         "A file could not be read or written, or is malformed.");
  g_errors.device = newError(m, "DeviceError", g_errors.base, nullptr,
                             "The GPU was asked for by name and failed or is absent.");
  g_errors.unsupported = newError(m, "UnsupportedError", g_errors.base, PyExc_ValueError,
                                  "Beyond the GPU path's limits with backend='cuda'.");
  g_errors.cancelled = newError(m, "CancelledError", g_errors.base, nullptr,
                                "The progress callback returned False: the job stopped.");
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p)
      return;
    try {
      std::rethrow_exception(p);
    } catch (const Cancelled& e) {
      raise(g_errors.cancelled, e);
    } catch (const DeviceOutOfMemory& e) {
      raise(g_errors.memory, e);
    } catch (const Unsupported& e) {
      raise(g_errors.unsupported, e);
    } catch (const DeviceUnavailable& e) {
      raise(g_errors.device, e);
    } catch (const DeviceError& e) {
      raise(g_errors.device, e);
    } catch (const InvalidArgument& e) {
      raise(g_errors.invalid, e);
    } catch (const FormatError& e) { // a file that is not ours (an index, a graph)
      raise(g_errors.invalid, e);
    } catch (const IoError& e) {
      raise(g_errors.io, e);
    } catch (const Error& e) {
      raise(g_errors.base, e);
    }
  });
}

void rethrowNamed(const InvalidArgument& e, const std::string& data, const std::string& queries) {
  const std::string message = e.what();
  auto starts = [&](const char* phrase) { return message.rfind(phrase, 0) == 0; };
  if (!data.empty() && starts("the data"))
    throw InvalidArgument(data + ": " + message);
  if (!queries.empty() && starts("the queries"))
    throw InvalidArgument(queries + ": " + message);
  throw e;
}

void runJob(const std::function<void(JobControl&)>& work, const py::object& progress) {
  if (!progress.is_none() && !PyCallable_Check(progress.ptr()))
    throw InvalidArgument("progress must be a function of (fraction, message), or None");
  struct Shared {
    std::mutex mutex;
    std::condition_variable done;
    bool finished = false;
    std::exception_ptr error;
    bool progressPending = false;
    double fraction = 0;
    double reported = 0; ///< the last fraction handed to `progress`
    std::string message;
  } shared;
  JobControl job(
      [&shared](double fraction, const std::string& message) {
        std::lock_guard lock(shared.mutex);
        shared.progressPending = true;
        // Monotone whatever the stages report: a stage that restarts its own count (NN-Descent's
        // rounds, duplicates' passes) never moves the bar back.
        shared.fraction = std::max(shared.fraction, std::clamp(fraction, 0.0, 1.0));
        shared.message = message;
      },
      std::chrono::milliseconds(100));

  std::optional<py::error_already_set> raised; // Ctrl-C, or the callback's own exception
  {
    py::gil_scoped_release unlocked;
    std::thread worker([&] {
      try {
        work(job);
      } catch (...) {
        std::lock_guard lock(shared.mutex);
        shared.error = std::current_exception();
      }
      std::lock_guard lock(shared.mutex);
      shared.finished = true;
      shared.done.notify_all();
    });
    bool stopping = false;
    for (;;) {
      std::unique_lock lock(shared.mutex);
      // 20 ms: Ctrl-C is seen well inside the 200 ms a person waits for.
      if (shared.done.wait_for(lock, std::chrono::milliseconds(20),
                               [&] { return shared.finished; }))
        break;
      if (stopping)
        continue;
      const bool report = shared.progressPending && !progress.is_none();
      const double fraction = shared.fraction;
      const std::string message = shared.message;
      shared.progressPending = false;
      lock.unlock();
      py::gil_scoped_acquire locked;
      if (PyErr_CheckSignals() != 0) {
        raised.emplace(); // fetches KeyboardInterrupt (or what a handler raised)
        job.requestStop();
        stopping = true;
        continue;
      }
      if (report) {
        shared.reported = fraction; // only this thread reads it
        try {
          const py::object answer = progress(fraction, message);
          if (!answer.is_none() && !py::bool_(answer)) {
            job.requestStop();
            stopping = true;
          }
        } catch (py::error_already_set& e) {
          raised.emplace(std::move(e));
          job.requestStop();
          stopping = true;
        }
      }
    }
    worker.join();
  }
  if (raised) {
    if (shared.error) { // the engine's Cancelled, or an error it met first: the Python one wins
      try {
        std::rethrow_exception(shared.error);
      } catch (const Cancelled&) {
      } catch (...) {
      }
    }
    throw std::move(*raised);
  }
  if (shared.error)
    std::rethrow_exception(shared.error);
  if (!progress.is_none()) {
    // The last call says 1.0 whatever the engine's estimate reached (NN-Descent stops when its
    // updates die out, at 0.2 to 0.3 of the rounds it allows for): done is done.
    const std::string message = shared.message.empty() ? "done" : shared.message;
    if (shared.progressPending || shared.reported < 1.0)
      progress(1.0, message);
  }
}

} // namespace nearscape::python
