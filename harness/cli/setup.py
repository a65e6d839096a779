"""``webgpu-harness setup``: install what the harness needs beside Python, the same way for a
clone (scripts/setup.sh calls it) and for a ``pip install``.

1. System packages, where the platform's package manager allows:
   - Debian/Ubuntu (apt-get, as root or through sudo): :data:`DEBIAN_PACKAGES` that are missing —
     Chromium (Playwright drives the system browser; its own browser download is not used),
     Xvfb and webkit2gtk-driver (WebKitGTK's WebDriver + MiniBrowser), npm, and mesa's lavapipe
     (the software Vulkan adapter of ``webgpu-harness native``);
   - macOS: nothing is installed; it checks and says exactly what to install (Google Chrome,
     Node.js with npm) and to run ``safaridriver --enable`` once;
   - elsewhere: says what to install.
2. The pinned npm packages of the shipped package-lock.json (onnxruntime-web …): ``npm ci`` into
   the per-user cache (harness/npm.py), unless a clone's node_modules or the cache has them.
   With ``--clone-npm`` (scripts/setup.sh, ``make run``/``make test``), a clone gets its own
   ``node_modules`` instead, devDependencies included (the test apps' Transformers.js, esbuild),
   again whenever package-lock.json or .npmrc changed.

It prints one line per phase, in order, and ``setup: done`` last. Exit 0 when everything is
there afterwards, 1 when something is still missing (each line says what and how to install it).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import typer

from harness import locations
from harness.cli.common import err, fail, say

#: Google Chrome's executable on macOS (the chromium family on a Mac).
MAC_CHROME = Path("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome")


def _has_command(*names: str) -> Callable[[], bool]:
    return lambda: any(shutil.which(n) for n in names)


def _has_lavapipe() -> bool:
    return any(Path(d).glob("lvp_icd*.json") for d in ("/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"))


@dataclass(frozen=True)
class SystemPackage:
    """One Debian package: ``name``, ``present()`` (is what it provides already there), ``why``."""

    name: str
    present: Callable[[], bool]
    why: str


#: What scripts/setup.sh installed before this command existed (same checks).
DEBIAN_PACKAGES = (
    SystemPackage("chromium", lambda: bool(shutil.which("chromium")) or Path("/usr/bin/chromium").exists(),
                  "--browser chromium (Playwright drives the system Chromium)"),
    SystemPackage("xvfb", _has_command("Xvfb"), "--browser webkit runs MiniBrowser under a private Xvfb"),
    SystemPackage("webkit2gtk-driver", _has_command("WebKitWebDriver"), "--browser webkit (WebKitWebDriver + MiniBrowser)"),
    SystemPackage("npm", _has_command("npm"), "npm ci of the pinned onnxruntime-web"),
    SystemPackage("mesa-vulkan-drivers", _has_lavapipe, "lavapipe, the CPU Vulkan adapter of `webgpu-harness native`"),
)


def is_debian() -> bool:
    """Debian or a derivative (``/etc/os-release`` ID or ID_LIKE names debian) with apt-get."""
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        return False
    ids = {w.strip('"') for line in text.splitlines() if line.startswith(("ID=", "ID_LIKE="))
           for w in line.split("=", 1)[1].split()}
    return bool(ids & {"debian", "ubuntu"}) and shutil.which("apt-get") is not None


def install_debian(dry_run: bool) -> list[str]:
    """apt-get install the missing :data:`DEBIAN_PACKAGES`; returns what is still missing."""
    missing = [p for p in DEBIAN_PACKAGES if not p.present()]
    if not missing:
        say("setup: Debian packages: all present (" + ", ".join(p.name for p in DEBIAN_PACKAGES) + ")")
        return []
    names = [p.name for p in missing]
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    if sudo and not shutil.which("sudo"):
        return [f"{p.name} ({p.why}): run as root: apt-get install -y {p.name}" for p in missing]
    cmds = [sudo + ["apt-get", "update", "-q"],
            sudo + ["apt-get", "install", "-y", "-q", "--no-install-recommends", *names]]
    for cmd in cmds:
        say("setup: " + " ".join(cmd))
        if not dry_run:
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            if subprocess.run(cmd, env=env).returncode != 0:
                break
    if dry_run:
        return []
    return [f"{p.name} ({p.why}): apt-get install -y {p.name} failed" for p in missing if not p.present()]


def check_macos() -> list[str]:
    """What a Mac needs, checked; nothing is installed. Returns what is missing, with how."""
    todo = []
    if not MAC_CHROME.exists():
        todo.append("Google Chrome (--browser chromium): install it from google.com/chrome into /Applications")
    if not shutil.which("npm"):
        todo.append("Node.js with npm (npm ci of the pinned onnxruntime-web): brew install node")
    if sys.version_info < (3, 11):
        todo.append(f"Python 3.11 or newer (this is {platform.python_version()}): brew install python@3.12")
    say("setup: Safari (--browser safari): run once `safaridriver --enable` (asks for your password) "
        "and keep Safari > Develop > Allow Remote Automation on")
    return todo


def other_system() -> list[str]:
    """Neither Debian nor macOS: what to install by hand (the harness cannot)."""
    todo = []
    if not _has_command("chromium", "chromium-browser", "google-chrome")():
        todo.append("Chromium or Google Chrome (--browser chromium; or pass --browser-path to run)")
    if not shutil.which("npm"):
        todo.append("Node.js with npm (npm ci of the pinned onnxruntime-web)")
    return todo


def npm_packages(dry_run: bool) -> list[str]:
    """Fill the per-user npm cache unless a clone's node_modules or the cache already has every
    pinned package (./node_modules is not enough: it depends on the current folder)."""
    from harness import npm

    stable = [p for p in npm.places() if p.label != "./node_modules"]
    locked = npm.locked_packages()
    for place in stable:
        if all(place.version_of(n) == v for n, v in locked.items()):
            say(f"setup: npm packages ({', '.join(f'{n} {v}' for n, v in locked.items())}): in {place.label}: "
                f"{place.node_modules}")
            return []
    if dry_run:
        say(f"setup: would run npm ci into {npm.cache_root()}")
        return []
    try:
        where = npm.fill_cache(log=say)
    except npm.NpmError as exc:
        return [str(exc)]
    say(f"setup: npm packages installed in {where}")
    return []


#: The clone's stamp of its last ``npm ci``: a hash of package-lock.json and .npmrc (scripts/setup.sh).
CLONE_NPM_STAMP = ".webgpu-harness-lock"


def clone_npm(root: Path, dry_run: bool) -> list[str]:
    """``npm ci`` in the clone ``root`` (devDependencies included) unless its node_modules was
    installed from the same package-lock.json and .npmrc (:data:`CLONE_NPM_STAMP`). Returns what
    is still missing."""
    import hashlib

    lock_sum = hashlib.sha256((root / "package-lock.json").read_bytes()
                              + ((root / ".npmrc").read_bytes() if (root / ".npmrc").exists() else b"")).hexdigest()
    stamp = root / "node_modules" / CLONE_NPM_STAMP
    if stamp.exists() and stamp.read_text().strip() == lock_sum:
        say(f"setup: npm packages: the clone's node_modules is up to date with package-lock.json ({root / 'node_modules'})")
        return []
    npm = shutil.which("npm")
    if npm is None:
        return ["npm (npm ci of the pinned onnxruntime-web): apt-get install -y npm, or Node.js with npm"]
    say(f"setup: npm packages: npm ci in the clone ({root})")
    if dry_run:
        return []
    if subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=root).returncode != 0:
        return [f"npm packages: npm ci in {root} failed (its output is above)"]
    stamp.write_text(lock_sum + "\n")
    return []


def setup(
    system: bool = typer.Option(True, "--system/--no-system", help="Install missing browsers and drivers with the platform's package manager (Debian: apt-get; macOS: says what to install)."),
    npm_cache: bool = typer.Option(True, "--npm/--no-npm", help="npm ci the pinned npm packages (onnxruntime-web) into the per-user cache."),
    clone_npm_ci: bool = typer.Option(False, "--clone-npm", hidden=locations.clone_root() is None, help="In a clone: npm ci into the clone's own node_modules, with the test suite's devDependencies, instead of the per-user cache (scripts/setup.sh)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would be installed; install nothing."),
):
    """Install the browsers, drivers and npm packages the harness needs (Debian: apt-get; macOS: says what to install)."""
    clone = locations.clone_root()
    if clone_npm_ci and clone is None:
        fail("--clone-npm needs a clone of the repository (this is an installed wheel): leave it out")
    todo: list[str] = []
    if system:
        if sys.platform == "darwin":
            todo += check_macos()
        elif sys.platform.startswith("linux") and is_debian():
            todo += install_debian(dry_run)
        else:
            todo += other_system()
    if npm_cache and clone_npm_ci:
        todo += clone_npm(clone, dry_run)
    elif npm_cache:
        todo += npm_packages(dry_run)
    for line in todo:
        err.print(f"missing: {line}", highlight=False, markup=False, emoji=False, soft_wrap=True)
    if todo:
        raise typer.Exit(1)
    say("setup: done; `webgpu-harness doctor` lists the browsers and WebGPU adapters found")
