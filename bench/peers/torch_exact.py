#!/usr/bin/env python3
"""Peer: exact kNN as a PyTorch user writes it on the GPU (torch.mm + torch.topk in query tiles).

  torch_exact.py BASE.npy K [--queries Q.npy] [--precision fp32|tf32|fp16] [--repeats R]

Without --queries: the kNN graph (itself dropped). Prints one JSON line with the median seconds of
R timed runs after a warm-up (data already on the GPU; synchronised before reading the clock).
"""
import argparse
import json
import time

import numpy as np
import torch


def run(xb, xq, k, graph, precision, tile=8192):
    torch.backends.cuda.matmul.allow_tf32 = precision == 'tf32'
    dtype = torch.float16 if precision == 'fp16' else torch.float32
    b = xb.to(dtype)
    bn = (xb * xb).sum(1)
    out = []
    for s in range(0, xq.shape[0], tile):
        q = xq[s:s + tile]
        d = (q * q).sum(1)[:, None] + bn[None, :] - 2 * torch.mm(q.to(dtype), b.t()).float()
        if graph:
            d[torch.arange(q.shape[0]), torch.arange(s, s + q.shape[0])] = float('inf')
        out.append(torch.topk(d, k, dim=1, largest=False).indices)
        del d  # before the next tile's distances: two tiles would not fit where one just does
    return torch.cat(out)


def fits(xb, xq, k, precision, tile):
    """Whether two tiles of `tile` queries run (the warm-up); out of memory frees what it took."""
    try:
        run(xb, xq[:2 * tile], k, False, precision, tile)
        return True
    except torch.cuda.OutOfMemoryError:
        pass
    torch.cuda.empty_cache()  # outside the handler: its traceback no longer holds the tensors
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('base')
    ap.add_argument('k', type=int)
    ap.add_argument('--queries')
    ap.add_argument('--precision', default='fp32', choices=['fp32', 'tf32', 'fp16'])
    ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--out')
    a = ap.parse_args()
    xb = torch.from_numpy(np.load(a.base)).cuda()
    xq = xb if a.queries is None else torch.from_numpy(np.load(a.queries)).cuda()
    graph = a.queries is None
    # Warm-up, and the query tile a user would find: the largest that fits the GPU (8192 × 1M
    # float32 distances and their temporaries outgrow an 80 GB card).
    tile = 8192
    while not fits(xb, xq, a.k, a.precision, tile):
        if tile <= 256:
            raise SystemExit('torch_exact.py: not even 256 queries a tile fit the GPU')
        tile //= 2
    times = []
    for _ in range(a.repeats):
        torch.cuda.synchronize()
        t = time.perf_counter()
        ids = run(xb, xq, a.k, graph, a.precision, tile)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    if a.out:
        np.save(a.out, ids.cpu().numpy().astype(np.int32))
    print(json.dumps({'peer': 'torch-' + a.precision, 'seconds': float(np.median(times)),
                      'rows': int(xq.shape[0]), 'k': a.k, 'tile': tile,
                      'device': torch.cuda.get_device_name()}))


if __name__ == '__main__':
    main()
