"""nearscape.show: the desktop explorer opened on an array from a script or a notebook."""

import itertools
import os
import re
import shutil
import subprocess
import threading
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


class ExplorerProcess(subprocess.Popen):
    """The explorer started by show(): a subprocess.Popen whose files (the data's copy, its
    metadata, the log) are removed once it has ended. `log` holds what it printed (kept after
    the files are gone); `data_path` and `log_path` name the files while it runs."""

    def __init__(self, command, folder, **kwargs):
        self.folder = folder
        self.data_path = None
        self.log_path = folder / "nearscape.log"
        self._log = None
        self._cleanup_lock = threading.Lock()
        with open(self.log_path, "wb") as log:
            super().__init__(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                             start_new_session=True, **kwargs)  # Ctrl-C in the notebook spares it
        (folder / "pid").write_text(str(self.pid))
        # Removes the files when the explorer ends, even if nobody waits for it.
        threading.Thread(target=self.wait, daemon=True).start()

    @property
    def log(self):
        """What the explorer printed so far (all of it once it has ended)."""
        if self._log is not None:
            return self._log
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return self._log or ""

    def wait(self, timeout=None):
        code = super().wait(timeout)
        self._clean_up()
        return code

    def poll(self):
        code = super().poll()
        if code is not None:
            self._clean_up()
        return code

    def _clean_up(self):
        with self._cleanup_lock:
            if self._log is not None:
                return
            try:
                self._log = self.log_path.read_text(errors="replace")
            except OSError:
                self._log = ""
            shutil.rmtree(self.folder, ignore_errors=True)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale_folders():
    """Removes the folders of earlier calls whose explorer has ended (a notebook that exited
    before its explorer leaves one behind), and of calls that never started one."""
    cache = _cache_folder()
    if not cache.is_dir():
        return
    for folder in cache.iterdir():
        pid_file = folder / "pid"
        try:
            if pid_file.is_file():
                if _alive(int(pid_file.read_text().strip() or "0")):
                    continue
            elif time.time() - folder.stat().st_mtime < 3600:  # a call writing now, maybe
                continue
        except (OSError, ValueError):
            continue
        shutil.rmtree(folder, ignore_errors=True)


def _qt_reason(text):
    """Qt's own words from a failed start, without its boilerplate."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("QStandardPaths:")]
    return " ".join(lines[:4]) or "no reason given"


def _check_display(program, environment=None):
    """Raises NoDisplayError with Qt's reason where the explorer could not open a window."""
    try:
        done = subprocess.run([program, "--check-display"], capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL, env=environment)
    except FileNotFoundError:
        raise NearscapeError(f"the explorer {program} was not found: install the nearscape "
                             "package, put it on PATH or set NEARSCAPE_GUI") from None
    except subprocess.TimeoutExpired:
        raise NoDisplayError(f"the explorer {program} did not answer whether it can open a "
                             "window within 60 s") from None
    if done.returncode != 0:
        display = os.environ.get("WAYLAND_DISPLAY") or os.environ.get("DISPLAY")
        raise NoDisplayError(f"no window can open on display {display!r}: "
                             f"{_qt_reason(done.stderr + done.stdout)}. Check DISPLAY (or ssh "
                             "-X), or use show(inline=True) for a picture without a window")


class MapPicture:
    """A PNG of the explorer's view: Jupyter shows it (_repr_png_); `png` holds its bytes and
    save(path) writes them."""

    def __init__(self, png):
        self.png = png

    def _repr_png_(self):
        return self.png

    def save(self, path):
        Path(path).write_bytes(self.png)

    def __repr__(self):
        return f"<MapPicture: PNG of {len(self.png)} bytes>"


def _prepare(x, metadata, images, title):
    """Checks everything, writes nothing: the rows as float32 and the metadata columns."""
    _buffer_address(x)  # the module's checks of dtype and shape, before anything is written
    rows = np.ascontiguousarray(np.asarray(x), dtype=np.float32)
    if rows.ndim == 1:
        rows = rows.reshape(-1, 1)
    return rows, _columns(metadata, images, rows.shape[0])


def _write(rows, columns, title):
    """Writes the data and its metadata into a new cache folder; returns (folder, arguments)."""
    _remove_stale_folders()
    stem = re.sub(r"[^\w.\- ]+", "_", title).strip() if title else "array"
    folder = _cache_folder() / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{next(_counter)}"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        data_path = folder / f"{stem or 'array'}.npy"
        _write_atomically(data_path, lambda f: np.save(f, rows))
        arguments = [str(data_path)]
        if columns:
            meta_path = folder / f"{data_path.stem}.meta.tsv"
            lines = []
            if len(columns) > 1:  # one column has no header row (TensorBoard's rule)
                lines.append("\t".join(_cell(name) for name, _ in columns))
            for i in range(rows.shape[0]):
                lines.append("\t".join(_cell(values[i]) for _, values in columns))
            text = "\n".join(lines) + "\n"
            _write_atomically(meta_path, lambda f: f.write(text.encode("utf-8")))
            arguments += ["--meta", str(meta_path)]
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder, data_path, arguments


def _virtual_display_needed(program):
    """Whether show(inline=True) must run the explorer under xvfb-run: where no display is set
    or the one set refuses a window. Raises NoDisplayError where neither can serve."""
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        try:
            _check_display(program)
            return False
        except NoDisplayError:
            if not shutil.which("xvfb-run"):
                raise
            return True
    if not shutil.which("xvfb-run"):
        raise NoDisplayError("show(inline=True) draws the map with OpenGL, which needs a display: "
                             "set DISPLAY, or install xvfb (xvfb-run) for a virtual one")
    return True


def _inline_picture(program, folder, arguments, backend, timeout, virtual):
    """Runs the explorer until its view is refined, saves it, and returns the PNG."""
    shot = folder / "view.png"
    command = [program, *arguments, "--screenshot", str(shot)]
    if backend:
        command += ["--backend", backend]
    if virtual:
        command = [shutil.which("xvfb-run"), "-a", "-s", "-screen 0 1600x1000x24", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0 or not shot.is_file():
        raise NearscapeError(f"the explorer could not draw the map (exit {done.returncode}): "
                             f"{_qt_reason(done.stderr + done.stdout)}")
    return MapPicture(shot.read_bytes())


def show(x, metadata=None, images=None, title=None, *, screenshot=None, backend=None,
         inline=False, timeout=600):
    """Open the desktop explorer on the rows of x and return at once — or, with inline=True,
    return a picture of its map (for a notebook: Jupyter shows it).

    x: n × d vectors (any dtype the engine reads; saved as float32). metadata: a pandas
    DataFrame or a dict of columns, n values each (a column named label or class colours the
    map; text, title or name is the hover text). images: n image paths, shown in the hover card
    and the strip. title: the window's title (and the file's name). screenshot: save the window
    to this PNG once the map is refined, then quit (as `nearscape --screenshot`).

    inline=True: the explorer draws its view once the map is refined, saves it and quits; the
    call waits for it (at most `timeout` seconds) and returns a MapPicture (its `png` bytes;
    Jupyter displays it). Without a display it runs under a virtual one (xvfb-run), so it works
    on a remote notebook server too.

    The data is written as .npy with a metadata TSV into a new folder of the cache
    ($XDG_CACHE_HOME/nearscape/python, ~/.cache/nearscape/python) and `nearscape` is started on
    it, detached; the folder is removed when the explorer ends (or, if this process ended
    first, by the next show()). The explorer is found through $NEARSCAPE_GUI, the build tree,
    or PATH. Returns an ExplorerProcess (a subprocess.Popen; `log` holds the explorer's output).
    Nothing is written when the call fails: it raises NoDisplayError where no window can open
    (with Qt's reason), NearscapeError where the explorer is not found, ValueError for data the
    engine refuses (nearscape-cli's words).
    """
    rows, columns = _prepare(x, metadata, images, title)
    program = gui_program()
    if inline:
        if not os.path.exists(program) and not shutil.which(program):
            raise NearscapeError(f"the explorer {program} was not found: install the nearscape "
                                 "package, put it on PATH or set NEARSCAPE_GUI")
        virtual = _virtual_display_needed(program)
        folder, _, arguments = _write(rows, columns, title)
        try:
            return _inline_picture(program, folder, arguments, backend, timeout, virtual)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise NoDisplayError("no display: nearscape.show opens a desktop window, and neither "
                             "DISPLAY nor WAYLAND_DISPLAY is set here (a remote notebook?). Use "
                             "show(inline=True) for a picture of the map, or the functions that "
                             "need no window (knn_graph, layout, plot_map, …)")
    _check_display(program)
    folder, data_path, arguments = _write(rows, columns, title)
    command = [program, *arguments]
    if backend:
        command += ["--backend", backend]
    if screenshot:
        command += ["--screenshot", os.path.abspath(os.fspath(screenshot))]
    try:
        process = ExplorerProcess(command, folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    process.data_path = data_path
    return process
