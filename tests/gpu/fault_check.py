"""Checks one fault-walk run against the CPU reference (tests/gpu/fault-walk.sh).
  fault_check.py KIND REFDIR RUNDIR      exit 0 when the run's result is correct
KIND: dist (exact kNN: per-row sorted distances equal the reference's to float32 rounding, and
the ids agree wherever distances are not tied), recall (NN-Descent: recall@k of --json at least
0.9), sweep (the exact truth the sweep computed gives the best row a recall within 0.05 of the
reference's), layout (finite coordinates keeping at least 80% of the reference's neighbours),
path (the min-max bottleneck equals the reference's: unique whatever path is found)."""
import json, math, os, sys
import numpy as np

def fail(message):
    print(message)
    sys.exit(1)

def load_json(folder):
    with open(os.path.join(folder, 'stdout')) as f:
        return json.load(f)

def dist(ref, run):
    a = np.load(os.path.join(ref, 'dist.npy'))
    b = np.load(os.path.join(run, 'dist.npy'))
    if a.shape != b.shape:
        fail(f'shape {b.shape} != {a.shape}')
    if not np.all(np.isfinite(b)):
        fail('non-finite distances')
    bad = ~np.isclose(np.sort(a, axis=1), np.sort(b, axis=1), rtol=1e-4, atol=1e-5)
    if bad.any():
        fail(f'{int(bad.any(axis=1).sum())} rows with other distances')
    ia = np.load(os.path.join(ref, 'ids.npy'))
    ib = np.load(os.path.join(run, 'ids.npy'))
    overlap = np.mean([len(set(x) & set(y)) / len(x) for x, y in zip(ia, ib)])
    if overlap < 0.999:
        fail(f'ids agree on {overlap:.4f} only')
    print(f'distances equal, ids {overlap:.4f}')

def recall(ref, run):
    r = load_json(run).get('recall')
    if r is None or r < 0.9:
        fail(f'recall {r}')
    print(f'recall {r:.4f}')

def sweep(ref, run):
    best = lambda j: max(row['recall'] for row in j['rows'])
    a, b = best(load_json(ref)), best(load_json(run))
    if not b >= a - 0.05:
        fail(f'best recall {b} vs {a}')
    print(f'best recall {b:.4f} (CPU {a:.4f})')

def layout(ref, run):
    pos = np.load(os.path.join(run, 'map.npy'))
    if not np.all(np.isfinite(pos)):
        fail('non-finite coordinates')
    a = load_json(ref)['neighbours_kept_10']
    b = load_json(run)['neighbours_kept_10']
    if not b >= 0.8 * a:
        fail(f'neighbours kept {b} vs {a}')
    print(f'neighbours kept {b:.3f} (CPU {a:.3f})')

def path(ref, run):
    a, b = load_json(ref), load_json(run)
    if not b['found'] or not math.isclose(a['bottleneck'], b['bottleneck'], rel_tol=1e-5):
        fail(f'bottleneck {b["bottleneck"]} vs {a["bottleneck"]}')
    print(f'bottleneck {b["bottleneck"]:.5f}')

if __name__ == '__main__':
    kind, ref, run = sys.argv[1:4]
    try:
        {'dist': dist, 'recall': recall, 'sweep': sweep, 'layout': layout, 'path': path}[kind](ref, run)
    except (OSError, ValueError, KeyError) as e:
        fail(f'unreadable result: {e}')
