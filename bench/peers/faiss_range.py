#!/usr/bin/python3
"""Peer: exact range search of every row against all with Faiss's IndexFlat on the CPU.

  faiss_range.py BASE.npy RADIUS [--metric l2|ip] [--threads N]

RADIUS is a distance in Nearscape's units (Euclidean for l2, −ip for ip); Faiss takes squared
L2 and a similarity. Prints one JSON line: {"peer": "faiss", "seconds": ..., "pairs": ...};
seconds covers add + range_search; pairs counts unordered pairs of distinct rows.
"""
import argparse
import json
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('base')
    ap.add_argument('radius', type=float)
    ap.add_argument('--metric', default='l2', choices=['l2', 'ip'])
    ap.add_argument('--threads', type=int, default=0)
    a = ap.parse_args()
    import faiss
    if a.threads > 0:
        faiss.omp_set_num_threads(a.threads)
    xb = np.ascontiguousarray(np.load(a.base, mmap_mode='r'), dtype=np.float32)
    t = time.perf_counter()
    if a.metric == 'l2':
        index = faiss.IndexFlatL2(xb.shape[1])
        index.add(xb)
        lims, _, ids = index.range_search(xb, a.radius * a.radius)
    else:  # Faiss keeps similarities above the radius: −ip ≤ r  ⇔  ip ≥ −r
        index = faiss.IndexFlatIP(xb.shape[1])
        index.add(xb)
        lims, _, ids = index.range_search(xb, -a.radius)
    seconds = time.perf_counter() - t
    rows = np.repeat(np.arange(len(xb)), np.diff(lims).astype(np.int64))
    pairs = int(np.count_nonzero(ids > rows))
    print(json.dumps({'peer': 'faiss', 'seconds': seconds, 'pairs': pairs,
                      'threads': faiss.omp_get_max_threads()}))


if __name__ == '__main__':
    main()
