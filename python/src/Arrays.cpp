// NumPy arrays to the engine's views: the same checks, in the same words, as the CLI's .npy reader
// (io/Npy.cpp), so that a notebook and a terminal refuse the same data the same way.
#include "Bindings.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

namespace nearscape::python {
namespace {

/// The dtype's name when the CLI reads it as vectors (vectorDtypeName in io/Npy.cpp).
const char* vectorDtype(const py::dtype& dtype) {
  const std::string descr = py::str(dtype.attr("str"));
  if (descr == "<f4")
    return "float32";
  if (descr == "<f2")
    return "float16";
  if (descr == "<f8")
    return "float64";
  if (descr == "|u1")
    return "uint8";
  if (descr == "|i1")
    return "int8";
  return nullptr;
}

/// Whether `value` is a scipy.sparse matrix or array, known without importing scipy (which may
/// be absent): its class comes from the module scipy.sparse.
bool isScipySparse(py::handle value) {
  const py::object type = py::type::of(value);
  const std::string module = py::str(py::getattr(type, "__module__", py::str("")));
  return module.rfind("scipy.sparse", 0) == 0;
}

py::array asArray(py::handle value, const std::string& name) {
  if (isScipySparse(value)) // numpy.asarray would make a 0-D array of objects of it
    throw InvalidArgument(name + ": sparse input (" +
                          std::string(py::str(py::type::of(value).attr("__name__"))) +
                          ") is not supported: densify it first, e.g. " + name +
                          ".toarray(), or reduce its dimensions first (TruncatedSVD)");
  py::module_ numpy = py::module_::import("numpy");
  return numpy.attr("asarray")(value);
}

/// Integers are converted to float32 as Faiss, hnswlib and pynndescent convert them, but only
/// where float32 holds each value exactly (every integer up to 2^24 in magnitude, and larger
/// ones that are multiples of a power of two): a value that would round is refused with its
/// place. Returns the float32 copy. Throws InvalidArgument.
template <typename T>
py::array_t<float> exactFloats(const py::array& a, std::int64_t rows, std::int64_t cols,
                               const std::string& name) {
  const py::array_t<T, py::array::c_style> in =
      py::module_::import("numpy").attr("ascontiguousarray")(a);
  py::array_t<float> out({rows, cols});
  const T* src = in.data();
  float* dst = out.mutable_data();
  std::int64_t bad = -1;
  {
    py::gil_scoped_release released;
    for (std::int64_t i = 0; i < rows * cols; ++i) {
      const float f = static_cast<float>(src[i]);
      dst[i] = f;
      // long double holds every 64-bit integer and every float exactly (x86's 80-bit format);
      // where it is a plain double, a value beyond 2^53 may pass.
      if (bad < 0 && static_cast<long double>(f) != static_cast<long double>(src[i]))
        bad = i;
    }
  }
  if (bad >= 0)
    throw InvalidArgument(
        name + ": the value " + std::to_string(src[bad]) + " at row " + std::to_string(bad / cols) +
        ", column " + std::to_string(bad % cols) + " (" +
        std::string(py::str(a.dtype().attr("name"))) +
        ") cannot be represented exactly as float32, which holds every integer up to 2^24 = "
        "16777216 in magnitude; convert the array yourself (" +
        name + ".astype(numpy.float32)) to accept the rounding");
  return out;
}

/// An array of integers or booleans as float32, or nullopt for any other dtype.
std::optional<py::array> integersAsFloats(const py::array& a, std::int64_t rows, std::int64_t cols,
                                          const std::string& name) {
  const char kind = a.dtype().kind();
  const auto size = a.dtype().itemsize();
  if (kind == 'b')
    return exactFloats<bool>(a, rows, cols, name);
  if (kind == 'i')
    switch (size) {
    case 1:
      return exactFloats<std::int8_t>(a, rows, cols, name);
    case 2:
      return exactFloats<std::int16_t>(a, rows, cols, name);
    case 4:
      return exactFloats<std::int32_t>(a, rows, cols, name);
    case 8:
      return exactFloats<std::int64_t>(a, rows, cols, name);
    }
  if (kind == 'u')
    switch (size) {
    case 1:
      return exactFloats<std::uint8_t>(a, rows, cols, name);
    case 2:
      return exactFloats<std::uint16_t>(a, rows, cols, name);
    case 4:
      return exactFloats<std::uint32_t>(a, rows, cols, name);
    case 8:
      return exactFloats<std::uint64_t>(a, rows, cols, name);
    }
  return std::nullopt;
}

/// Rows and columns of a 1-D (a column) or 2-D array. Throws InvalidArgument.
std::pair<std::int64_t, std::int64_t> shapeOf(const py::array& a, const std::string& name) {
  if (a.ndim() < 1 || a.ndim() > 2)
    throw InvalidArgument(name + ": expected a 1-D or 2-D array, got " + std::to_string(a.ndim()) +
                          " dimensions");
  const std::int64_t rows = a.shape(0), cols = a.ndim() == 2 ? a.shape(1) : 1;
  if (rows == 0 || cols == 0)
    throw InvalidArgument(name + ": the array is empty (shape " + std::to_string(rows) + " × " +
                          std::to_string(cols) + ")");
  return {rows, cols};
}

bool cContiguousAligned(const py::array& a, std::size_t alignment) {
  return (a.flags() & py::array::c_style) &&
         reinterpret_cast<std::uintptr_t>(a.data()) % alignment == 0;
}

/// The file behind `value` when it is a numpy.memmap or a view of one (following `.base`), else
/// "": the array is then a file's bytes, and that file an input of whatever is built from it.
std::string memmapFile(py::handle value) {
  const py::object memmap = py::module_::import("numpy").attr("memmap");
  py::object at = py::reinterpret_borrow<py::object>(value);
  for (int depth = 0; depth < 64 && !at.is_none(); ++depth) {
    if (py::isinstance(at, memmap)) {
      const py::object file = py::getattr(at, "filename", py::none());
      if (!file.is_none())
        return py::str(file).cast<std::string>();
    }
    at = py::getattr(at, "base", py::none());
  }
  return {};
}

} // namespace

FloatRows floatRows(py::handle value, const std::string& name) {
  py::array a = asArray(value, name);
  const auto [rows, cols] = shapeOf(a, name);
  FloatRows out;
  py::module_ numpy = py::module_::import("numpy");
  const std::string order = py::str(a.dtype().attr("byteorder"));
  if (order == ">" || (order == "<" && !py::cast<bool>(numpy.attr("little_endian")))) {
    // Big-endian data (a file written on another machine, np.dtype('>f4')): the same values in
    // this machine's byte order, one copy.
    a = a.attr("astype")(a.dtype().attr("newbyteorder")("="));
    out.copied = true;
  }
  if (std::optional<py::array> converted = integersAsFloats(a, rows, cols, name)) {
    a = *converted;
    out.copied = true;
  } else if (!vectorDtype(a.dtype())) {
    throw InvalidArgument(name + ": unsupported dtype '" +
                          std::string(py::str(a.dtype().attr("str"))) +
                          "' for vectors (supported: float32, float16, float64, integers and "
                          "bool, either byte order)");
  } else if (std::string_view(vectorDtype(a.dtype())) == "float64") {
    // As the CLI reads a float64 file: refused where float32 cannot hold the values, never
    // flushed to zero or rounded to Inf (numpy's astype would do both silently).
    const py::array_t<double, py::array::c_style> wide = numpy.attr("ascontiguousarray")(a);
    py::array_t<float> narrow({rows, cols});
    {
      py::gil_scoped_release released;
      convertFloat64(wide.data(), rows, cols, narrow.mutable_data(), name);
    }
    a = narrow;
    out.copied = true;
  } else if (std::string_view(vectorDtype(a.dtype())) != "float32" ||
             !cContiguousAligned(a, alignof(float))) {
    // The one conversion: float16 exactly — as the CLI converts a file of it.
    a = numpy.attr("ascontiguousarray")(a, py::arg("dtype") = numpy.attr("float32"));
    out.copied = true;
  }
  out.view = {static_cast<const float*>(a.data()), rows, cols};
  out.owner = a;
  out.file = memmapFile(value);
  return out;
}

IdRows idRows(py::handle value, const std::string& name) {
  py::array a = asArray(value, name);
  if (a.ndim() != 2)
    throw InvalidArgument(name + ": expected a 2-D array of ids");
  const char kind = a.dtype().kind();
  if (kind != 'i' && kind != 'u')
    throw InvalidArgument(name + ": ids must be integers, got '" +
                          std::string(py::str(a.dtype().attr("str"))) + "'");
  py::module_ numpy = py::module_::import("numpy");
  if (a.dtype().attr("str").cast<std::string>() != "<i4" || !cContiguousAligned(a, 4)) {
    // Values beyond int32 would wrap: refuse them instead.
    const py::object low = a.attr("min")(), high = a.attr("max")();
    if (low.cast<long long>() < -1 || high.cast<long long>() > 0x7fffffffLL)
      throw InvalidArgument(name + ": ids must lie in [-1, 2^31 - 1]");
    a = numpy.attr("ascontiguousarray")(a, py::arg("dtype") = numpy.attr("int32"));
  }
  return {{static_cast<const std::int32_t*>(a.data()), a.shape(0), a.shape(1)}, a};
}

std::string lowered(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return text;
}

Metric metricOf(const std::string& name) {
  const auto parsed = parseMetric(lowered(name)); // l2/euclidean, ip/dot/inner_product, cos/…
  if (!parsed)
    throw InvalidArgument("unknown metric '" + name +
                          "' (l2 or euclidean; ip, dot or inner_product; cos, cosine or angular; "
                          "any case)");
  return *parsed;
}

std::optional<int> intOf(py::handle value, const std::string& name) {
  if (value.is_none())
    return std::nullopt;
  if (PyFloat_Check(value.ptr()) || !PyIndex_Check(value.ptr()))
    throw py::type_error(name + " must be an integer, not " +
                         std::string(py::str(py::type::of(value).attr("__name__"))));
  const auto integer = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!integer)
    throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(integer.ptr(), &overflow);
  if (overflow != 0 || v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    throw InvalidArgument(name + " = " + std::string(py::str(integer)) + " is out of range (" +
                          name + " is at most " + std::to_string(std::numeric_limits<int>::max()) +
                          ")");
  return int(v);
}

void expectGraphK(int k, std::int64_t n) {
  if (n < 2)
    throw InvalidArgument("k must be at least 1 and at most n − 1 = " + std::to_string(n - 1) +
                          ": the data has " + std::to_string(n) + " row" + (n == 1 ? "" : "s"));
  if (k < 1 || k > n - 1)
    throw InvalidArgument("k = " + std::to_string(k) + " is out of range: it must lie in [1, " +
                          std::to_string(n - 1) + "] (n − 1: an item is not its own neighbour)");
}

double numberArg(py::handle value, const std::string& what) {
  py::detail::make_caster<double> number;
  const bool numeric = PyIndex_Check(value.ptr()) ||
                       py::isinstance(value, py::module_::import("numbers").attr("Real"));
  if (!numeric || PyBool_Check(value.ptr()) || !number.load(value, true))
    throw InvalidArgument(what + ": " + std::string(py::repr(value)) + " is not a number");
  return double(number);
}

Context makeContext(const std::string& backend, const py::object& memoryBudget, int threads,
                    std::uint64_t seed) {
  Context c;
  const auto b = parseBackend(lowered(backend));
  if (!b)
    throw InvalidArgument("unknown backend '" + backend +
                          "' (auto, cpu, or cuda, also called gpu; any case)");
  c.backend = *b;
  if (threads < 0 || threads > 1024)
    throw InvalidArgument("threads must lie in [0, 1024] (0: all)");
  if (const ThreadLimit limit = threadLimit(); threads > limit.threads)
    throw InvalidArgument("threads=" + std::to_string(threads) + " is more than this machine " +
                          "can run: at most " + std::to_string(limit.threads) + " (" +
                          limit.reason + ")");
  c.threads = threads;
  c.seed = seed;
  if (!memoryBudget.is_none()) {
    if (py::isinstance<py::str>(memoryBudget))
      c.memoryBudget = parseByteSize(memoryBudget.cast<std::string>());
    else if (py::isinstance<py::int_>(memoryBudget) && memoryBudget.cast<long long>() > 0)
      c.memoryBudget = memoryBudget.cast<std::uint64_t>();
    else
      throw InvalidArgument("memory_budget must be a size such as \"2G\" or a positive number "
                            "of bytes");
  }
  return c;
}

} // namespace nearscape::python
