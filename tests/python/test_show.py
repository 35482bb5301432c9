"""nearscape.show under Xvfb: the explorer opens on the array, with every item on the map."""

import os
import re

import numpy as np
import pytest

import nearscape as ns


def test_show_opens_the_explorer_with_every_point(tmp_path, monkeypatch):
    if not os.environ.get("DISPLAY"):
        pytest.skip("needs a display (ctest runs it under xvfb-run)")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((3, 16)) * 5)[rng.integers(0, 3, 437)] + rng.standard_normal((437, 16))
    labels = {"label": [f"cluster {i % 3}" for i in range(437)], "note": ["a\tb"] * 437}
    picture = tmp_path / "dot.pgm"  # a 2 × 2 grey image, one path per item
    picture.write_bytes(b"P5 2 2 255\n" + bytes([0, 255, 255, 0]))
    shot = tmp_path / "shot.png"
    process = ns.show(x, metadata=labels, images=[picture] * 437, title="three clusters",
                      screenshot=shot, backend="cpu")
    assert process.wait(timeout=240) == 0, process.log_path.read_text()
    log = process.log_path.read_text()
    assert re.search(r"saved .*shot\.png \(437 items on the map\)", log), log
    assert shot.stat().st_size > 0
    assert process.data_path.name == "three clusters.npy"
    assert np.array_equal(np.load(process.data_path), x.astype(np.float32))
    header = (process.data_path.parent / "three clusters.meta.tsv").read_text().splitlines()
    assert header[0] == "label\tnote\timage" and len(header) == 438
    assert header[1] == f"cluster 0\ta b\t{picture}"


def test_show_without_a_display_says_so(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(ns.NoDisplayError, match="no display"):
        ns.show(np.ones((4, 2), np.float32))


def test_show_refuses_bad_input_before_writing(monkeypatch, tmp_path):
    monkeypatch.setenv("DISPLAY", ":none")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(ValueError, match="unsupported dtype"):
        ns.show(np.ones((4, 2), np.complex64))
    with pytest.raises(ValueError, match="3 values for 4 items"):
        ns.show(np.ones((4, 2), np.float32), metadata={"label": [1, 2, 3]})
    assert not (tmp_path / "nearscape").exists() or not any((tmp_path / "nearscape").rglob("*.npy"))
