#!/usr/bin/python3
"""Peer: a recall/QPS sweep of hnswlib (HNSW) or Faiss IVF-Flat on the CPU (Debian's packages).

  ann_sweep.py hnsw|ivf BASE.npy QUERIES.npy OUTDIR --k 10 --values 10,20,40 [--threads 2]
               [--M 16] [--efc 200] [--nlist 1024] [--metric l2|ip|cos]

For each search value (hnsw: ef; ivf: nprobe) it times one call over all queries and saves the
ids to OUTDIR/<i>.npy, so that the driver judges recall exactly as it judges ours. Prints one
JSON line: {"peer", "build_s", "rows": [{"value", "seconds", "ids"}]}.
"""
import argparse
import json
import os
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('kind', choices=['hnsw', 'ivf'])
    ap.add_argument('base')
    ap.add_argument('queries')
    ap.add_argument('outdir')
    ap.add_argument('--k', type=int, default=10)
    ap.add_argument('--values', required=True)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--M', type=int, default=16)
    ap.add_argument('--efc', type=int, default=200)
    ap.add_argument('--nlist', type=int, default=1024)
    ap.add_argument('--metric', default='l2')
    a = ap.parse_args()
    x = np.ascontiguousarray(np.load(a.base), dtype=np.float32)
    q = np.ascontiguousarray(np.load(a.queries), dtype=np.float32)
    if a.metric == 'cos':
        x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-30)
        q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-30)
    values = [int(v) for v in a.values.split(',')]
    os.makedirs(a.outdir, exist_ok=True)
    rows = []
    if a.kind == 'hnsw':
        import hnswlib
        index = hnswlib.Index(space='l2' if a.metric == 'l2' else 'ip', dim=x.shape[1])
        t = time.perf_counter()
        index.init_index(max_elements=x.shape[0], ef_construction=a.efc, M=a.M, random_seed=1)
        index.add_items(x, num_threads=a.threads)
        build = time.perf_counter() - t
        for i, ef in enumerate(values):
            index.set_ef(max(ef, a.k))
            index.knn_query(q[:100], k=a.k, num_threads=a.threads)  # warm-up
            t = time.perf_counter()
            ids, _ = index.knn_query(q, k=a.k, num_threads=a.threads)
            seconds = time.perf_counter() - t
            path = os.path.join(a.outdir, f'{i}.npy')
            np.save(path, ids.astype(np.int64))
            rows.append({'value': ef, 'seconds': seconds, 'ids': path})
        peer = f'hnswlib M={a.M} efC={a.efc}'
    else:
        import faiss
        faiss.omp_set_num_threads(a.threads)
        ip = a.metric != 'l2'
        quantizer = faiss.IndexFlatIP(x.shape[1]) if ip else faiss.IndexFlatL2(x.shape[1])
        index = faiss.IndexIVFFlat(quantizer, x.shape[1], a.nlist,
                                   faiss.METRIC_INNER_PRODUCT if ip else faiss.METRIC_L2)
        t = time.perf_counter()
        index.train(x)
        index.add(x)
        build = time.perf_counter() - t
        for i, nprobe in enumerate(values):
            index.nprobe = nprobe
            index.search(q[:100], a.k)  # warm-up
            t = time.perf_counter()
            _, ids = index.search(q, a.k)
            seconds = time.perf_counter() - t
            path = os.path.join(a.outdir, f'{i}.npy')
            np.save(path, ids.astype(np.int64))
            rows.append({'value': nprobe, 'seconds': seconds, 'ids': path})
        peer = f'faiss IVF-Flat nlist={a.nlist}'
    print(json.dumps({'peer': peer, 'build_s': build, 'rows': rows}))


if __name__ == '__main__':
    main()
