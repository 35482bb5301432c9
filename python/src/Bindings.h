#pragma once
// What the parts of the Python module share: NumPy arrays in and out, the engine's context from
// keyword arguments, and long calls run off the interpreter's lock.
#include "nearscape/Nearscape.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace nearscape::python {

namespace py = pybind11;

/// A float32 n × d view of a Python array, and what keeps its memory alive.
struct FloatRows {
  MatrixView<float> view;
  py::object owner;    ///< the caller's array (zero copy) or the one converted copy
  bool copied = false; ///< whether the data had to be converted
  std::string file;    ///< the file behind a numpy.memmap (np.load(mmap_mode=…)), or empty
};

/// `value` as float32 rows, as the CLI reads a .npy: 1-D (a column) or 2-D, not empty, dtype
/// float32, float16, float64, uint8 or int8 (little-endian). A float32 C-contiguous aligned array
/// is used in place; anything else is converted once. `name` prefixes the messages ("x: …").
/// The file of a memmap (the array itself or the one it views) is recorded: an input that no
/// save() may replace. Throws InvalidArgument with the CLI's messages.
FloatRows floatRows(py::handle value, const std::string& name);

/// An int32 n × k view of ids (a graph from knn_graph), converted once if needed.
/// Throws InvalidArgument.
struct IdRows {
  MatrixView<std::int32_t> view;
  py::object owner;
};
IdRows idRows(py::handle value, const std::string& name);

/// A NumPy array owning `m` (no copy: the array keeps the matrix's storage alive).
template <typename T> py::array_t<T> toArray(Matrix<T> m) {
  auto* kept = new Matrix<T>(std::move(m));
  py::capsule owner(kept, [](void* p) { delete static_cast<Matrix<T>*>(p); });
  const auto rows = py::ssize_t(kept->rows()), cols = py::ssize_t(kept->cols());
  return py::array_t<T>({rows, cols}, {cols * py::ssize_t(sizeof(T)), py::ssize_t(sizeof(T))},
                        kept->data(), owner);
}
/// A 1-D NumPy array owning `v`.
template <typename T> py::array_t<T> toArray(std::vector<T> v) {
  auto* kept = new std::vector<T>(std::move(v));
  py::capsule owner(kept, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>({py::ssize_t(kept->size())}, {py::ssize_t(sizeof(T))}, kept->data(), owner);
}

/// An integer argument such as k: a Python int of any size, or anything with __index__ (NumPy's
/// integers). pybind11's own `int` turns away one beyond int's range as a TypeError
/// ("incompatible function arguments"); this one reaches intOf, which names it in a ValueError.
struct PyInteger {
  py::object value;
};

/// `value` as an int: None is `absent`; an integer beyond int's range is refused. Throws
/// py::type_error (not an integer) and InvalidArgument (a ValueError) naming `name`.
std::optional<int> intOf(py::handle value, const std::string& name);
/// The same for a PyInteger, which is never None.
inline int intOf(const PyInteger& value, const std::string& name) {
  return *intOf(value.value, name);
}

/// A number of a dict argument (grid and build values): a Python int or float, or NumPy's.
/// Throws InvalidArgument (a ValueError) naming `what` for anything else ("abc", None).
double numberArg(py::handle value, const std::string& what);

/// The engine context of the keyword arguments every long call takes. Throws InvalidArgument.
Context makeContext(const std::string& backend, const py::object& memoryBudget, int threads,
                    std::uint64_t seed);
/// `text` in lower case (ASCII): names (metric, backend, method, kind, score) are accepted in
/// any case.
std::string lowered(std::string text);
/// "l2"/"euclidean", "ip"/"dot"/"inner_product", "cos"/"cosine"/"angular", any case. Throws
/// InvalidArgument.
Metric metricOf(const std::string& name);

/// Runs `work` on a worker thread with the interpreter's lock released, and meanwhile, every
/// 20 ms on the calling thread with the lock held: runs Python's signal handlers (Ctrl-C: the
/// job is asked to stop, and KeyboardInterrupt is raised once the engine has stopped, which it
/// checks at least every ~100 ms) and hands the latest progress to `progress(fraction, message)`
/// (at most every `progressInterval`; a callback returning False stops the job: Cancelled).
/// Engine exceptions come back as the module's Python exceptions.
void runJob(const std::function<void(JobControl&)>& work, const py::object& progress);

/// Registers the exception classes and the translation of the engine's errors.
void registerErrors(py::module_& m);
/// Rewrites "the data …" / "the queries …" as "NAME: the data …" for the arguments' names, as
/// the CLI prefixes them with its files' names, and throws the result as InvalidArgument.
[[noreturn]] void rethrowNamed(const InvalidArgument& e, const std::string& data,
                               const std::string& queries = {});

/// Parameter values by name, integers as int.
py::dict parameterDict(const ParameterValues& values);

/// Refuses a k outside [1, n − 1] for a kNN graph of n rows, saying why when that range is
/// empty (one row). Throws InvalidArgument.
void expectGraphK(int k, std::int64_t n);

/// Binds the errors, knn_graph, search and the indexes.
void bindCore(py::module_& m);
/// Binds sweep, minimax_path, layout, duplicates, outliers, compare.
void bindAnalysis(py::module_& m);

} // namespace nearscape::python

namespace pybind11::detail {
/// Loads any integer into a PyInteger (floats and strings are not: pybind11's TypeError).
template <> struct type_caster<nearscape::python::PyInteger> {
  PYBIND11_TYPE_CASTER(nearscape::python::PyInteger, const_name("int"));
  bool load(handle src, bool) {
    if (!src || PyFloat_Check(src.ptr()) || !PyIndex_Check(src.ptr()))
      return false;
    value.value = reinterpret_borrow<object>(src);
    return true;
  }
  static handle cast(const nearscape::python::PyInteger& v, return_value_policy, handle) {
    return v.value.inc_ref();
  }
};
} // namespace pybind11::detail
