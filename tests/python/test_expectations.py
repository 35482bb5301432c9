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
