"""Results as pandas DataFrames (as_frame=True): one row per edge, item or pair, with the call's
other fields (k, metric, graph, …) in the frame's `attrs`."""

import functools

import numpy as np


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("as_frame=True needs pandas: install python3-pandas (Debian) or "
                          "`pip install pandas`") from None
    return pandas


def graph_frame(ids, distances, row_name):
    """(ids, distances) n × k as rows (row_name, rank, neighbour, distance); −1 pads left out."""
    pandas = _pandas()
    n, k = ids.shape
    kept = ids.reshape(-1) >= 0
    return pandas.DataFrame({
        row_name: np.repeat(np.arange(n, dtype=np.int64), k)[kept],
        "rank": np.tile(np.arange(k, dtype=np.int32), n)[kept],
        "neighbour": ids.reshape(-1)[kept],
        "distance": distances.reshape(-1)[kept],
    })


def _with_attrs(frame, result, arrays):
    frame.attrs.update({key: value for key, value in result.items() if key not in arrays})
    return frame


def outliers_frame(result):
    """Every item's score, one row per item (id, score), highest first."""
    pandas = _pandas()
    scores = result["scores"]
    frame = pandas.DataFrame({"id": np.arange(len(scores), dtype=np.int64), "score": scores})
    frame = frame.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
    return _with_attrs(frame, result, {"scores", "top"})


def compare_frame(result):
    """Every item's overlap, one row per item (id, overlap), most changed first."""
    pandas = _pandas()
    overlap = result["overlap"]
    frame = pandas.DataFrame({"id": np.arange(len(overlap), dtype=np.int64), "overlap": overlap})
    frame = frame.sort_values("overlap", kind="stable").reset_index(drop=True)
    return _with_attrs(frame, result, {"overlap", "most_changed", "histogram"})


def duplicates_frame(result):
    """One row per pair (a, b, distance, group), nearest first."""
    pandas = _pandas()
    pairs = result["pair_ids"]
    frame = pandas.DataFrame({"a": pairs[:, 0], "b": pairs[:, 1],
                              "distance": result["pair_distances"],
                              "group": result["group_of"][pairs[:, 0]] if len(pairs) else
                              np.zeros(0, np.int32)})
    frame = frame.sort_values("distance", kind="stable").reset_index(drop=True)
    return _with_attrs(frame, result, {"pair_ids", "pair_distances", "group_of", "group_list"})


_AS_FRAME_DOC = """

as_frame: False (default) returns the result above; True returns a pandas DataFrame: {}."""


def with_as_frame(function, convert, description):
    """`function` with an as_frame keyword: True converts its result with `convert`."""

    @functools.wraps(function)
    def wrapped(*args, as_frame=False, **kwargs):
        result = function(*args, **kwargs)
        return convert(result) if as_frame else result

    wrapped.__doc__ = (function.__doc__ or "") + _AS_FRAME_DOC.format(description)
    return wrapped
