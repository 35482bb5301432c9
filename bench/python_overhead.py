#!/usr/bin/env python3
"""The Python module's overhead against nearscape-cli on the same work, in one run.

For an exact kNN graph and an index sweep of the same seeded data, interleaved (cli, python,
cli, python…), medians:
  cli:    the process's wall time (start, .npy read, the work, the JSON; nothing written)
          and, for the graphs, the work alone as the CLI times it (knn_s)
  python: the call's wall time from Python (the array in memory: no file read)
A third pair, a tiny graph, shows the fixed cost of a call (the worker thread, the conversions).

  PYTHONPATH=build/python NEARSCAPE_CLI=build/app/nearscape-cli \
      python3 bench/python_overhead.py [--rows 20000] [--dim 128] [--repeats 5]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np

import nearscape as ns


def cli_run(cli, args):
    started = time.perf_counter()
    done = subprocess.run([cli, *args, "--json"], capture_output=True, text=True, check=True)
    return time.perf_counter() - started, json.loads(done.stdout)


def timed(call):
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    cli = os.environ.get("NEARSCAPE_CLI", "nearscape-cli")

    rng = np.random.default_rng(0)
    centres = rng.standard_normal((50, args.dim)).astype(np.float32) * 3
    x = centres[rng.integers(0, 50, args.rows)] + rng.standard_normal((args.rows, args.dim),
                                                                      dtype=np.float32)
    tiny = np.ascontiguousarray(x[:1000, :16])
    work = tempfile.mkdtemp(prefix="nearscape-py-bench-")
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "tiny.npy"), tiny)
    k = str(args.k)
    sweep_args = ["--k", k, "--holdout", "1000", "--grid", "ef=10,20,40,80", "--timing-runs", "2",
                  "--latency-queries", "100"]

    rows = {}
    for name in ("graph", "sweep", "tiny"):
        rows[name] = {"cli_wall": [], "cli_work": [], "python": []}
    for _ in range(args.repeats):
        wall, out = cli_run(cli, ["knn", os.path.join(work, "x.npy"), "--k", k, "--method",
                                  "exact", "--backend", "cpu"])
        rows["graph"]["cli_wall"].append(wall)
        rows["graph"]["cli_work"].append(out["timings"]["knn_s"])
        wall, (ids, _) = timed(lambda: ns.knn_graph(x, args.k, method="exact", backend="cpu"))
        rows["graph"]["python"].append(wall)

        wall, out = cli_run(cli, ["sweep", os.path.join(work, "x.npy"), *sweep_args,
                                  "--backend", "cpu"])
        rows["sweep"]["cli_wall"].append(wall)
        cli_recall = [r["recall"] for r in out["rows"]]
        wall, got = timed(lambda: ns.sweep(x, k=args.k, holdout=1000,
                                           grid={"ef": [10, 20, 40, 80]}, timing_runs=2,
                                           latency_queries=100, backend="cpu", as_frame=False))
        rows["sweep"]["python"].append(wall)
        assert [r["recall"] for r in got[:4]] == cli_recall, "the sweeps disagree"

        wall, out = cli_run(cli, ["knn", os.path.join(work, "tiny.npy"), "--k", k, "--method",
                                  "exact", "--backend", "cpu"])
        rows["tiny"]["cli_wall"].append(wall)
        rows["tiny"]["cli_work"].append(out["timings"]["knn_s"])
        wall, _ = timed(lambda: ns.knn_graph(tiny, args.k, method="exact", backend="cpu"))
        rows["tiny"]["python"].append(wall)

    print(f"{args.rows} × {args.dim} float32, k = {args.k}, {args.repeats} repeats, medians (s)")
    print(f"{'work':<8}{'cli process':>14}{'cli work':>12}{'python call':>14}"
          f"{'python / cli process':>22}{'python − cli work':>20}")
    figures = {}
    for name, r in rows.items():
        m = {key: statistics.median(v) if v else None for key, v in r.items()}
        figures[name] = m
        work_s = f"{m['cli_work']:>12.4f}" if m["cli_work"] is not None else f"{'—':>12}"
        extra = (f"{m['python'] - m['cli_work']:>20.4f}" if m["cli_work"] is not None
                 else f"{'—':>20}")
        print(f"{name:<8}{m['cli_wall']:>14.4f}{work_s}{m['python']:>14.4f}"
              f"{m['python'] / m['cli_wall']:>22.3f}{extra}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": args.rows, "dim": args.dim, "k": args.k, "figures": figures}, f,
                      indent=2)


if __name__ == "__main__":
    main()
