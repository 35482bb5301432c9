#!/usr/bin/env python3
"""Peer: one query against a base already on the GPU, as a PyTorch user writes it:
squared L2 distances with one mat-vec, then torch.topk.

  torch_topk.py BASE.npy QUERIES.npy K [--repeats R]

Prints one JSON line: the median seconds per query over the queries (synchronised per query).
"""
import argparse
import json
import time

import numpy as np
import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('base')
    ap.add_argument('queries')
    ap.add_argument('k', type=int)
    a = ap.parse_args()
    xb = torch.from_numpy(np.load(a.base)).cuda()
    xq = torch.from_numpy(np.load(a.queries)).cuda()
    bn = (xb * xb).sum(1)
    def one(q):
        d = bn - 2 * torch.mv(xb, q)
        return torch.topk(d, a.k, largest=False).indices
    one(xq[0])  # warm-up
    times = []
    for q in xq:
        torch.cuda.synchronize()
        t = time.perf_counter()
        one(q)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    print(json.dumps({'peer': 'torch', 'seconds': float(np.median(times)), 'k': a.k}))


if __name__ == '__main__':
    main()
