"""Shared fixtures: the CLI to compare with, and small seeded data."""

import json
import os
import shutil
import subprocess

import nearscape as ns
import numpy as np
import pytest


@pytest.fixture(scope="session")
def cli():
    """Runs nearscape-cli (from $NEARSCAPE_CLI, as ctest sets it, else PATH)."""
    program = os.environ.get("NEARSCAPE_CLI") or shutil.which("nearscape-cli")
    if not program:
        pytest.skip("nearscape-cli not found: set NEARSCAPE_CLI")

    # The CLI runs the BLAS kernels this process runs, so that its results equal the module's
    # bit for bit (on a CPU OpenBLAS does not know, the CLI would otherwise pick faster ones).
    env = dict(os.environ, OPENBLAS_CORETYPE=ns._blas_kernels())

    def run(*args, expect=0):
        done = subprocess.run([program, *map(str, args)], capture_output=True, text=True,
                              timeout=120, env=env)
        assert done.returncode == expect, done.stderr
        return done

    def run_json(*args):
        return json.loads(run(*args, "--json").stdout)

    run.json = run_json
    return run


@pytest.fixture(scope="session")
def data():
    """300 × 8 float32: three seeded clusters."""
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((3, 8)) * 4
    x = centres[rng.integers(0, 3, 300)] + rng.standard_normal((300, 8))
    return np.ascontiguousarray(x, dtype=np.float32)


@pytest.fixture
def data_file(tmp_path, data):
    path = tmp_path / "x.npy"
    np.save(path, data)
    return path
