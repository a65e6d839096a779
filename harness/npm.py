"""npm packages the workloads load in the browser (the pinned onnxruntime-web, and whatever else
``package.json``/``package-lock.json`` list): where they are found, and filling the per-user
cache.

A package is looked for, in order, in (:func:`places`):

1. ``./node_modules`` of the current folder (the user's own install);
2. a clone's ``node_modules/`` when the harness runs from a clone (``npm ci`` there);
3. the per-user cache, ``<user cache>/webgpu-harness/npm/<lock hash>/node_modules`` (platformdirs'
   user cache folder, or ``$WEBGPU_HARNESS_CACHE``), which ``webgpu-harness setup`` fills by
   ``npm ci`` on the shipped lockfile (:func:`fill_cache`).

Before them all, onnxruntime-web can be given with ``--ort-dist PATH`` (harness/engines.py). A
place "has" a package when ``<place>/<name>/package.json`` has the lockfile's version.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness import locations

#: Environment variable: the cache folder instead of platformdirs' user cache folder.
CACHE_ENV = "WEBGPU_HARNESS_CACHE"
#: npm ci's flags: no audit or funding requests, errors only.
#: ``npm ci`` for the per-user cache: runtime packages only (devDependencies are the repository's
#: own test apps and build tools).
NPM_CI = ("ci", "--omit=dev", "--no-audit", "--no-fund", "--loglevel=error")


class NpmError(RuntimeError):
    """A package is in none of the places, or npm cannot fill the cache; the message is one line
    naming the places looked in and the command that fixes it."""


@dataclass(frozen=True)
class Place:
    """One ``node_modules`` folder packages are looked for in; ``label`` says which (messages)."""

    label: str
    node_modules: Path

    def version_of(self, name: str) -> str | None:
        """The version of package ``name`` installed here, or None."""
        try:
            return str(json.loads((self.node_modules / name / "package.json").read_text())["version"])
        except (OSError, ValueError, KeyError):
            return None


def lock_hash() -> str:
    """First 16 hex digits of the shipped package-lock.json's SHA-256 (names its cache folder)."""
    return hashlib.sha256(locations.package_lock().read_bytes()).hexdigest()[:16]


def locked_packages(dev: bool = False) -> dict[str, str]:
    """The top-level packages of the shipped lockfile the harness serves: name → exact version
    (``dependencies``; with ``dev`` also ``devDependencies``, the repository's own test apps and
    build tools, which the per-user cache does not hold)."""
    lock = json.loads(locations.package_lock().read_text())
    pkgs = lock.get("packages", {})
    names = {**pkgs.get("", {}).get("dependencies", {}), **(pkgs.get("", {}).get("devDependencies", {}) if dev else {})}
    return {n: str(pkgs.get(f"node_modules/{n}", {}).get("version", spec)) for n, spec in names.items()}


def cache_root() -> Path:
    """The per-user cache folder of this lockfile: ``$WEBGPU_HARNESS_CACHE/npm/<lock hash>``, else
    ``<platformdirs user cache>/webgpu-harness/npm/<lock hash>`` (``~/.cache/…`` on Linux,
    ``~/Library/Caches/…`` on macOS). Its ``node_modules/`` is the third place."""
    env = os.environ.get(CACHE_ENV)
    if env:
        base = Path(env).expanduser()
    else:
        from platformdirs import user_cache_dir

        base = Path(user_cache_dir("webgpu-harness", appauthor=False))
    return base / "npm" / lock_hash()


def places() -> list[Place]:
    """The ``node_modules`` folders looked in, in order (module docstring)."""
    here = Path.cwd() / "node_modules"
    clone = locations.clone_root()
    out = []
    if clone is None or (clone / "node_modules").resolve() != here.resolve():
        out.append(Place("./node_modules", here))
    if clone is not None:  # in the clone itself its node_modules is listed once, as the clone's
        out.append(Place("the clone's node_modules", clone / "node_modules"))
    out.append(Place("the per-user cache (webgpu-harness setup fills it)", cache_root() / "node_modules"))
    return out


def where_looked(first: str | None = None) -> str:
    """The places in order, for error messages: ``first`` (when given), then every :func:`places` entry."""
    return "; ".join(([first] if first else []) + [f"{p.label}: {p.node_modules}" for p in places()])


def find(name: str, version: str | None = None) -> tuple[Path, Place]:
    """The folder of package ``name`` at ``version`` (default: the lockfile's) in the first place
    that has it, and that place. Raises :class:`NpmError` naming the places looked in."""
    want = version or locked_packages().get(name)
    seen = []
    for place in places():
        have = place.version_of(name)
        if have is not None and (want is None or have == want):
            return place.node_modules / name, place
        if have is not None:
            seen.append(f"{have} in {place.label}")
    found = f" (found {', '.join(seen)})" if seen else ""
    raise NpmError(f"npm package {name} {want or ''} is in none of: {where_looked()}{found}; "
                   "run `webgpu-harness setup` to fill the cache")


def served_roots() -> dict[str, Path]:
    """Server roots for the lockfile's packages found: ``node_modules/<name>`` → its folder (the
    first place with the locked version). Packages found nowhere are left out (a workload that
    needs one raises :class:`NpmError` through :func:`find` before it runs)."""
    roots: dict[str, Path] = {}
    try:
        locked = locked_packages()
    except (OSError, ValueError):
        return roots
    for name, version in locked.items():
        for place in places():
            if place.version_of(name) == version:
                roots[f"node_modules/{name}"] = place.node_modules / name
                break
    return roots


def cache_is_filled() -> bool:
    """True when the cache holds every locked package at its version."""
    nm = Place("cache", cache_root() / "node_modules")
    return all(nm.version_of(n) == v for n, v in locked_packages().items())


def fill_cache(npm: str | None = None, log=print) -> Path:
    """``npm ci`` on the shipped package.json/package-lock.json into :func:`cache_root` (in a
    temporary sibling folder, renamed into place when done, so an interrupted or concurrent fill
    leaves no half cache). Does nothing when :func:`cache_is_filled`. Returns the cache's
    ``node_modules``. Raises :class:`NpmError` when npm is missing or fails."""
    root = cache_root()
    if cache_is_filled():
        return root / "node_modules"
    exe = npm or shutil.which("npm")
    if exe is None:
        raise NpmError("npm is not installed; install Node.js with npm (Debian: apt-get install npm; "
                       "macOS: brew install node), then run `webgpu-harness setup` again")
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = root.parent / f".{root.name}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        shutil.copy2(locations.package_json(), tmp / "package.json")
        shutil.copy2(locations.package_lock(), tmp / "package-lock.json")
        if locations.npmrc().exists():  # e.g. onnxruntime-node-install=skip
            shutil.copy2(locations.npmrc(), tmp / ".npmrc")
        log(f"setup: npm ci into {root} ({', '.join(f'{n} {v}' for n, v in locked_packages().items())})")
        proc = subprocess.run([exe, *NPM_CI], cwd=tmp, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise NpmError(f"npm ci failed in {tmp} (exit {proc.returncode}): {tail[0]}")
        if root.exists():  # an older partial cache, or a concurrent fill that finished first
            if cache_is_filled():
                return root / "node_modules"
            shutil.rmtree(root)
        os.replace(tmp, root)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return root / "node_modules"
