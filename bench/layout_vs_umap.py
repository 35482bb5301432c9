#!/usr/bin/python3
"""`nearscape-cli layout --json` against umap-learn, interleaved, each map judged the same way.

  layout_vs_umap.py DATA CLI [--npy DATA.npy] [--rounds 2] [--before CLI_DIR] [--check 2000]

Each round runs our command (its whole wall time: reading the data, the graph, the map and the
sampled trust estimate), then, with --before DIR (a nearscape-cli built from another commit,
whose engine library lies beside it), that one, then umap-learn (bench/peers/umap_layout.py: its
fit_transform, after a JIT warm-up). Every map is judged by the same exact check, computed here
and not by either tool: for a seeded sample of `--check` rows, the share of each row's exact 10
nearest neighbours (original space, L2) among its 10 nearest on the map. Prints one JSON line per
run and a summary with medians and ratios.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

PEERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'peers')


def exact_neighbours(x, rows, k):
    """The k nearest other rows of x for each of `rows` (float64 norms, chunked products)."""
    sq = np.einsum('ij,ij->i', x, x, dtype=np.float64)
    out = np.empty((len(rows), k), dtype=np.int64)
    for s in range(0, len(rows), 250):
        r = rows[s:s + 250]
        d = sq[r][:, None] + sq[None, :] - 2.0 * (x[r].astype(np.float64) @ x.T.astype(np.float64))
        d[np.arange(len(r)), r] = np.inf
        part = np.argpartition(d, k, axis=1)[:, :k]
        order = np.take_along_axis(d, part, axis=1).argsort(axis=1)
        out[s:s + 250] = np.take_along_axis(part, order, axis=1)
    return out


def kept(truth, y, rows, k):
    """Mean share of truth's k neighbours among each sampled row's k nearest on map y."""
    y = y.astype(np.float64)
    shares = []
    for i, r in enumerate(rows):
        d = ((y - y[r]) ** 2).sum(axis=1)
        d[r] = np.inf
        near = np.argpartition(d, k)[:k]
        shares.append(len(set(near.tolist()) & set(truth[i].tolist())) / k)
    return float(np.mean(shares))


def run_ours(cli, data, out, env=None):
    t = time.perf_counter()
    p = subprocess.run([cli, 'layout', data, '--json', '--backend', 'cpu', '--out', out],
                       capture_output=True, text=True, env=env, check=True)
    wall = time.perf_counter() - t
    j = json.loads(p.stdout)
    return wall, j


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('data', help='what our CLI reads (e.g. the fashion-mnist IDX folder)')
    ap.add_argument('cli', help='nearscape-cli')
    ap.add_argument('--npy', required=True, help='the same data as float32 .npy (for umap-learn)')
    ap.add_argument('--before', help='folder of an earlier nearscape-cli and its engine library')
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--check', type=int, default=2000)
    ap.add_argument('--python', default='/usr/bin/python3')
    a = ap.parse_args()

    x = np.load(a.npy).astype(np.float32)
    rng = np.random.default_rng(1234)
    rows = np.sort(rng.choice(x.shape[0], size=min(a.check, x.shape[0]), replace=False))
    truth = exact_neighbours(x, rows, 10)
    tmp = tempfile.mkdtemp(prefix='nearscape-layout-vs-umap-')
    runs = {'ours': [], 'before': [], 'umap-learn': []}
    for r in range(a.rounds):
        tools = ['ours'] + (['before'] if a.before else []) + ['umap-learn']
        for tool in tools:
            out = os.path.join(tmp, tool + '.npy')
            load = os.getloadavg()[0]
            if tool == 'umap-learn':
                p = subprocess.run([a.python, os.path.join(PEERS, 'umap_layout.py'), a.npy, out],
                                   capture_output=True, text=True, check=True)
                seconds = json.loads(p.stdout.strip().splitlines()[-1])['seconds']
                extra = {}
            else:
                cli, env = a.cli, None
                if tool == 'before':
                    cli = os.path.join(a.before, 'nearscape-cli')
                    env = dict(os.environ, LD_LIBRARY_PATH=a.before)
                seconds, j = run_ours(cli, a.data, out, env)
                extra = {'timings': j['timings'], 'trust_mean': j['trust']['mean'],
                         'trust_se': j['trust']['standard_error'],
                         'neighbours_kept_10': j['neighbours_kept_10']}
            k = kept(truth, np.load(out), rows, 10)
            rec = {'round': r, 'tool': tool, 'seconds': seconds, 'kept10_exact_sample': k,
                   'load_before': load, **extra}
            runs[tool].append(rec)
            print(json.dumps(rec), flush=True)
    med = {t: statistics.median(v['seconds'] for v in runs[t]) for t in runs if runs[t]}
    kep = {t: statistics.median(v['kept10_exact_sample'] for v in runs[t]) for t in runs if runs[t]}
    summary = {'median_s': med, 'median_kept10': kep,
               'ratio_ours_to_umap': med['ours'] / med['umap-learn']}
    if a.before:
        summary['ratio_before_to_umap'] = med['before'] / med['umap-learn']
    print(json.dumps({'summary': summary}), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
