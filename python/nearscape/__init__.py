"""Nearscape on NumPy arrays: exact and approximate kNN graphs, ANN indexes and their sweeps,
min-max paths, maps, near-duplicates, outliers and embedding comparisons — and the desktop
explorer opened on an array (show).

Arrays: a float32 C-contiguous array is read in place (no copy); float16, float64, uint8 and
int8 arrays, and non-contiguous ones, are converted to float32 once per call. 1-D arrays are one
column. An array read in place (and the base an index keeps) must not be written to while a
call or an index uses it: the engine reads it with the GIL released. Results are NumPy arrays (ids int32, distances float32).

Long calls release the GIL, take progress=callable(fraction, message) (called on the calling
thread; return False to stop) and stop on Ctrl-C with KeyboardInterrupt.

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
from ._show import NoDisplayError, show

__all__ = [
    "AnnIndex",
    "CancelledError",
    "DeviceError",
    "ExactIndex",
    "GraphIndex",
    "InvalidInputError",
    "IvfIndex",
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
    "search",
    "show",
    "sweep",
]


def sweep(x, index="graph", k=10, queries=None, holdout=None, build=None, grid=None,
          metric="l2", batch=0, timing_runs=3, latency_queries=200, exact=True, *,
          backend="auto", memory_budget=None, threads=0, seed=0, progress=None,
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

    Returns one row per setting: index, build (the resolved build values), the search
    parameters by name, recall (recall@k), qps (at `batch` queries per call, 0: all), p50_ms and
    p99_ms (batch-1 latency over `latency_queries`), build_s, bytes, pareto (on the recall/QPS
    front) — a pandas DataFrame when pandas can be imported (as_frame=None) or as_frame=True,
    else a list of dicts.
    """
    rows = _nearscape._sweep(x, index, k, queries, holdout, build, grid, metric, batch,
                             timing_runs, latency_queries, exact, backend=backend,
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
