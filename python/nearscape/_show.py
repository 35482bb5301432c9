"""nearscape.show: the desktop explorer opened on an array from a script or a notebook."""

import itertools
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np

from ._nearscape import NearscapeError, _buffer_address

_counter = itertools.count()


class NoDisplayError(NearscapeError):
    """show() was called where no window can open (no DISPLAY or WAYLAND_DISPLAY)."""


def _cache_folder():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "nearscape" / "python"


def gui_program():
    """The explorer's executable: $NEARSCAPE_GUI, else the build tree's (this module in
    <build>/python/nearscape, the program in <build>/app/nearscape), else `nearscape` on PATH."""
    given = os.environ.get("NEARSCAPE_GUI")
    if given:
        return given
    built = Path(__file__).resolve().parents[2] / "app" / "nearscape"
    if built.is_file() and os.access(built, os.X_OK):
        return str(built)
    found = shutil.which("nearscape")
    if not found:
        raise NearscapeError("the explorer `nearscape` was not found: install the nearscape "
                             "package, put it on PATH or set NEARSCAPE_GUI")
    return found


def _cell(value):
    return re.sub(r"[\t\r\n]", " ", "" if value is None else str(value))


def _columns(metadata, images, n):
    """Metadata as (name, values) pairs: a pandas DataFrame, a dict of columns or None, plus an
    `image` column of paths."""
    columns = []
    if metadata is not None:
        if hasattr(metadata, "columns") and hasattr(metadata, "__getitem__"):  # a DataFrame
            columns = [(str(name), list(metadata[name])) for name in metadata.columns]
        elif isinstance(metadata, dict):
            columns = [(str(name), list(values)) for name, values in metadata.items()]
        else:
            raise ValueError("metadata must be a pandas DataFrame or a dict of columns")
    if images is not None:
        columns.append(("image", [os.path.abspath(os.fspath(p)) for p in images]))
    for name, values in columns:
        if len(values) != n:
            raise ValueError(f"metadata column '{name}' has {len(values)} values for {n} items")
    return columns


def _write_atomically(path, write):
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as f:
        write(f)
    os.replace(partial, path)


def show(x, metadata=None, images=None, title=None, *, screenshot=None, backend=None):
    """Open the desktop explorer on the rows of x and return at once.

    x: n × d vectors (any dtype the engine reads; saved as float32). metadata: a pandas
    DataFrame or a dict of columns, n values each (a column named label or class colours the
    map; text, title or name is the hover text). images: n image paths, shown in the hover card
    and the strip. title: the window's title (and the file's name). screenshot: save the window
    to this PNG once the map is refined, then quit (as `nearscape --screenshot`).

    The data is written as .npy with a metadata TSV into the cache folder
    ($XDG_CACHE_HOME/nearscape/python, ~/.cache/nearscape/python) and `nearscape` is started on
    it, detached; its output goes to nearscape.log beside the data. The explorer is found through
    $NEARSCAPE_GUI, the build tree, or PATH. Returns the subprocess.Popen (its `log_path` and
    `data_path` attributes name the files). Raises NoDisplayError where no window can open,
    ValueError for data the engine refuses (nearscape-cli's words).
    """
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise NoDisplayError("no display: nearscape.show opens a desktop window, and neither "
                             "DISPLAY nor WAYLAND_DISPLAY is set here (a remote notebook?). Save "
                             "the array with numpy.save and open it where a desktop is, or use "
                             "the functions that need no window (knn_graph, layout, …)")
    _buffer_address(x)  # the CLI's checks of dtype and shape, before anything is written
    rows = np.ascontiguousarray(np.asarray(x), dtype=np.float32)
    if rows.ndim == 1:
        rows = rows.reshape(-1, 1)
    columns = _columns(metadata, images, rows.shape[0])

    stem = re.sub(r"[^\w.\- ]+", "_", title).strip() if title else "array"
    folder = _cache_folder() / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{next(_counter)}"
    folder.mkdir(parents=True, exist_ok=True)
    data_path = folder / f"{stem or 'array'}.npy"
    _write_atomically(data_path, lambda f: np.save(f, rows))
    command = [gui_program(), str(data_path)]
    if columns:
        meta_path = folder / f"{data_path.stem}.meta.tsv"
        lines = []
        if len(columns) > 1:  # one column has no header row (TensorBoard's rule)
            lines.append("\t".join(_cell(name) for name, _ in columns))
        for i in range(rows.shape[0]):
            lines.append("\t".join(_cell(values[i]) for _, values in columns))
        text = "\n".join(lines) + "\n"
        _write_atomically(meta_path, lambda f: f.write(text.encode("utf-8")))
        command += ["--meta", str(meta_path)]
    if backend:
        command += ["--backend", backend]
    if screenshot:
        command += ["--screenshot", os.path.abspath(os.fspath(screenshot))]
    log_path = folder / "nearscape.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                   start_new_session=True)  # Ctrl-C in the notebook spares it
    process.log_path = log_path
    process.data_path = data_path
    return process
