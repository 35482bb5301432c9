#!/usr/bin/python3
"""Fashion-mnist as .npy for the CPU graph search against hnswlib (docs/benchmarks.md, sessions
25, 26 and 28): Debian's 60,000 training images as the base, its 10,000 t10k images as queries,
and each query's exact 10 nearest by a float64 brute force.

  fashion_split.py OUTDIR      writes OUTDIR/base.npy, q.npy (float32) and truth.npy (int32)
"""
import gzip
import os
import sys

import numpy as np

IDX = "/usr/share/datasets/fashion-mnist/"


def images(name):
    with gzip.open(IDX + name, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    rows = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)
    return rows.reshape(shape[0], -1).astype(np.float32)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    base, queries = images("train-images-idx3-ubyte.gz"), images("t10k-images-idx3-ubyte.gz")
    np.save(os.path.join(out, "base.npy"), base)
    np.save(os.path.join(out, "q.npy"), queries)
    b, q = base.astype(np.float64), queries.astype(np.float64)
    norms = (b * b).sum(1)
    truth = np.empty((len(q), 10), dtype=np.int32)
    for s in range(0, len(q), 1000):
        d = norms[None, :] - 2 * q[s:s + 1000] @ b.T  # + ‖q‖², the same for the whole row
        part = np.argpartition(d, 10, axis=1)[:, :10]
        order = np.argsort(np.take_along_axis(d, part, 1), axis=1, kind="stable")
        truth[s:s + 1000] = np.take_along_axis(part, order, 1)
    np.save(os.path.join(out, "truth.npy"), truth)


if __name__ == "__main__":
    main()
