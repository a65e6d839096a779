"""How the harness reads and writes the files of a run folder, safely.

Writing: every file written whole (``manifest.json``, the analysis files, the run index) goes
to a temporary file in the same folder first and is then renamed over its name
(:func:`write_atomic`, :func:`staged`), so a reader never sees half a file, a full disk or an
interrupt leaves the previous version readable, and a symbolic link at the name is replaced,
never written through. ``samples.jsonl``, appended while a run goes on, is opened with
``O_NOFOLLOW`` (:func:`open_append`). Before anything is written, :func:`check_outputs` refuses a
folder where a name an output takes is a link, a folder, a FIFO or a device: one line, which the
command line turns into exit 2.

Reading: :func:`read_regular` opens without blocking and refuses anything that is not a regular
file (a FIFO would hang the reader, a folder raise), in one line.

Only the standard library (like harness/store/runfolder.py).
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator


class RunFolderError(ValueError):
    """A folder that is not a readable run folder, or one the harness will not write into; the
    message (one line) names it and what is wrong. (Also importable from harness.store.runfolder.)"""

#: Files the analysis writes into a run folder, in the order they are written (harness/pipeline.py).
RUN_FILES = ("summary.csv", "steps.csv", "memory.csv", "buffers.csv", "stats.json", "differences.csv", "stats.csv",
             "memory_series.csv", "cycles.csv", "junit.xml", "summary.md", "report.html")
#: Files the analysis writes for a comparison.
COMPARE_FILES = ("compare.json", "stats.json", "differences.csv", "junit.xml", "summary.md", "compare.html")
#: What measuring writes (RESULTS.md).
MEASURED_FILES = ("manifest.json", "samples.jsonl")
#: Every name a run writes in its folder.
RUN_OUTPUTS = MEASURED_FILES + RUN_FILES


class DiskFull(OSError):
    """A write failed for want of space (ENOSPC, EDQUOT, EFBIG); ``str()`` is one line naming
    the file: ``<path>: no space left on device``."""

    def __init__(self, path: Path | str, cause: OSError | None = None):
        why = "no space left on device"
        if cause is not None and cause.errno == errno.EDQUOT:
            why += " (disk quota exceeded)"
        elif cause is not None and cause.errno == errno.EFBIG:
            why += " (file size limit reached)"
        super().__init__(errno.ENOSPC, why, str(path))
        self.path = Path(path)

    def __str__(self) -> str:
        return f"{self.path}: {self.strerror}"


#: errno values that mean the disk (or the quota, or the file size limit) is full.
FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def as_disk_full(exc: BaseException, path: Path | str) -> BaseException:
    """``exc`` as a :class:`DiskFull` naming ``path`` when it is one of :data:`FULL`, else as is."""
    if isinstance(exc, OSError) and not isinstance(exc, DiskFull) and exc.errno in FULL:
        return DiskFull(path, exc)
    return exc


def what_is(path: Path) -> str | None:
    """None when ``path`` is absent or a regular file (not a link); else what it is, in words
    (``a symbolic link to X``, ``a folder``, ``a FIFO``, ``a device``, ``a socket``)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return f"a symbolic link (to {target})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_outputs(folder: Path, names: Iterable[str] = RUN_OUTPUTS) -> None:
    """Raise :class:`RunFolderError` (one line) when one of ``names`` in ``folder`` is a symbolic
    link or anything else but a regular file: outputs are never written through links, and a
    folder or FIFO at an output's name would make the write fail half-way."""
    folder = Path(folder)
    bad = [(n, w) for n in names if (w := what_is(folder / n)) is not None]
    if bad:
        listed = "; ".join(f"{n} is {w}" for n, w in bad[:4]) + (f"; and {len(bad) - 4} more" if len(bad) > 4 else "")
        raise RunFolderError(f"{folder}: {listed}: outputs are never written through links or over what is not a "
                             "regular file; remove it or give another output folder")


def _tmp_in(folder: Path, name: str) -> tuple[int, str]:
    return tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)


def write_atomic(path: Path, data: str | bytes) -> Path:
    """Write ``data`` (str: UTF-8) to a temporary file beside ``path``, then rename it over
    ``path`` (a link at ``path`` is replaced, never followed). Raises :class:`DiskFull` naming
    ``path`` when the disk is full (``path`` then keeps its previous content), else OSError."""
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp = _tmp_in(path.parent, path.name)
    except OSError as exc:
        raise as_disk_full(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        os.chmod(tmp, 0o644 & ~_umask())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise as_disk_full(exc, path) from None
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def staged(folder: Path) -> Iterator[Path]:
    """A fresh hidden folder inside ``folder`` to write files into; :func:`commit` moves them
    over their names. Removed on the way out, whatever happened (a failed or interrupted
    analysis leaves the folder's previous files as they were)."""
    folder = Path(folder)
    try:
        stage = Path(tempfile.mkdtemp(prefix=".webgpu-harness-writing-", dir=folder))
    except OSError as exc:
        raise as_disk_full(exc, folder) from None
    try:
        yield stage
    except OSError as exc:
        raise _named_full(exc, stage, folder) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _named_full(exc: OSError, stage: Path, folder: Path) -> BaseException:
    """A full disk while writing into ``stage``: named by the file it was writing (the newest
    file in the stage, as it will be called in ``folder``)."""
    if exc.errno not in FULL or isinstance(exc, DiskFull):
        return exc
    name = exc.filename and Path(str(exc.filename)).name
    if not name:
        try:
            name = max(stage.iterdir(), key=lambda p: p.stat().st_mtime_ns).name
        except (OSError, ValueError):
            name = ""
    return DiskFull(folder / name if name else folder, exc)


def commit(stage: Path, folder: Path, names: Iterable[str]) -> None:
    """Rename each of ``names`` from ``stage`` over the same name in ``folder`` (same file
    system: each rename is atomic)."""
    for n in names:
        src = Path(stage) / n
        os.chmod(src, 0o644 & ~_umask())
        os.replace(src, Path(folder) / n)


def open_append(path: Path, exclusive: bool = False) -> int:
    """A file descriptor appending to ``path`` (created if absent; with ``exclusive``, it must
    be absent), never through a symbolic link. Raises :class:`RunFolderError` when ``path`` is a
    link or not a regular file, :class:`DiskFull` when it cannot be created for want of space."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if exclusive:
        flags |= os.O_EXCL
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise RunFolderError(f"{path} is {what_is(Path(path)) or 'not a regular file'}: samples are never "
                                 "written through links") from None
        raise as_disk_full(exc, path) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise RunFolderError(f"{path} is not a regular file: samples are never written there")
    os.set_blocking(fd, True)
    return fd


def write_all(fd: int, data: bytes, path: Path, start: int | None = None) -> None:
    """Append ``data`` to ``fd`` whole or not at all: after a failed or short write the file is
    cut back to where it was (``start``, its size before, when the caller keeps it; else read
    now), so a full disk never leaves half a line. Raises :class:`DiskFull` (naming ``path``)
    or OSError."""
    if start is None:
        start = os.lseek(fd, 0, os.SEEK_END)
    view = memoryview(data)
    try:
        while view:
            n = os.write(fd, view)
            view = view[n:]
    except OSError as exc:
        try:
            os.ftruncate(fd, start)
        except OSError:
            pass
        raise as_disk_full(exc, path) from None


def read_regular(path: Path, what: str = "") -> bytes:
    """The bytes of ``path`` if it is a regular file (links are followed). Raises
    :class:`RunFolderError` with one line when it is missing, a folder, a FIFO, a device or
    unreadable (``what``: how the message names it, default the path)."""
    with open_regular(path, what) as fh:
        try:
            return fh.read()
        except OSError as exc:
            raise RunFolderError(f"{what or path} is not readable ({exc.strerror})") from None


def open_regular(path: Path, what: str = ""):
    """``path`` opened for reading in binary mode if it is a regular file (links followed), else
    :class:`RunFolderError` as :func:`read_regular` raises it. The caller closes it."""
    path = Path(path)
    name = what or str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise RunFolderError(f"{name}: no such file") from None
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise RunFolderError(f"{name} is a folder, not a file") from None
        raise RunFolderError(f"{name} is not readable ({exc.strerror})") from None
    try:
        kind = _kind(os.fstat(fd).st_mode)
        if kind:
            raise RunFolderError(f"{name} is {kind}, not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _kind(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    return ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")


def check_regular(path: Path, what: str = "") -> bool:
    """True when ``path`` is a regular file (links followed), False when it is absent. Raises
    :class:`RunFolderError` (one line) for a folder, FIFO, device or socket."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise RunFolderError(f"{what or path} is not readable ({exc.strerror})") from None
    kind = _kind(st.st_mode)
    if kind is None:
        return True
    raise RunFolderError(f"{what or path} is {kind}, not a regular file")
