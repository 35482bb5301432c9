#!/usr/bin/python3
"""Peer: exact kNN with Faiss's IndexFlat on the CPU (Debian's python3-faiss).

  faiss_exact.py BASE.npy K [--queries Q.npy] [--metric l2|ip] [--threads N] [--out IDS.npy]

Without --queries: the kNN graph (each row against all, itself dropped). Prints one JSON line:
{"peer": "faiss", "seconds": ..., "rows": ..., "k": ...}; seconds covers add + search only.
"""
import argparse
import json
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('base')
    ap.add_argument('k', type=int)
    ap.add_argument('--queries')
    ap.add_argument('--metric', default='l2', choices=['l2', 'ip'])
    ap.add_argument('--threads', type=int, default=0)
    ap.add_argument('--out')
    a = ap.parse_args()
    import faiss
    if a.threads > 0:
        faiss.omp_set_num_threads(a.threads)
    xb = np.ascontiguousarray(np.load(a.base, mmap_mode='r'), dtype=np.float32)
    xq = xb if a.queries is None else np.ascontiguousarray(np.load(a.queries), dtype=np.float32)
    graph = a.queries is None
    t = time.perf_counter()
    index = faiss.IndexFlatL2(xb.shape[1]) if a.metric == 'l2' else faiss.IndexFlatIP(xb.shape[1])
    index.add(xb)
    _, ids = index.search(xq, a.k + 1 if graph else a.k)
    seconds = time.perf_counter() - t
    if graph:  # drop each row's own id (or the last column when it was not returned)
        keep = ids != np.arange(len(xq))[:, None]
        ids = np.array([row[m][:a.k] for row, m in zip(ids, keep)])
    if a.out:
        np.save(a.out, ids.astype(np.int32))
    print(json.dumps({'peer': 'faiss', 'seconds': seconds, 'rows': int(len(xq)), 'k': a.k,
                      'threads': faiss.omp_get_max_threads()}))


if __name__ == '__main__':
    main()
