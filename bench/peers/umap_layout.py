#!/usr/bin/python3
"""Peer: umap-learn's 2D/3D map (Debian's umap-learn), timed as a user runs it (its kNN included).

  umap_layout.py DATA.npy OUT.npy [--dim 2] [--neighbors 15] [--seed S]

Prints one JSON line: {"peer": "umap-learn", "seconds": ...}. A first small fit compiles
umap-learn's numba code so that the timed run does not pay for the JIT.
"""
import argparse
import json
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('data')
    ap.add_argument('out')
    ap.add_argument('--dim', type=int, default=2)
    ap.add_argument('--neighbors', type=int, default=15)
    ap.add_argument('--seed', type=int)
    a = ap.parse_args()
    import umap
    x = np.load(a.data)
    umap.UMAP(n_neighbors=a.neighbors, n_components=a.dim).fit_transform(x[:2000])  # JIT warm-up
    t = time.perf_counter()
    y = umap.UMAP(n_neighbors=a.neighbors, n_components=a.dim, random_state=a.seed).fit_transform(x)
    seconds = time.perf_counter() - t
    np.save(a.out, y.astype(np.float32))
    print(json.dumps({'peer': 'umap-learn', 'seconds': seconds}))


if __name__ == '__main__':
    main()
