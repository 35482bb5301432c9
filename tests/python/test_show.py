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
    assert process.data_path.name == "three clusters.npy"
    assert np.array_equal(np.load(process.data_path), x.astype(np.float32))
    header = (process.data_path.parent / "three clusters.meta.tsv").read_text().splitlines()
    assert header[0] == "label\tnote\timage" and len(header) == 438
    assert header[1] == f"cluster 0\ta b\t{picture}"
    assert process.wait(timeout=240) == 0, process.log
    assert re.search(r"saved .*shot\.png \(437 items on the map\)", process.log), process.log
    assert shot.stat().st_size > 0
    assert not process.folder.exists()  # the copy of the data is removed once the explorer ends


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


def test_an_unreachable_display_raises_qts_reason_and_writes_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("DISPLAY", ":none")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(ns.NoDisplayError, match=r"no window can open on display ':none': .*"
                                                r"(could not connect to display|platform plugin)"):
        ns.show(np.ones((4, 2), np.float32))
    assert not (tmp_path / "nearscape").exists() or not any((tmp_path / "nearscape").rglob("*"))


def test_a_missing_explorer_raises_before_writing(monkeypatch, tmp_path):
    monkeypatch.setenv("DISPLAY", os.environ.get("DISPLAY", ":0"))
    monkeypatch.setenv("NEARSCAPE_GUI", str(tmp_path / "no-such-nearscape"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for inline in (False, True):
        with pytest.raises(ns.NearscapeError, match="was not found"):
            ns.show(np.ones((4, 2), np.float32), inline=inline)
    assert not (tmp_path / "nearscape").exists()


def test_stale_copies_are_removed_by_the_next_call(monkeypatch, tmp_path):
    if not os.environ.get("DISPLAY"):
        pytest.skip("needs a display (ctest runs it under xvfb-run)")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    stale = tmp_path / "nearscape" / "python" / "20200101-000000-1-0"
    stale.mkdir(parents=True)
    (stale / "array.npy").write_bytes(b"old")
    (stale / "pid").write_text("999999999")  # no such process
    process = ns.show(np.random.default_rng(0).standard_normal((50, 4)), backend="cpu",
                      screenshot=tmp_path / "shot.png")
    assert not stale.exists()
    assert process.wait(timeout=240) == 0, process.log
    assert not any((tmp_path / "nearscape" / "python").iterdir())


def test_inline_returns_a_png_jupyter_shows_without_a_display(monkeypatch, tmp_path):
    import shutil

    if not shutil.which("xvfb-run"):
        pytest.skip("needs xvfb-run")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((3, 8)) * 6)[rng.integers(0, 3, 300)] + rng.standard_normal((300, 8))
    picture = ns.show(x, metadata={"label": [i % 3 for i in range(300)]}, inline=True,
                      backend="cpu")
    png = picture._repr_png_()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    picture.save(tmp_path / "map.png")
    assert (tmp_path / "map.png").read_bytes() == png
    assert not any((tmp_path / "nearscape" / "python").iterdir())  # nothing left behind
