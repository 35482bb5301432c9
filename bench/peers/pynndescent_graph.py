#!/usr/bin/python3
"""Peer: pynndescent's kNN graph (Debian's python3-pynndescent), defaults as a user runs them.

  pynndescent_graph.py DATA.npy K OUT_IDS.npy

Asks for K + 1 neighbours (pynndescent lists each item itself) and drops the item itself.
A first small build compiles numba's code before the clock starts. Prints one JSON line.
"""
import json
import sys
import time

import numpy as np


def main():
    data, k, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    from pynndescent import NNDescent
    x = np.load(data)
    NNDescent(x[:2000], n_neighbors=k + 1).neighbor_graph  # JIT warm-up
    t = time.perf_counter()
    ids, _ = NNDescent(x, n_neighbors=k + 1).neighbor_graph
    seconds = time.perf_counter() - t
    keep = ids != np.arange(len(x))[:, None]
    ids = np.array([row[m][:k] for row, m in zip(ids, keep)], dtype=np.int32)
    np.save(out, ids)
    print(json.dumps({'peer': 'pynndescent', 'seconds': seconds}))


if __name__ == '__main__':
    main()
