"""Where the harness finds its own files and where it writes, in a clone and in an installed wheel.

The harness's files are ``web/``, ``workloads/`` (with the built-in model fixtures and their
``expected.json``), ``reports/templates/``, ``RESULTS.md``, ``package.json`` and
``package-lock.json``. In a clone of the repository they sit beside the ``harness`` package; in
an installed wheel they sit inside it, under ``harness/_data/`` with the same relative paths
(pyproject.toml, ``[tool.hatch.build.targets.wheel.sources]``), found through
:mod:`importlib.resources`. Every module reads them through :func:`data_root`: nothing else
looks for files relative to the package or to a clone.

Where output goes: run folders under :func:`runs_dir`, comparisons under :func:`compare_dir` —
``$WEBGPU_HARNESS_RUNS`` when set, else ``reports/runs/`` and ``reports/compare/`` of a clone,
else ``./webgpu-harness-runs/`` (and its ``compare/``) of the current folder.

This module imports no other harness module (both halves use it).
"""

from __future__ import annotations

import os
import subprocess
from functools import lru_cache
from importlib import resources
from pathlib import Path

#: The folder of the ``harness`` package (a clone's ``harness/`` or site-packages' ``harness/``).
PACKAGE_DIR = Path(__file__).resolve().parent
#: Environment variable: the folder run folders go to (any install).
RUNS_ENV = "WEBGPU_HARNESS_RUNS"
#: Default run folder, relative to the current folder, outside a clone.
RUNS_FOLDER_NAME = "webgpu-harness-runs"
#: Files and folders every install has under :func:`data_root` (the wheel's ``harness/_data/``).
DATA_ITEMS = ("web", "workloads", "reports/templates", "RESULTS.md", "package.json", "package-lock.json")


class DataNotFound(RuntimeError):
    """Neither an installed wheel's ``harness/_data/`` nor a clone's files are there (a broken
    install); the message says where it looked and how to reinstall."""


def _wheel_data() -> Path | None:
    """``harness/_data/`` of an installed wheel as a real folder, or None (a clone, editable)."""
    try:
        data = resources.files("harness") / "_data"
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - harness is always importable here
        return None
    return Path(str(data)) if isinstance(data, Path) and data.is_dir() else None


def _clone_root() -> Path | None:
    """The repository root when this package is a clone's ``harness/`` (it has pyproject.toml,
    web/ and workloads/ beside it), else None."""
    root = PACKAGE_DIR.parent
    if (root / "pyproject.toml").is_file() and (root / "web").is_dir() and (root / "workloads").is_dir():
        return root
    return None


@lru_cache(maxsize=1)
def data_root() -> Path:
    """The folder holding :data:`DATA_ITEMS`: the wheel's ``harness/_data/`` when installed,
    else the clone's root. Raises :class:`DataNotFound` when neither is there."""
    found = _wheel_data() or _clone_root()
    if found is None:
        raise DataNotFound(f"the harness's files (web/, workloads/) are neither in {PACKAGE_DIR / '_data'} "
                           f"(an installed wheel) nor beside {PACKAGE_DIR} (a clone); reinstall: "
                           "pip install --force-reinstall webgpu-harness")
    return found


def clone_root() -> Path | None:
    """The clone's root when the harness runs from a clone (its files are the clone's), else None."""
    root = _clone_root()
    return root if root is not None and _wheel_data() is None else None


def web_dir() -> Path:
    """``web/``: runner page, worker bootstrap, probes, emulation."""
    return data_root() / "web"


def workloads_dir() -> Path:
    """``workloads/``: the built-in workloads, one folder each (workloads/README.md)."""
    return data_root() / "workloads"


def templates_dir() -> Path:
    """``reports/templates/``: the report's jinja2 templates."""
    return data_root() / "reports" / "templates"


def catalog_js() -> Path:
    """``web/probes/catalog.js``: the one counter catalog."""
    return web_dir() / "probes" / "catalog.js"


def results_md() -> Path:
    """``RESULTS.md``: the run folder's file and column contract."""
    return data_root() / "RESULTS.md"


def package_lock() -> Path:
    """``package-lock.json``: the pinned npm packages (``webgpu-harness setup`` installs them)."""
    return data_root() / "package-lock.json"


def package_json() -> Path:
    """``package.json`` beside :func:`package_lock`."""
    return data_root() / "package.json"


def npmrc() -> Path:
    """``.npmrc`` beside :func:`package_lock` (npm settings for installing the packages)."""
    return data_root() / ".npmrc"


def _runs_base() -> Path:
    env = os.environ.get(RUNS_ENV)
    if env:
        return Path(env).expanduser()
    return Path.cwd() / RUNS_FOLDER_NAME


def runs_dir() -> Path:
    """Where a run folder goes without ``--output``: ``$WEBGPU_HARNESS_RUNS``, else a clone's
    ``reports/runs/``, else ``./webgpu-harness-runs/`` of the current folder."""
    root = clone_root()
    if root is not None and not os.environ.get(RUNS_ENV):
        return root / "reports" / "runs"
    return _runs_base()


def compare_dir() -> Path:
    """Where a comparison goes without ``--output``: ``$WEBGPU_HARNESS_RUNS/compare/``, else a
    clone's ``reports/compare/``, else ``./webgpu-harness-runs/compare/``."""
    root = clone_root()
    if root is not None and not os.environ.get(RUNS_ENV):
        return root / "reports" / "compare"
    return _runs_base() / "compare"


def index_file() -> Path:
    """The run index of the default places (``webgpu-harness index`` without ROOT): beside the
    ``runs/`` folder of :func:`runs_dir` (a clone's ``reports/index.html``), else in it
    (``./webgpu-harness-runs/index.html``, ``$WEBGPU_HARNESS_RUNS/index.html``)."""
    runs = runs_dir()
    return (runs.parent if runs.name == "runs" else runs) / "index.html"


def git_commit() -> str | None:
    """HEAD of the clone the harness runs from (with ``-dirty`` when tracked files changed), or
    None for an installed wheel (whatever repository the current folder is in is not asked)."""
    root = clone_root()
    if root is None:
        return None
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (sha + ("-dirty" if dirty else "")) or None


def install_kind() -> str:
    """``clone <root>`` or ``wheel <site-packages/harness>``: how this harness is installed
    (``--version`` and ``manifest.json``'s ``harness_install``)."""
    root = clone_root()
    return f"clone {root}" if root is not None else f"wheel {PACKAGE_DIR}"


def runtime_dir(current: str | None) -> str:
    """``XDG_RUNTIME_DIR`` for what loads libwayland-client (MiniBrowser, wgpu-native's Vulkan
    loader): ``current`` when it is a folder only we can use, else a private one under the
    temporary folder (made 0700). Without it each load prints "error: XDG_RUNTIME_DIR is invalid
    or not set in the environment." (harmless, but it reads as a failure)."""
    import stat
    import tempfile

    if current and os.path.isdir(current) and os.stat(current).st_uid == os.getuid() \
            and not os.stat(current).st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        return current
    path = os.path.join(tempfile.gettempdir(), f"webgpu-harness-runtime-{os.getuid()}")
    os.makedirs(path, mode=0o700, exist_ok=True)
    if os.stat(path).st_uid != os.getuid():  # someone else's: never share it
        path = tempfile.mkdtemp(prefix="webgpu-harness-runtime-")
    os.chmod(path, 0o700)
    return path
