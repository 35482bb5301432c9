"""What Faiss, hnswlib, pynndescent and scikit-learn users expect of the module (issue 44): maps that
depend on the seed alone, progress that ends at 1.0, the dtypes they pass, plain messages."""

import numpy as np
import pytest

import nearscape as ns


def pixels(n, d, seed=5):
    """Image-like rows (integers / 255) in five clusters: the data whose map moved with the
    thread count (OpenBLAS's threaded GEMM rounds by its split)."""
    rng = np.random.default_rng(seed)
    centres = rng.integers(0, 256, (5, d))
    x = np.clip(centres[rng.integers(0, 5, n)] + rng.integers(-40, 40, (n, d)), 0, 255) / 255
    return x.astype(np.float32)


# 1. The map depends on the seed alone.

@pytest.mark.parametrize("n, d", [(500, 300), (300, 784)])
def test_layout_is_the_same_whatever_the_thread_count(n, d):
    x = pixels(n, d)
    one = ns.layout(x, seed=1, threads=1, epochs=50, backend="cpu")
    two = ns.layout(x, seed=1, threads=2, epochs=50, backend="cpu")
    assert np.array_equal(one, two), f"max |a - b| = {np.abs(one - two).max()}"
    assert not np.array_equal(one, ns.layout(x, seed=2, threads=1, epochs=50, backend="cpu"))


def test_cli_layout_is_the_same_whatever_the_thread_count(cli, tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, pixels(300, 784))
    maps = []
    for threads in (1, 2):
        out = tmp_path / f"map{threads}.npy"
        cli("layout", path, "--threads", threads, "--seed", 3, "--epochs", 40, "--backend", "cpu",
            "--out", out)
        maps.append(np.load(out))
    assert np.array_equal(*maps)


# 2. Progress: monotone, ending at 1.0, for every call that takes it.

def progress_calls(data):
    graph = ns.knn_graph(data, 5, backend="cpu")
    index = ns.GraphIndex.build(data, degree=8, backend="cpu")
    ivf = ns.IvfIndex.build(data, nlist=8, backend="cpu")
    exact = ns.ExactIndex.build(data, backend="cpu")
    return {
        "knn_graph exact": lambda p: ns.knn_graph(data, 5, method="exact", progress=p),
        "knn_graph nndescent": lambda p: ns.knn_graph(data, 5, method="nndescent", progress=p),
        "search": lambda p: ns.search(data, data[:20], 5, progress=p),
        "GraphIndex.build": lambda p: ns.GraphIndex.build(data, degree=8, progress=p),
        "IvfIndex.build": lambda p: ns.IvfIndex.build(data, nlist=8, progress=p),
        "GraphIndex.search": lambda p: index.search(data[:20], 5, progress=p),
        "IvfIndex.search": lambda p: ivf.search(data[:20], 5, progress=p),
        "ExactIndex.search": lambda p: exact.search(data[:20], 5, progress=p),
        "minimax_path": lambda p: ns.minimax_path(data, 0, 299, progress=p),
        "minimax_path graph": lambda p: ns.minimax_path(graph, 0, 299, progress=p),
        "layout": lambda p: ns.layout(data, epochs=20, progress=p),
        "outliers": lambda p: ns.outliers(data, progress=p),
        "compare": lambda p: ns.compare(data, data[:, ::-1], progress=p),
        "duplicates threshold": lambda p: ns.duplicates(data, threshold=1.0, progress=p),
        "duplicates quantile": lambda p: ns.duplicates(data, quantile=0.1, progress=p),
        "sweep": lambda p: ns.sweep(data, k=5, holdout=40, grid={"ef": [8, 16]}, timing_runs=1,
                                    latency_queries=0, progress=p, as_frame=False),
    }


def test_progress_is_monotone_and_ends_at_one(data):
    for name, call in progress_calls(data).items():
        seen = []
        call(lambda fraction, message: seen.append((fraction, message)))
        fractions = [f for f, _ in seen]
        assert fractions, f"{name}: no progress at all"
        assert all(0 <= f <= 1 for f in fractions), (name, fractions)
        assert all(a <= b for a, b in zip(fractions, fractions[1:])), (name, fractions)
        assert fractions[-1] == 1.0, (name, fractions)
        assert all(isinstance(m, str) for _, m in seen), name


def test_nndescent_progress_reaches_one_on_larger_data():
    x = np.random.default_rng(4).standard_normal((20000, 16), dtype=np.float32)
    seen = []
    ns.knn_graph(x, 10, method="nndescent", backend="cpu", progress=lambda f, m: seen.append(f))
    assert seen[-1] == 1.0 and all(a <= b for a, b in zip(seen, seen[1:])), seen


# 3. The dtypes other libraries accept.

@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.uint16, np.uint32, np.uint64,
                                   np.uint8, np.int8, bool])
def test_integer_and_bool_arrays_are_converted_exactly(data, dtype):
    values = (data > 0) if dtype is bool else np.abs(np.round(data * 10)).astype(dtype)
    expected = ns.knn_graph(values.astype(np.float32), 4, method="exact", backend="cpu")
    got = ns.knn_graph(values, 4, method="exact", backend="cpu")
    assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])
    address, copied = ns._buffer_address(values)
    assert copied


def test_integers_float32_cannot_hold_are_refused():
    x = np.arange(12, dtype=np.int64).reshape(6, 2)
    x[4, 1] = 2**24 + 1
    with pytest.raises(ns.InvalidInputError,
                       match=r"x: the value 16777217 at row 4, column 1 \(int64\) cannot be "
                             r"represented exactly as float32"):
        ns.knn_graph(x, 2)
    x[4, 1] = 2**40  # a power of two: exact
    assert ns.knn_graph(x, 2, backend="cpu")[0].shape == (6, 2)


@pytest.mark.parametrize("dtype", [">f4", ">f8", ">i4", ">f2"])
def test_big_endian_arrays_are_byteswapped(data, dtype):
    values = (np.round(data * 8) if "i" in dtype else data).astype(dtype)
    assert values.dtype.byteorder == ">"
    expected = ns.knn_graph(values.astype(np.float32), 4, method="exact", backend="cpu")
    got = ns.knn_graph(values, 4, method="exact", backend="cpu")
    assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])


def test_sparse_input_says_how_to_densify():
    class csr_matrix:  # what scipy.sparse hands over, without needing scipy here
        shape = (4, 3)
    csr_matrix.__module__ = "scipy.sparse._csr"
    with pytest.raises(ns.InvalidInputError,
                       match=r"x: sparse input \(csr_matrix\) is not supported: densify it "
                             r"first, e\.g\. x\.toarray\(\)"):
        ns.knn_graph(csr_matrix(), 2)
    sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(ns.InvalidInputError, match=r"base: sparse input .* base\.toarray\(\)"):
        ns.GraphIndex.build(sparse.random(50, 8, density=0.3, format="csr"))


def test_unsupported_dtypes_name_what_is_supported(data):
    with pytest.raises(ns.InvalidInputError, match=r"x: unsupported dtype '<c8' for vectors "
                                                   r"\(supported: .*integers and bool"):
        ns.knn_graph(data.astype(np.complex64), 3)


# 5. Plain messages, names in any case.

def test_messages_carry_no_source_tags(data):
    one_row = np.ones((1, 4), np.float32)
    calls = [lambda: ns.knn_graph(data, 300, backend="cpu"),
             lambda: ns.knn_graph(one_row, 1, method="exact", backend="cpu"),
             lambda: ns.search(data, data[:, :3], 2, backend="cpu"),
             lambda: ns.outliers(data, score="median"),
             lambda: ns.layout(data, dim=4),
             lambda: ns.duplicates(data),
             lambda: ns.GraphIndex.build(data, degree=1000, backend="cpu")]
    for call in calls:
        with pytest.raises(ns.NearscapeError) as raised:
            call()
        message = str(raised.value)
        assert "[" not in message or ".cpp:" not in message, message
        assert not message.rstrip().endswith("]") or "[1, " in message, message


def test_a_graph_of_one_row_says_why_k_has_no_range():
    for call in (lambda: ns.knn_graph(np.ones((1, 4), np.float32), 1, method="exact"),
                 lambda: ns.outliers(np.ones((1, 4), np.float32), k=1)):
        with pytest.raises(ns.InvalidInputError) as raised:
            call()
        assert "[1, 0]" not in str(raised.value)
        assert "k must be at least 1 and at most n − 1 = 0: the data has 1 row" in str(raised.value)


def test_names_are_accepted_in_any_case(data):
    expected = ns.knn_graph(data, 4, metric="cos", method="exact", backend="cpu")
    got = ns.knn_graph(data, 4, metric="Cosine", method="EXACT", backend="CPU")
    assert np.array_equal(expected[0], got[0])
    assert ns.GraphIndex.build(data, metric="L2", backend="Cpu").metric == "l2"
    assert ns.outliers(data, score="LOF", backend="cpu")["score"] == "lof"
    rows = ns.sweep(data, index="IVF", k=5, holdout=40, grid={"nprobe": [2]}, timing_runs=1,
                    latency_queries=0, exact=False, backend="cpu", as_frame=False)
    assert rows[0]["index"] == "ivf"
    with pytest.raises(ns.InvalidInputError, match=r"unknown backend 'tpu' \(auto, cpu, or cuda, "
                                                   r"also called gpu; any case\)"):
        ns.knn_graph(data, 4, backend="tpu")
    with pytest.raises(ns.InvalidInputError, match=r"unknown metric 'manhattan' \(l2 or euclidean"):
        ns.knn_graph(data, 4, metric="manhattan")


# 4. Indexes pickle, copy and say what they are.

def build_indexes(data):
    return [ns.GraphIndex.build(data, degree=8, build_k=12, backend="cpu", seed=3),
            ns.IvfIndex.build(data, nlist=8, backend="cpu"),
            ns.ExactIndex.build(data, backend="cpu")]


def test_indexes_pickle_and_copy_to_identical_results(data):
    import copy
    import pickle

    queries = data[::7] + 0.01
    for index in build_indexes(data):
        expected = index.search(queries, 5)
        for other in (pickle.loads(pickle.dumps(index)), copy.deepcopy(index), copy.copy(index)):
            assert type(other) is type(index) and repr(other) == repr(index)
            got = other.search(queries, 5)
            assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])
    graph = build_indexes(data)[0]
    assert copy.copy(graph)._base_address == graph._base_address  # the base shared
    assert copy.deepcopy(graph)._base_address != graph._base_address  # the base copied


def test_a_pickled_index_searches_the_same_in_another_process(data, tmp_path):
    import pickle
    import subprocess
    import sys

    index = ns.GraphIndex.build(data, degree=8, backend="cpu")
    (tmp_path / "index.pickle").write_bytes(pickle.dumps(index))
    np.save(tmp_path / "queries.npy", data[:9])
    script = ("import pickle, sys, numpy as np; "
              "index = pickle.load(open(sys.argv[1], 'rb')); "
              "ids, dist = index.search(np.load(sys.argv[2]), 4); "
              "np.save(sys.argv[3], ids); print(repr(index))")
    done = subprocess.run([sys.executable, "-c", script, tmp_path / "index.pickle",
                           tmp_path / "queries.npy", tmp_path / "ids.npy"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == repr(index)
    assert np.array_equal(np.load(tmp_path / "ids.npy"), index.search(data[:9], 4)[0])


def test_index_repr_names_kind_size_metric_and_parameters(data):
    graph, ivf, exact = build_indexes(data)
    assert repr(graph).startswith("GraphIndex(n=300, dim=8, metric='l2', ")
    assert "degree=8" in repr(graph) and "build_k=12" in repr(graph)
    assert repr(graph).endswith("backend='cpu')")
    assert repr(ivf).startswith("IvfIndex(n=300, dim=8, metric='l2', ") and "nlist=8" in repr(ivf)
    assert repr(exact) == "ExactIndex(n=300, dim=8, metric='l2', backend='cpu')"


# 7. A base overwritten under an index is noticed.

def test_an_overwritten_base_raises_instead_of_wrong_results(data):
    for index_of in (lambda b: ns.GraphIndex.build(b, degree=8, backend="cpu"),
                     lambda b: ns.IvfIndex.build(b, nlist=8, backend="cpu"),
                     lambda b: ns.ExactIndex.build(b, backend="cpu")):
        base = data.copy()
        index = index_of(base)
        index.search(base[:3], 2)
        base *= 2  # in place: the index reads this very buffer
        with pytest.raises(ns.InvalidInputError, match="base array was changed after the index"):
            index.search(data[:3], 2)
        base /= 2  # the same bits again: searches work again
        assert index.search(base[:3], 2)[0].shape == (3, 2)


# 8. For notebooks: plot_map, DataFrames, threads on searches.

def test_plot_map_draws_every_point_coloured_by_label(data, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    xy = ns.layout(data, epochs=30, backend="cpu")
    labels = np.array([f"c{i % 3}" for i in range(300)])
    ax = ns.plot_map(xy, labels=labels, title="three")
    drawn = np.concatenate([c.get_offsets() for c in ax.collections])
    assert drawn.shape == (300, 2)
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == ["c0", "c1", "c2"]
    ax.figure.savefig(tmp_path / "map.png")
    assert (tmp_path / "map.png").read_bytes().startswith(b"\x89PNG")
    ax = ns.plot_map(xy, labels=np.linspace(0, 1, 300))  # numbers: a colour bar
    assert len(ax.figure.axes) == 2
    with pytest.raises(ValueError, match="xy: expected n × 2 positions"):
        ns.plot_map(data)


def test_plot_map_without_matplotlib_says_how_to_install(monkeypatch, data):
    import builtins

    real_import = builtins.__import__

    def without_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_matplotlib)
    with pytest.raises(ImportError, match="plot_map needs matplotlib: install python3-matplotlib"):
        ns.plot_map(data[:, :2])


def test_graphs_and_scores_as_data_frames(data):
    pandas = pytest.importorskip("pandas")
    ids, distances = ns.knn_graph(data, 4, backend="cpu")
    frame = ns.knn_graph(data, 4, backend="cpu", as_frame=True)
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame.columns) == ["item", "rank", "neighbour", "distance"] and len(frame) == 1200
    assert np.array_equal(frame["neighbour"].to_numpy().reshape(300, 4), ids)
    assert np.array_equal(frame["distance"].to_numpy().reshape(300, 4), distances)
    found = ns.search(data, data[:5], 3, backend="cpu", as_frame=True)
    assert list(found.columns) == ["query", "rank", "neighbour", "distance"] and len(found) == 15
    scores = ns.outliers(data, backend="cpu", as_frame=True)
    plain = ns.outliers(data, backend="cpu")
    assert list(scores.columns) == ["id", "score"] and len(scores) == 300
    assert scores["id"][0] == plain["top"][0]["id"] and scores.attrs["score"] == "lof"
    overlap = ns.compare(data, data[:, ::-1] * 2, backend="cpu", as_frame=True)
    assert list(overlap.columns) == ["id", "overlap"] and overlap.attrs["k"] == 10
    pairs = ns.duplicates(np.vstack([data, data[:7]]), threshold=0.0, backend="cpu",
                          as_frame=True)
    assert list(pairs.columns) == ["a", "b", "distance", "group"] and len(pairs) == 7
    assert isinstance(ns.knn_graph(data, 4, backend="cpu"), tuple)  # the default is unchanged


def test_index_searches_take_threads(data):
    for index, search in ((ns.GraphIndex.build(data, degree=8, backend="cpu"), {"ef": 32}),
                          (ns.IvfIndex.build(data, nlist=8, backend="cpu"), {"nprobe": 3})):
        one = index.search(data[:40], 5, threads=1, **search)
        two = index.search(data[:40], 5, threads=2, **search)
        assert np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])
        with pytest.raises(ValueError, match="threads must lie in"):
            index.search(data[:4], 5, threads=-1)
