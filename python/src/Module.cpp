// The Python module `nearscape._nearscape`: the engine on NumPy arrays. The package's
// __init__.py re-exports it, adds what is plain Python (show, DataFrames) and __init__.pyi types
// it.
#include "Bindings.h"
#include "IndexHandles.h"
#include "nearscape/io/AtomicFile.h"

#include <pybind11/stl/filesystem.h>

#include <memory>

namespace nearscape::python {
namespace {

/// The keyword arguments every long call takes, documented once.
constexpr const char* kCommonArgs =
    "backend: \"auto\" (CUDA when usable), \"cpu\" or \"cuda\" (also \"gpu\"), any case; "
    "memory_budget: working memory, e.g. \"2G\" or bytes (None: decided from the machine); "
    "threads: CPU threads (0: all); seed: for randomized steps; progress: called as "
    "progress(fraction, message) on this thread, at most every 100 ms, with fractions that never "
    "decrease and a last call of 1.0 when the call succeeds (return False to stop: "
    "CancelledError). The call releases the GIL and stops on Ctrl-C (KeyboardInterrupt).";

py::tuple idsAndDistances(KnnResult r) {
  return py::make_tuple(toArray(std::move(r.ids)), toArray(std::move(r.distances)));
}

py::tuple knnGraphPy(py::handle x, const PyInteger& kArg, const std::string& metric,
                     const std::string& method, const std::string& backend,
                     const py::object& memoryBudget, int threads, std::uint64_t seed,
                     const py::object& progress) {
  const int k = intOf(kArg, "k");
  const FloatRows data = floatRows(x, "x");
  const Context context = makeContext(backend, memoryBudget, threads, seed);
  const Metric m = metricOf(metric);
  const auto asked = parseGraphMethod(lowered(method));
  if (!asked)
    throw InvalidArgument("method must be exact, nndescent or auto (any case), not '" + method +
                          "'");
  KnnResult result;
  try {
    runJob([&](JobControl& job) { result = buildKnnGraph(data.view, k, m, *asked, context, job); },
           progress);
  } catch (const InvalidArgument& e) {
    rethrowNamed(e, "x");
  }
  return idsAndDistances(std::move(result));
}

py::tuple searchPy(py::handle base, py::handle queries, const PyInteger& kArg,
                   const std::string& metric, const std::string& backend,
                   const py::object& memoryBudget, int threads, const py::object& progress) {
  const int k = intOf(kArg, "k");
  const FloatRows b = floatRows(base, "base"), q = floatRows(queries, "queries");
  const Context context = makeContext(backend, memoryBudget, threads, 0);
  const Metric m = metricOf(metric);
  KnnResult result;
  try {
    runJob([&](JobControl& job) { result = knnSearch(q.view, b.view, k, m, context, job); },
           progress);
  } catch (const InvalidArgument& e) {
    rethrowNamed(e, "base", "queries");
  }
  return idsAndDistances(std::move(result));
}

template <typename Handle>
std::unique_ptr<Handle> buildHandle(py::handle base, const std::string& metric,
                                    const IndexBuildParams& params, const Context& context,
                                    const py::object& progress) {
  auto h = std::make_unique<Handle>();
  h->base = floatRows(base, "base");
  h->context = context;
  const Metric m = metricOf(metric);
  try {
    runJob([&](JobControl& job) { h->index = buildIndex(h->base.view, m, params, context, job); },
           progress);
  } catch (const InvalidArgument& e) {
    rethrowNamed(e, "base");
  }
  h->guard = BaseGuard(h->base.view);
  return h;
}

template <typename Handle>
std::unique_ptr<Handle> loadHandle(const std::filesystem::path& path, py::handle base,
                                   std::string_view kind, const Context& context) {
  auto h = std::make_unique<Handle>();
  h->base = floatRows(base, "base");
  h->context = context;
  {
    py::gil_scoped_release unlocked; // reading and checking a large file
    h->index = loadIndex(path, h->base.view, contentHash(h->base.view), context);
  }
  if (h->index->kind() != kind)
    throw InvalidArgument(path.string() + " holds a " + std::string(h->index->kind()) +
                          " index, not a " + std::string(kind) + " one");
  h->guard = BaseGuard(h->base.view);
  return h;
}

std::unique_ptr<ExactIndexHandle> exactHandle(py::handle base, const std::string& metric,
                                              const std::string& backend) {
  auto h = std::make_unique<ExactIndexHandle>();
  h->base = floatRows(base, "base");
  h->metric = metricOf(metric);
  h->backend = lowered(backend);
  const Context context = makeContext(backend, py::none(), 0, 0);
  try {
    py::gil_scoped_release unlocked;
    h->index = std::make_unique<ExactKnnIndex>(h->base.view, h->metric, context);
  } catch (const InvalidArgument& e) {
    rethrowNamed(e, "base");
  }
  h->guard = BaseGuard(h->base.view);
  return h;
}

/// A search's threads= (0: the index's own), checked as every call's threads=.
std::optional<int> searchThreads(int threads) {
  (void)makeContext("auto", py::none(), threads, 0); // the range and the machine's limit
  return threads > 0 ? std::optional(threads) : std::nullopt;
}

py::tuple searchIndex(const IndexHandle& h, py::handle queries, int k,
                      const IndexSearchParams& params, const py::object& progress) {
  const FloatRows q = floatRows(queries, "queries");
  h.guard.check();
  KnnResult result;
  try {
    runJob([&](JobControl& job) { result = h.index->search(q.view, k, params, job); }, progress);
  } catch (const InvalidArgument& e) {
    rethrowNamed(e, "base", "queries");
  }
  return idsAndDistances(std::move(result));
}

} // namespace

void bindCore(py::module_& m) {
  m.doc() = "The Nearscape engine on NumPy arrays (see the package nearscape).";
  registerErrors(m);
  m.attr("__version__") = engineVersion();

  const std::string graphDoc =
      std::string("Returns (ids, distances): the kNN graph of the rows of x (n × d; 1-D is one "
                  "column): each row's k nearest "
                  "other rows, nearest first. ids: int32 n × k (−1 pads), distances: float32 "
                  "n × k (L2: Euclidean; cos: 1 − cos; ip: −⟨x, y⟩). method: 'exact' (equal to a "
                  "float64 brute force), 'nndescent', or 'auto' (exact up to n²·d ≈ 12,000²·784 on "
                  "the CPU). x is used in place when it is float32 and C-contiguous; other dtypes "
                  "(float16, float64, uint8, int8) are converted once. Raises ValueError "
                  "(InvalidInputError) for a wrong dtype, shape, NaN/Inf or k, as nearscape-cli "
                  "knn words it.\n\n") +
      kCommonArgs;
  m.def("knn_graph", &knnGraphPy, graphDoc.c_str(), py::arg("x"), py::arg("k"),
        py::arg("metric") = "l2", py::arg("method") = "auto", py::kw_only(),
        py::arg("backend") = "auto", py::arg("memory_budget") = py::none(), py::arg("threads") = 0,
        py::arg("seed") = 0, py::arg("progress") = py::none());

  const std::string searchDoc = std::string("Returns (ids, distances): the exact k nearest rows of "
                                            "base for each row of queries (as knn_graph, the "
                                            "queries not excluded).\n\n") +
                                kCommonArgs;
  m.def("search", &searchPy, searchDoc.c_str(), py::arg("base"), py::arg("queries"), py::arg("k"),
        py::arg("metric") = "l2", py::kw_only(), py::arg("backend") = "auto",
        py::arg("memory_budget") = py::none(), py::arg("threads") = 0,
        py::arg("progress") = py::none());

  m.def(
      "_buffer_address",
      [](py::handle x) {
        const FloatRows rows = floatRows(x, "x");
        return py::make_tuple(reinterpret_cast<std::uintptr_t>(rows.view.data), rows.copied);
      },
      "The address of the float32 rows the engine reads for x, and whether they were converted "
      "(a copy): for tests of the zero-copy promise.",
      py::arg("x"));

  m.def(
      "_blas_kernels", [] { return std::string(blasKernelsName()); },
      "The kernels this process's OpenBLAS runs (\"Haswell\", \"Prescott\", …): nearscape-cli "
      "restarts itself with matching kernels where OpenBLAS does not know the CPU, which a Python "
      "process (numpy loads OpenBLAS first) cannot; tests run the CLI with these to compare "
      "results bit for bit.");

  m.def(
      "device_info",
      [](int ordinal) {
        const DeviceInfo d = queryDevice(ordinal);
        py::dict out;
        out["compiled_with_cuda"] = d.compiledWithCuda;
        out["usable"] = d.usable;
        out["name"] = d.name;
        out["total_memory"] = d.totalMemory;
        out["free_memory"] = d.freeMemory;
        out["compute_capability"] = d.computeCapability;
        out["reason"] = d.reason;
        return out;
      },
      "What the engine finds about CUDA device `ordinal` (never raises).", py::arg("ordinal") = 0);

  py::class_<ExactIndexHandle>(
      m, "ExactIndex",
      "An exact search over a fixed base kept ready for many small searches (the explorer's "
      "click): packed for the GEMM on the CPU, resident on a GPU. It holds nothing beyond the "
      "base, so it has no save/load: build it again. It pickles as its base and metric (built "
      "again where it is unpickled); copy.copy shares the base, copy.deepcopy copies it. A base "
      "overwritten after the build is noticed (64 sampled rows) and searches raise.")
      .def_static(
          "build",
          [](py::handle base, const std::string& metric, const std::string& backend) {
            return exactHandle(base, metric, backend);
          },
          "The exact index over base (kept in place when float32 C-contiguous).", py::arg("base"),
          py::arg("metric") = "l2", py::arg("backend") = "auto")
      .def(
          "search",
          [](const ExactIndexHandle& h, py::handle queries, const PyInteger& kArg,
             const py::object& progress) {
            const int k = intOf(kArg, "k");
            const FloatRows q = floatRows(queries, "queries");
            h.guard.check();
            KnnResult result;
            try {
              runJob([&](JobControl& job) { result = h.index->search(q.view, k, job); }, progress);
            } catch (const InvalidArgument& e) {
              rethrowNamed(e, "base", "queries");
            }
            return idsAndDistances(std::move(result));
          },
          "Returns (ids, distances): the exact k nearest base rows (k ≤ n).", py::arg("queries"),
          py::arg("k"), py::kw_only(), py::arg("progress") = py::none())
      .def_property_readonly("size", [](const ExactIndexHandle& h) { return h.base.view.rows; })
      .def_property_readonly("dim", [](const ExactIndexHandle& h) { return h.base.view.cols; })
      .def_property_readonly(
          "metric", [](const ExactIndexHandle& h) { return std::string(metricName(h.metric)); })
      .def_property_readonly(
          "backend",
          [](const ExactIndexHandle& h) { return std::string(backendName(h.index->backend())); })
      .def("__repr__",
           [](const ExactIndexHandle& h) {
             return "ExactIndex(n=" + std::to_string(h.base.view.rows) +
                    ", dim=" + std::to_string(h.base.view.cols) + ", metric='" +
                    std::string(metricName(h.metric)) + "', backend='" +
                    std::string(backendName(h.index->backend())) + "')";
           })
      // Pickled as (1, base, metric, backend) and built again where it is opened.
      .def(py::pickle(
          [](const ExactIndexHandle& h) {
            h.guard.check();
            return py::make_tuple(1, h.base.owner, std::string(metricName(h.metric)), h.backend);
          },
          [](const py::tuple& state) {
            if (state.size() != 4 || state[0].cast<int>() != 1)
              throw InvalidArgument("not the pickled state of a nearscape ExactIndex");
            return exactHandle(state[1], state[2].cast<std::string>(),
                               state[3].cast<std::string>());
          }));

  py::class_<IndexHandle>(m, "AnnIndex",
                          "An approximate index (GraphIndex or IvfIndex) over a base it keeps "
                          "alive and reads in place; searched in float32, judged by recall. It "
                          "pickles with its base and the bytes save() writes (so it goes to "
                          "joblib's and multiprocessing's workers and searches there the same); "
                          "copy.copy shares the base, copy.deepcopy copies it. A base "
                          "overwritten after the build is noticed (a checksum of 64 sampled rows, "
                          "checked before each search) and searches raise InvalidInputError.")
      .def(
          "save",
          [](const IndexHandle& h, const std::filesystem::path& path) {
            h.guard.check();
            py::gil_scoped_release unlocked;
            // As the CLI's --save-index: never over the file the base was mapped from.
            OutputSet outputs;
            outputs.addInput(h.base.file);
            outputs.addOutput(path);
            h.index->save(path, contentHash(h.base.view));
            outputs.commit();
          },
          "save(path): writes the index (not the base) atomically; load it over the same base "
          "(its content hash is checked). nearscape-cli sweep --load-index reads it too. Raises "
          "ValueError when path is the file of a numpy.memmap base (np.load(..., mmap_mode=...)).",
          py::arg("path"))
      .def_property_readonly("kind",
                             [](const IndexHandle& h) { return std::string(h.index->kind()); })
      .def_property_readonly("size", [](const IndexHandle& h) { return h.index->size(); })
      .def_property_readonly("dim", [](const IndexHandle& h) { return h.index->dim(); })
      .def_property_readonly(
          "bytes", [](const IndexHandle& h) { return h.index->bytes(); },
          "Bytes the index holds beyond the base.")
      .def_property_readonly(
          "metric", [](const IndexHandle& h) { return std::string(metricName(h.index->metric())); })
      .def_property_readonly(
          "backend",
          [](const IndexHandle& h) { return std::string(backendName(h.index->backend())); })
      .def_property_readonly("build_seconds",
                             [](const IndexHandle& h) { return h.index->buildSeconds(); })
      .def_property_readonly(
          "build_params",
          [](const IndexHandle& h) { return parameterDict(h.index->buildValues()); },
          "The build parameters, every one resolved, by name.")
      .def_property_readonly("_base_address", [](const IndexHandle& h) {
        return reinterpret_cast<std::uintptr_t>(h.base.view.data);
      });

  py::class_<GraphIndexHandle, IndexHandle>(
      m, "GraphIndex",
      "The graph index: a fixed-degree search graph pruned from the kNN graph (CAGRA's rank-based "
      "pruning) with an upper layer, searched best-first.")
      .def_static(
          "build",
          [](py::handle base, const std::string& metric, const py::object& degree,
             const py::object& buildK, const std::string& backend, const py::object& memoryBudget,
             int threads, std::uint64_t seed, const py::object& progress) {
            GraphIndexParams p;
            p.degree = intOf(degree, "degree");
            p.buildK = intOf(buildK, "build_k");
            return buildHandle<GraphIndexHandle>(
                base, metric, p, makeContext(backend, memoryBudget, threads, seed), progress);
          },
          (std::string("The graph index over base. degree: edges per node (default min(32, n − "
                       "1)); build_k: neighbours of the "
                       "kNN graph it is pruned from (default min(32, n − 1)). The index keeps "
                       "base (in place when float32 C-contiguous).\n\n") +
           kCommonArgs)
              .c_str(),
          py::arg("base"), py::arg("metric") = "l2", py::arg("degree") = py::none(),
          py::arg("build_k") = py::none(), py::kw_only(), py::arg("backend") = "auto",
          py::arg("memory_budget") = py::none(), py::arg("threads") = 0, py::arg("seed") = 0,
          py::arg("progress") = py::none())
      .def_static(
          "load",
          [](const std::filesystem::path& path, py::handle base, const std::string& backend) {
            return loadHandle<GraphIndexHandle>(path, base, "graph",
                                                makeContext(backend, py::none(), 0, 0));
          },
          "The graph index saved at path over this same base (its content hash is checked).",
          py::arg("path"), py::arg("base"), py::arg("backend") = "auto")
      .def("__repr__", [](const IndexHandle& h) { return indexRepr(h, "GraphIndex"); })
      .def(py::pickle(
          [](const GraphIndexHandle& h) { return indexState(h); },
          [](const py::tuple& state) { return indexFromState<GraphIndexHandle>(state, "graph"); }))
      .def(
          "search",
          [](const GraphIndexHandle& h, py::handle queries, const PyInteger& kArg,
             const py::object& ef, const py::object& degree, const py::object& entries,
             const py::object& upperEf, const py::object& quantized, int threads,
             const py::object& progress) {
            const int k = intOf(kArg, "k");
            GraphSearchParams p;
            p.ef = intOf(ef, "ef");
            p.degree = intOf(degree, "degree");
            p.entries = intOf(entries, "entries");
            p.upperEf = intOf(upperEf, "upper_ef");
            p.quantized = intOf(quantized, "quantized");
            p.threads = searchThreads(threads);
            return searchIndex(h, queries, k, p, progress);
          },
          "Returns (ids, distances), −1 padding rows short of k. ef: candidates kept (default 64, "
          "raised to k); degree: edges followed; entries: entry "
          "points of the upper layer's walk; upper_ef: candidates kept during that walk (CPU "
          "only; default ef); quantized: 1, the CPU's walk scores 8-bit codes of the rows and "
          "re-ranks its pool in float32, 0 float32 rows (default: 1 where the codes are exact, "
          "as for image pixels); threads: CPU threads of this "
          "search (0: the build's threads); the results do not depend on it.",
          py::arg("queries"), py::arg("k"), py::arg("ef") = py::none(),
          py::arg("degree") = py::none(), py::arg("entries") = py::none(), py::kw_only(),
          py::arg("upper_ef") = py::none(), py::arg("quantized") = py::none(),
          py::arg("threads") = 0, py::arg("progress") = py::none());

  py::class_<IvfIndexHandle, IndexHandle>(
      m, "IvfIndex", "IVF-Flat: k-means lists, nprobe of them scanned per query.")
      .def_static(
          "build",
          [](py::handle base, const std::string& metric, const py::object& nlist, int iterations,
             bool kmeansPP, const std::string& backend, const py::object& memoryBudget, int threads,
             std::uint64_t seed, const py::object& progress) {
            IvfFlatParams p;
            p.nlist = intOf(nlist, "nlist");
            p.iterations = iterations;
            p.kmeansPlusPlus = kmeansPP;
            return buildHandle<IvfIndexHandle>(
                base, metric, p, makeContext(backend, memoryBudget, threads, seed), progress);
          },
          (std::string(
               "The IVF-Flat index over base. nlist: k-means lists (default 4·√n); iterations: "
               "Lloyd iterations; kmeans_pp: k-means++ seeding.\n\n") +
           kCommonArgs)
              .c_str(),
          py::arg("base"), py::arg("metric") = "l2", py::arg("nlist") = py::none(),
          py::arg("iterations") = 10, py::arg("kmeans_pp") = false, py::kw_only(),
          py::arg("backend") = "auto", py::arg("memory_budget") = py::none(),
          py::arg("threads") = 0, py::arg("seed") = 0, py::arg("progress") = py::none())
      .def_static(
          "load",
          [](const std::filesystem::path& path, py::handle base, const std::string& backend) {
            return loadHandle<IvfIndexHandle>(path, base, "ivf",
                                              makeContext(backend, py::none(), 0, 0));
          },
          "The IVF index saved at path over this same base (its content hash is checked).",
          py::arg("path"), py::arg("base"), py::arg("backend") = "auto")
      .def("__repr__", [](const IndexHandle& h) { return indexRepr(h, "IvfIndex"); })
      .def(py::pickle(
          [](const IvfIndexHandle& h) { return indexState(h); },
          [](const py::tuple& state) { return indexFromState<IvfIndexHandle>(state, "ivf"); }))
      .def(
          "search",
          [](const IvfIndexHandle& h, py::handle queries, const PyInteger& kArg,
             const py::object& nprobe, int threads, const py::object& progress) {
            const int k = intOf(kArg, "k");
            IvfSearchParams p;
            p.nprobe = intOf(nprobe, "nprobe");
            p.threads = searchThreads(threads);
            return searchIndex(h, queries, k, p, progress);
          },
          "Returns (ids, distances), −1 padding rows short of k. nprobe: lists scanned (default "
          "min(8, nlist)); threads: CPU threads of this search (0: the build's threads); the "
          "results do not depend on it.",
          py::arg("queries"), py::arg("k"), py::arg("nprobe") = py::none(), py::kw_only(),
          py::arg("threads") = 0, py::arg("progress") = py::none());
}

} // namespace nearscape::python

PYBIND11_MODULE(_nearscape, m) {
  nearscape::python::bindCore(m);
  nearscape::python::bindAnalysis(m);
}
