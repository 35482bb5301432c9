"""Nearscape on NumPy arrays: exact and approximate kNN graphs, ANN indexes and their sweeps,
min-max paths, maps, near-duplicates, outliers and embedding comparisons — the desktop explorer
opened on an array (show, or show(inline=True) for a picture) and maps drawn with matplotlib
(plot_map).

Arrays: a float32 C-contiguous array is read in place (no copy). Other arrays are converted to
float32 once per call: float16 and float64 (refused where float32 cannot hold a value, as
nearscape-cli refuses such a file), integers and bool (as Faiss, hnswlib and pynndescent take
them; refused where a value is not exactly a float32, i.e. some integers beyond ±2^24), either
byte order, and non-contiguous ones. 1-D arrays are one column. scipy.sparse input is refused:
densify it first (x.toarray()). An array read in place must not be written to while a call uses
it (the engine reads it with the GIL released); an index keeps its base in place too, and a
base overwritten later is noticed (64 sampled rows) and its searches raise. Results are NumPy
arrays (ids int32, distances float32), or pandas DataFrames with as_frame=True.

Names are accepted in any case: metric "l2" (or "euclidean"), "ip" ("dot", "inner_product"),
"cos" ("cosine", "angular"); backend "auto", "cpu", "cuda" ("gpu"); method "auto", "exact",
"nndescent".

Long calls release the GIL, take progress=callable(fraction, message) (called on the calling
thread; fractions never decrease, and a call that succeeds ends with 1.0; return False to stop)
and stop on Ctrl-C with KeyboardInterrupt. A seed gives the same result whatever the number of
threads (maps included).

Indexes pickle (with their base: joblib, multiprocessing) and copy; their repr names kind,
size, metric and parameters.

Errors: NearscapeError is the base; bad input raises InvalidInputError, a ValueError, with
nearscape-cli's words; OutOfMemoryError is a MemoryError; NearscapeIOError an OSError.
"""
from ._nearscape import (
    AnnIndex,
    CancelledError,
    DeviceError,
    ExactIndex,
    GraphIndex,
    InvalidInputError,
    IvfIndex,
    NearscapeError,
    NearscapeIOError,
    OutOfMemoryError,
    UnsupportedError,
    __version__,
    _blas_kernels,
    _buffer_address,
    compare,
    device_info,
    duplicates,
    knn_graph,
    layout,
    minimax_path,
    outliers,
    search,
)
from . import _nearscape
from ._frames import (compare_frame as _compare_frame, duplicates_frame as _duplicates_frame,
                      graph_frame as _graph_frame, outliers_frame as _outliers_frame,
                      with_as_frame as _with_as_frame)
from ._plot import plot_map
from ._show import ExplorerProcess, MapPicture, NoDisplayError, show

knn_graph = _with_as_frame(knn_graph, lambda r: _graph_frame(*r, "item"),
                           "one row per edge (item, rank, neighbour, distance)")
search = _with_as_frame(search, lambda r: _graph_frame(*r, "query"),
                        "one row per result (query, rank, neighbour, distance)")
outliers = _with_as_frame(outliers, _outliers_frame,
                          "one row per item (id, score), highest first; the other fields in "
                          "its attrs")
compare = _with_as_frame(compare, _compare_frame,
                         "one row per item (id, overlap), most changed first; the other fields "
                         "in its attrs")
duplicates = _with_as_frame(duplicates, _duplicates_frame,
                            "one row per pair (a, b, distance, group), nearest first; the other "
                            "fields in its attrs")

__all__ = [
    "AnnIndex",
    "CancelledError",
    "DeviceError",
    "ExactIndex",
    "ExplorerProcess",
    "GraphIndex",
    "InvalidInputError",
    "IvfIndex",
    "MapPicture",
    "NearscapeError",
    "NearscapeIOError",
    "NoDisplayError",
    "OutOfMemoryError",
    "UnsupportedError",
    "compare",
    "device_info",
    "duplicates",
    "knn_graph",
    "layout",
    "minimax_path",
    "outliers",
    "plot_map",
    "search",
    "show",
    "sweep",
]


def sweep(x, index="graph", k=10, queries=None, holdout=None, build=None, grid=None,
          metric="l2", batch=0, timing_runs=3, latency_queries=200, exact=True, *,
          min_timed_s=0.2, backend="auto", memory_budget=None, threads=0, seed=0, progress=None,
          as_frame=None):
    """Build an ANN index on x and sweep its search parameters, as `nearscape-cli sweep` does.

    Queries are `queries`, or `holdout` rows of x held out (seeded by `seed`) and left out of the
    index — at most half of x (None: 1000, or half of x when that is fewer); their exact k
    nearest neighbours are the truth. index: "graph" or "ivf"; build: its
    build parameters by name ({"degree": 48}; graph: degree, build_k; ivf: nlist, iterations,
    kmeans_pp); grid: search values to sweep by name ({"ef": [16, 32, 64]}; graph: ef, degree,
    entries; ivf: nprobe), every combination; default: the index's accuracy knob over its range.
    An ef below k searches as ef = k: such settings are measured once, as ef = k (a warning says
    so).
    exact: also time the exact search on the same queries (a row with index "exact").
    Each setting's queries are searched at least `timing_runs` times and until `min_timed_s`
    seconds of searching were timed (at most 1,000 passes); its QPS is the best pass's.

    Returns one row per setting: index, build (the resolved build values), the search
    parameters by name, recall (recall@k), qps (at `batch` queries per call, 0: all), p50_ms and
    p99_ms (batch-1 latency over `latency_queries`), build_s, bytes, pareto (on the recall/QPS
    front), passes and timed_s (the timed passes and their total seconds), where (the backend
    that searched, and for the exact row its method, e.g. "cuda, STEP") — a pandas DataFrame when pandas can be imported (as_frame=None) or as_frame=True,
    else a list of dicts.
    """
    rows = _nearscape._sweep(x, index, k, queries, holdout, build, grid, metric, batch,
                             timing_runs, latency_queries, exact, min_timed_s=min_timed_s,
                             backend=backend,
                             memory_budget=memory_budget, threads=threads, seed=seed,
                             progress=progress)
    if as_frame is False:
        return rows
    try:
        import pandas
    except ImportError:
        if as_frame:
            raise
        return rows
    return pandas.DataFrame(rows)
