"""The Python module against nearscape-cli on the same data: equal results, the same refusals
in the same words, zero copy where promised, Ctrl-C and the GIL."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import nearscape as ns


def test_knn_graph_equals_cli(cli, data, data_file, tmp_path):
    cli("knn", data_file, "--k", 7, "--backend", "cpu", "--out", tmp_path / "ids.npy",
        "--out-dist", tmp_path / "d.npy")
    ids, dist = ns.knn_graph(data, 7, method="exact", backend="cpu")
    assert ids.dtype == np.int32 and dist.dtype == np.float32 and ids.shape == (300, 7)
    assert np.array_equal(ids, np.load(tmp_path / "ids.npy"))
    assert np.array_equal(dist, np.load(tmp_path / "d.npy"))


def test_nndescent_and_cosine_equal_cli(cli, data, data_file, tmp_path):
    cli("knn", data_file, "--k", 5, "--metric", "cos", "--method", "nndescent", "--backend", "cpu",
        "--seed", 3, "--out", tmp_path / "ids.npy", "--out-dist", tmp_path / "d.npy")
    ids, dist = ns.knn_graph(data, 5, "cos", "nndescent", backend="cpu", seed=3)
    assert np.array_equal(ids, np.load(tmp_path / "ids.npy"))
    assert np.array_equal(dist, np.load(tmp_path / "d.npy"))


def test_search_equals_cli(cli, data, data_file, tmp_path):
    queries = data[::10] + np.float32(0.25)
    np.save(tmp_path / "q.npy", queries)
    cli("knn", data_file, "--queries", tmp_path / "q.npy", "--k", 4, "--backend", "cpu",
        "--out", tmp_path / "ids.npy", "--out-dist", tmp_path / "d.npy")
    ids, dist = ns.search(data, queries, 4, backend="cpu")
    assert np.array_equal(ids, np.load(tmp_path / "ids.npy"))
    assert np.array_equal(dist, np.load(tmp_path / "d.npy"))
    exact = ns.ExactIndex.build(data, backend="cpu")
    assert np.array_equal(exact.search(queries, 4)[0], ids)


def test_path_equals_cli(cli, data, data_file):
    got = ns.minimax_path(data, 3, 250, k=6, backend="cpu")
    want = cli.json("path", data_file, "--from", 3, "--to", 250, "--k", 6, "--backend", "cpu")
    for field in ("found", "path", "steps", "bottleneck", "bottleneck_step", "total",
                  "components", "weights", "shortest"):
        assert got[field] == pytest.approx(want[field]), field
    graph = ns.knn_graph(data, 6, method="exact", backend="cpu")
    assert ns.minimax_path(graph, 3, 250)["path"] == want["path"]


@pytest.mark.parametrize("bad, why", [(np.nan, "not finite"), (-2.0, "negative"),
                                      (np.inf, "not finite")])
def test_path_refuses_what_the_cli_refuses(data, bad, why):
    # A given graph is checked as nearscape-cli checks a graph file: a NaN, infinite or negative
    # L2 distance would make a wrong path.
    ids, dist = ns.knn_graph(data, 6, method="exact", backend="cpu")
    dist = dist.copy()
    dist[3, 2] = bad
    with pytest.raises(ValueError, match=f"graph distance .*\\(entry 21\\) is {why}"):
        ns.minimax_path((ids, dist), 3, 250)
    ids = ids.copy()
    ids[5, 1] = 300  # beyond the graph's rows
    with pytest.raises(ValueError, match=r"graph id 300 is out of range \[-1, 300\)"):
        ns.minimax_path((ids, ns.knn_graph(data, 6, method="exact", backend="cpu")[1]), 3, 250)
    # layout's given graph is checked the same way, and must have a row per item.
    with pytest.raises(ValueError, match=f"graph distance .*\\(entry 21\\) is {why}"):
        ns.layout(data, graph=(ns.knn_graph(data, 6, method="exact", backend="cpu")[0], dist),
                  backend="cpu")
    with pytest.raises(ValueError, match=r"the graph has 300 rows but x has 299"):
        ns.layout(data[:299], graph=ns.knn_graph(data, 6, method="exact", backend="cpu"),
                  backend="cpu")
    # Inner-product distances may be negative.
    ids, dist = ns.knn_graph(data, 6, "ip", method="exact", backend="cpu")
    assert ns.minimax_path((ids, dist), 3, 250, metric="ip")["found"]


def test_layout_equals_cli(cli, data, data_file, tmp_path):
    cli("layout", data_file, "--epochs", 30, "--seed", 5, "--backend", "cpu",
        "--out", tmp_path / "map.npy")
    got = ns.layout(data, epochs=30, seed=5, backend="cpu")
    assert got.shape == (300, 2)
    assert np.array_equal(got, np.load(tmp_path / "map.npy"))


def test_outliers_compare_duplicates_equal_cli(cli, data, data_file, tmp_path):
    want = cli.json("outliers", data_file, "--k", 8, "--backend", "cpu",
                    "--out", tmp_path / "lof.npy")
    got = ns.outliers(data, 8, backend="cpu")
    assert [t["id"] for t in got["top"]] == [t["id"] for t in want["top"]]
    assert np.array_equal(got["scores"], np.load(tmp_path / "lof.npy").ravel())

    other = np.ascontiguousarray(data[:, ::-1] * np.float32(2) + data[:, :1])
    np.save(tmp_path / "b.npy", other)
    want = cli.json("compare", data_file, tmp_path / "b.npy", "--k", 6, "--backend", "cpu")
    got = ns.compare(data, other, 6, backend="cpu")
    assert got["histogram"] == want["histogram"]
    assert got["mean_overlap"] == pytest.approx(want["mean_overlap"])

    twins = np.concatenate([data, data[:20] + np.float32(1e-3)])
    np.save(tmp_path / "twins.npy", twins)
    want = cli.json("duplicates", tmp_path / "twins.npy", "--threshold", 0.01)
    got = ns.duplicates(twins, threshold=0.01)
    for field in ("pairs", "groups", "items_in_groups", "redundant_items", "largest_group"):
        assert got[field] == want[field], field
    assert got["pair_ids"].shape == (20, 2)
    assert [list(g) for g in got["group_list"][:10]] == [g["ids"] for g in want["top_groups"]]


def test_sweep_recall_equals_cli(cli, data, data_file):
    options = dict(k=5, holdout=40, grid={"ef": [5, 10, 20]}, timing_runs=1, latency_queries=0)
    rows = ns.sweep(data, backend="cpu", as_frame=False, **options)
    want = cli.json("sweep", data_file, "--k", 5, "--holdout", 40, "--grid", "ef=5,10,20",
                    "--timing-runs", 1, "--latency-queries", 0, "--backend", "cpu")
    assert [r["ef"] for r in rows[:3]] == [5, 10, 20]
    assert [r["recall"] for r in rows[:3]] == [r["recall"] for r in want["rows"]]
    assert rows[-1]["index"] == "exact" and rows[-1]["recall"] == 1.0


def test_sweep_times_each_setting_for_min_timed_s(cli, data, data_file):
    # timing_runs passes at least, and until min_timed_s of searching was timed; rows say how
    # many passes, their time and where they ran, as the CLI's rows do.
    grid = {"ef": [10, 40]}
    quick = ns.sweep(data, k=5, holdout=40, grid=grid, timing_runs=1, min_timed_s=0,
                     latency_queries=0, backend="cpu", as_frame=False)
    assert [r["passes"] for r in quick] == [1, 1, 1]
    long = ns.sweep(data, k=5, holdout=40, grid=grid, timing_runs=1, min_timed_s=0.05,
                    latency_queries=0, backend="cpu", as_frame=False)
    for row in long:
        assert row["timed_s"] >= 0.05 or row["passes"] == 1000, row
        assert row["qps"] > 0
        # the best pass is no slower than the mean of all passes
        assert row["qps"] >= 40 * row["passes"] / row["timed_s"] * 0.999
    assert all(r["where"].startswith("cpu") for r in long), [r["where"] for r in long]
    want = cli.json("sweep", data_file, "--k", 5, "--holdout", 40, "--grid", "ef=10,40",
                    "--timing-runs", 1, "--min-timed-s", 0, "--latency-queries", 0,
                    "--backend", "cpu")
    assert [r["where"] for r in quick[:2]] == [r["where"] for r in want["rows"]]
    assert quick[-1]["where"] == want["exact"]["where"]
    with pytest.raises(ValueError, match=r"min_timed_s must lie in \[0, 60\]"):
        ns.sweep(data, k=5, holdout=40, grid=grid, min_timed_s=-1, backend="cpu")


def test_indexes_save_and_load(data, tmp_path):
    for kind, build, search in ((ns.GraphIndex, {"degree": 16}, {"ef": 32}),
                                (ns.IvfIndex, {"nlist": 8}, {"nprobe": 8})):
        index = kind.build(data, **build, backend="cpu")
        ids, _ = index.search(data[:30], 5, **search)
        index.save(tmp_path / "index.nsi")
        loaded = kind.load(str(tmp_path / "index.nsi"), data, backend="cpu")
        assert np.array_equal(loaded.search(data[:30], 5, **search)[0], ids)
        assert loaded.build_params == index.build_params
        # nprobe = nlist scans every list: exact; the graph finds each query itself first
        assert (ids[:, 0] == np.arange(30)).all()
        with pytest.raises(ValueError, match="other data|content hash|hash"):
            kind.load(str(tmp_path / "index.nsi"), data + np.float32(1), backend="cpu")


def test_graph_search_upper_ef(data):
    # The CPU walk's upper pool: as the CLI's --grid upper_ef; the whole pool is the default's.
    index = ns.GraphIndex.build(data, degree=16, backend="cpu")
    ids, dists = index.search(data[:40], 5, ef=32)
    wide = index.search(data[:40], 5, ef=32, upper_ef=32)
    assert np.array_equal(wide[0], ids) and np.array_equal(wide[1], dists)
    narrow, _ = index.search(data[:40], 5, ef=32, upper_ef=2)
    assert narrow.shape == ids.shape and (narrow[:, 0] == np.arange(40)).all()
    with pytest.raises(ValueError, match="upper_ef"):
        index.search(data[:40], 5, ef=32, upper_ef=0)


def test_save_never_replaces_the_memory_mapped_base(data, tmp_path):
    # The base mapped from base.npy: save() over it (any spelling, a link) is refused and the
    # data stays; a save elsewhere works.
    path = tmp_path / "base.npy"
    np.save(path, data)
    before = path.read_bytes()
    (tmp_path / "link.npy").symlink_to(path)
    for kind, build in ((ns.GraphIndex, {"degree": 8}), (ns.IvfIndex, {"nlist": 4})):
        base = np.load(path, mmap_mode="r")
        for view in (base, base[:], np.asarray(base)):
            index = kind.build(view, **build, backend="cpu")
            for target in (path, str(tmp_path / "." / "base.npy"), tmp_path / "link.npy"):
                with pytest.raises(ValueError, match="refusing to overwrite"):
                    index.save(target)
                assert path.read_bytes() == before
        index.save(tmp_path / "index.nsi")
        assert kind.load(str(tmp_path / "index.nsi"), base, backend="cpu").size == len(data)
        del base


def test_zero_copy_where_promised(data):
    address, copied = ns._buffer_address(data)
    assert address == data.ctypes.data and not copied
    index = ns.GraphIndex.build(data, backend="cpu")
    assert index._base_address == data.ctypes.data  # the index reads the caller's buffer
    for converted in (data.astype(np.float64), np.asfortranarray(data), data[:, ::2],
                      data.astype(np.float16)):
        address, copied = ns._buffer_address(converted)
        assert copied and address != converted.ctypes.data
    # converted exactly as the CLI converts a float64 file: the same graph
    assert np.array_equal(ns.knn_graph(data.astype(np.float64), 4, method="exact")[0],
                          ns.knn_graph(data, 4, method="exact")[0])


def cli_message(cli, tmp_path, array):
    path = tmp_path / "bad.npy"
    np.save(path, array)
    stderr = cli("knn", path, "--k", 3, expect=2).stderr.strip()
    prefix = f"nearscape-cli: bad input: {path}: "
    assert stderr.startswith(prefix), stderr
    return stderr[len(prefix):]


@pytest.mark.parametrize("bad", ["shape", "empty", "nan", "tiny", "huge"])
def test_bad_input_raises_the_clis_message(cli, data, tmp_path, bad):
    # float64 below float32's smallest normal ("tiny") was flushed to zero and one above its
    # largest value ("huge") called a NaN/Inf: both are refused with their reason, as by the CLI.
    array = {"shape": data.reshape(30, 10, 8),
             "empty": np.zeros((0, 8), np.float32), "nan": data.copy(),
             "tiny": data.astype(np.float64) * 1e-50, "huge": data.astype(np.float64)}[bad]
    if bad == "nan":
        array[17, 2] = np.inf
    if bad == "huge":
        array[17, 2] = 1e39
    with pytest.raises(ValueError) as raised:
        ns.knn_graph(array, 3)
    assert isinstance(raised.value, ns.NearscapeError)
    assert str(raised.value) == "x: " + cli_message(cli, tmp_path, array)


def test_other_errors():
    with pytest.raises(ValueError, match="unknown metric"):
        ns.knn_graph(np.ones((5, 2), np.float32), 2, metric="manhattan")
    with pytest.raises(ValueError, match="k"):
        ns.knn_graph(np.eye(5, dtype=np.float32), 5)
    with pytest.raises(ns.DeviceError if not ns.device_info()["usable"] else ValueError):
        ns.knn_graph(np.eye(5, dtype=np.float32), 2, backend="cuda",
                     memory_budget=None if not ns.device_info()["usable"] else -1)


def test_out_of_range_arguments_are_value_errors(data):
    # k = 2**31 was pybind11's TypeError and a grid value "abc" a RuntimeError ("Unable to
    # cast"): both are ValueErrors that name the argument.
    index = ns.GraphIndex.build(data, degree=8, backend="cpu")
    for call in (lambda k: ns.knn_graph(data, k, backend="cpu"),
                 lambda k: ns.search(data, data[:5], k, backend="cpu"),
                 lambda k: index.search(data[:5], k),
                 lambda k: ns.sweep(data, k=k, holdout=40, backend="cpu")):
        with pytest.raises(ValueError, match=r"k = 2147483648 is out of range") as raised:
            call(2**31)
        assert isinstance(raised.value, ns.NearscapeError)
    with pytest.raises(ValueError, match=r"ef = -2147483649 is out of range"):
        index.search(data[:5], 5, ef=-2**31 - 1)
    with pytest.raises(TypeError):  # not an integer at all: still a TypeError
        ns.knn_graph(data, 2.5)
    assert ns.knn_graph(data, np.int64(3), backend="cpu")[0].shape == (300, 3)
    for grid in ({"ef": "abc"}, {"ef": [16, "abc"]}, {"ef": None}):
        with pytest.raises(ValueError, match=r"grid ef: .* is not a number"):
            ns.sweep(data, k=5, holdout=40, grid=grid, backend="cpu")
    with pytest.raises(ValueError, match=r"build degree: 'abc' is not a number"):
        ns.sweep(data, k=5, holdout=40, build={"degree": "abc"}, backend="cpu")
    with pytest.raises(ValueError, match=r"grid must be a dict"):
        ns.sweep(data, k=5, holdout=40, grid=[16, 32], backend="cpu")


def test_sweep_holdout_and_ef_below_k(data):
    options = dict(timing_runs=1, latency_queries=0, exact=False, backend="cpu", as_frame=False)
    with pytest.raises(ValueError, match=r"more than half the data's 300 rows: at most 150"):
        ns.sweep(data, k=5, holdout=151, **options)
    assert len(ns.sweep(data, k=5, grid={"ef": [5]}, **options)) == 1  # default: half of 300
    with pytest.warns(UserWarning, match=r"ef = 2 and 5 are below k = 10"):
        rows = ns.sweep(data, k=10, holdout=40, grid={"ef": [2, 5, 10, 20]}, **options)
    assert [r["ef"] for r in rows] == [10, 20]


@pytest.fixture(scope="module")
def large():
    """40,000 × 128: an exact graph of several seconds on two cores."""
    return np.random.default_rng(1).standard_normal((40000, 128), dtype=np.float32)


@pytest.mark.parametrize("method", ["exact", "nndescent"])
def test_ctrl_c_cancels_within_200_ms(large, method):
    sent = []

    def interrupt():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(0.5, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            ns.knn_graph(large, 10, method=method, backend="cpu")
        stopped = time.monotonic()
    finally:
        timer.cancel()
    assert sent, "the call ended before Ctrl-C"
    print(f"KeyboardInterrupt {1000 * (stopped - sent[0]):.1f} ms after SIGINT")
    assert stopped - sent[0] < 0.2, f"took {stopped - sent[0]:.3f} s"


def test_gil_released_and_progress_stops(large):
    ticks, done = [], threading.Event()

    def count():
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    reports = []

    def progress(fraction, message):
        reports.append((fraction, message))
        return time.monotonic() - started < 0.8  # False: stop

    other = threading.Thread(target=count)
    other.start()
    started = time.monotonic()
    try:
        with pytest.raises(ns.CancelledError):
            ns.knn_graph(large, 10, method="exact", backend="cpu", progress=progress)
    finally:
        ended = time.monotonic()
        done.set()
        other.join()
    inside = [t for t in ticks if started + 0.1 < t < ended - 0.1]
    assert len(inside) > 50, f"the other thread ran {len(inside)} times during the call"
    assert reports and all(0 <= f <= 1 for f, _ in reports)


def test_type_hints_and_docstrings_cover_the_api():
    import ast
    from pathlib import Path

    stub = ast.parse((Path(ns.__file__).parent / "__init__.pyi").read_text())
    hinted = {node.name for node in stub.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    assert set(ns.__all__) <= hinted, set(ns.__all__) - hinted
    for name in ns.__all__:
        assert getattr(ns, name).__doc__, name


def test_sweep_as_a_data_frame(data):
    pandas = pytest.importorskip("pandas")
    frame = ns.sweep(data, k=5, holdout=40, grid={"ef": [5, 10]}, timing_runs=1,
                     latency_queries=0, backend="cpu")
    assert isinstance(frame, pandas.DataFrame) and list(frame["index"]) == ["graph"] * 2 + ["exact"]
