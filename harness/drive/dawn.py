"""Family: native Dawn in Node — not a browser (``--browser dawn``).

Dawn is the WebGPU implementation inside Chrome; the npm package ``webgpu`` (pinned in
package-lock.json) is Dawn built as ``dawn.node`` for Node. A cell runs in one Node process of
its own (``web/dawn/host.js``) that gives the browser worker's bootstrap (``web/worker.js``) the
globals it needs, so the same probes and the same workload code post the same samples to the
same run server (RESULTS.md). Everything it records is labelled :data:`LABEL`.

What is needed, and how each is found (:func:`locate_dawn`), else the cells are skipped with the
reason: Node ≥ 20.6 (``--browser-path``, else ``node`` on PATH; module customization hooks);
the package with this platform's ``dawn.node`` (harness/npm.py: ./node_modules, the clone's, the
per-user cache); on Linux the Vulkan loader ``libvulkan.so.1`` (the system's, else the copy
Chromium ships in ``/usr/lib/chromium``) and a Vulkan driver (ICD): ``VK_ICD_FILENAMES`` /
``VK_DRIVER_FILES`` when set, else the system's ICDs, else Chromium's SwiftShader ICD (a CPU
implementation; Mesa's lavapipe, which Dawn refuses, does not count); and one adapter, asked
for by running the host once with ``--probe``.

Only the standard library is used here (plus harness.drive.base and harness.npm, imported when
needed): ``harness/native/dawn.py`` runs cells without a server on a GPU machine that has
nothing of ours but this repository.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import locations
from harness.drive.base import BrowserDriver, BrowserNotFound, BrowserSession, Located, ProcessInfo, adapter_text

#: How every cell, manifest entry and report row of this engine is labelled.
LABEL = "native Dawn (Node), not a browser"
NAME = "dawn"
#: Manifest cell ``driver`` of its cells.
DRIVER = "node-dawn"
#: The npm package (Dawn's dawn.node): https://github.com/dawn-gpu/node-webgpu
PACKAGE = "webgpu"
#: Node with ``module.register`` (customization hooks), which the host's module loading needs.
MIN_NODE = (20, 6)
#: Chromium's own SwiftShader Vulkan ICD (Debian package chromium) and the loader beside it.
CHROMIUM_DIR = Path("/usr/lib/chromium")
SWIFTSHADER_ICD = CHROMIUM_DIR / "vk_swiftshader_icd.json"
#: Where the Vulkan loader looks for ICD manifests by default (Linux), plus NVIDIA's container path.
ICD_DIRS = ("/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d", "/usr/share/vulkan/icd.d",
            "/usr/local/nvidia/share/vulkan/icd.d")
#: ICD manifests Dawn refuses (Mesa's lavapipe: measured here, requestAdapter() returns null).
REFUSED_ICDS = ("lvp_icd",)
#: Seconds the adapter probe may take (Node start, dawn.node load, one requestAdapter).
PROBE_TIMEOUT_S = 60.0
INSTALL_NODE = "install Node.js ≥ 20.6 (Debian: apt-get install nodejs) or pass --browser-path /path/to/node"
INSTALL_PACKAGE = "run `webgpu-harness setup` (npm ci of the shipped lockfile installs it)"


@dataclass
class DawnLocated(Located):
    """Where Dawn's pieces were found (the manifest's ``browsers.dawn``): Node, the package,
    its dawn.node, the environment the host runs with, and the adapter the probe got."""

    node_version: str = ""
    package_dir: str = ""
    package_version: str = ""
    dawn_node: str = ""
    #: variables set for the host process (LD_LIBRARY_PATH, VK_ICD_FILENAMES), on top of ours
    env: dict[str, str] = field(default_factory=dict)
    adapter: dict[str, Any] = field(default_factory=dict)
    engine: str = LABEL


def host_script() -> Path:
    """``web/dawn/host.js`` of this install."""
    return locations.web_dir() / "dawn" / "host.js"


def find_node(path: str | None = None) -> tuple[str, str]:
    """``(node executable, version 'v20.20.2')``: ``path`` or ``node`` on PATH. Raises
    :class:`BrowserNotFound` when missing, not runnable or older than :data:`MIN_NODE`."""
    if path and not Path(path).is_file():
        raise BrowserNotFound(f"--browser-path {path}: no such file (give the node program); {INSTALL_NODE}")
    exe = path or shutil.which("node") or shutil.which("nodejs")
    if not exe:
        raise BrowserNotFound(f"Node.js not found (no `node` on PATH); {INSTALL_NODE}")
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BrowserNotFound(f"{exe} does not run ({exc}); {INSTALL_NODE}") from None
    m = re.match(r"v(\d+)\.(\d+)", out.stdout.strip())
    if out.returncode != 0 or not m:
        raise BrowserNotFound(f"{exe} --version printed {out.stdout.strip() or out.stderr.strip()!r}, not a Node "
                              f"version; {INSTALL_NODE}")
    if (int(m.group(1)), int(m.group(2))) < MIN_NODE:
        raise BrowserNotFound(f"Node {out.stdout.strip()} at {exe} is older than {MIN_NODE[0]}.{MIN_NODE[1]} "
                              f"(module.register); {INSTALL_NODE}")
    return exe, out.stdout.strip()


def platform_dir() -> str:
    """The package's folder of this platform's dawn.node: ``linux-x64``, ``darwin-universal``…"""
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}.get(platform.system(), platform.system().lower())
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    return f"{system}-{'universal' if system == 'darwin' else arch}"


def find_package(package_dir: str | Path | None = None) -> tuple[Path, str, Path]:
    """``(package folder, version, dawn.node)`` of the npm package ``webgpu``: ``package_dir``,
    else where harness/npm.py finds the lockfile's version. Raises :class:`BrowserNotFound`."""
    if package_dir is None:
        from harness import npm

        try:
            folder, _place = npm.find(PACKAGE)
        except (npm.NpmError, OSError, ValueError) as exc:
            raise BrowserNotFound(f"{exc}") from None
    else:
        folder = Path(package_dir)
    try:
        version = str(json.loads((folder / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        raise BrowserNotFound(f"npm package {PACKAGE} not found at {folder}; {INSTALL_PACKAGE}") from None
    binary = folder / "dist" / platform_dir() / "dawn.node"
    if not binary.is_file():
        raise BrowserNotFound(f"npm package {PACKAGE} {version} at {folder} has no dawn.node for {platform_dir()} "
                              f"({binary} is missing)")
    return folder, version, binary


#: Where a system's libvulkan.so.1 is when ldconfig cannot be asked (Debian/Ubuntu, Fedora).
LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib")


def system_has_vulkan_loader() -> bool:
    """True when the dynamic linker finds ``libvulkan.so.1`` (``ldconfig -p``; ldconfig is often
    in /sbin, off an ordinary PATH), or it is in one of :data:`LIB_DIRS`."""
    ldconfig = shutil.which("ldconfig") or next((p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if Path(p).exists()), None)
    out = ""
    if ldconfig:
        try:
            out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            out = ""
    return "libvulkan.so.1" in out or any((Path(d) / "libvulkan.so.1").exists() for d in LIB_DIRS)


def system_icds() -> list[str]:
    """ICD manifests in the loader's default folders (and NVIDIA's container path) that Dawn
    does not refuse."""
    found = []
    for d in ICD_DIRS:
        for p in sorted(Path(d).glob("*.json")) if Path(d).is_dir() else []:
            if not any(r in p.name for r in REFUSED_ICDS):
                found.append(str(p))
    return found


def vulkan_env(environ: dict[str, str] | None = None, system_loader: bool | None = None,
               icds: list[str] | None = None) -> tuple[dict[str, str], list[str]]:
    """The variables the host needs on Linux to find a Vulkan loader and driver, and one note
    each saying which (module docstring). Raises :class:`BrowserNotFound` when there is no loader."""
    environ = dict(os.environ if environ is None else environ)
    if platform.system() != "Linux":
        return {}, [f"{platform.system()}: Dawn's own backend (Metal, D3D12), no Vulkan loader needed"]
    add: dict[str, str] = {}
    notes: list[str] = []
    if system_loader if system_loader is not None else system_has_vulkan_loader():
        notes.append("Vulkan loader: the system's libvulkan.so.1")
    elif (CHROMIUM_DIR / "libvulkan.so.1").is_file():
        add["LD_LIBRARY_PATH"] = os.pathsep.join(x for x in (str(CHROMIUM_DIR), environ.get("LD_LIBRARY_PATH", "")) if x)
        notes.append(f"Vulkan loader: Chromium's {CHROMIUM_DIR / 'libvulkan.so.1'} (no system libvulkan.so.1)")
    else:
        raise BrowserNotFound("no Vulkan loader (libvulkan.so.1) for Dawn: apt-get install libvulkan1 (or Debian's "
                              "chromium, which ships one)")
    given = [v for v in ("VK_ICD_FILENAMES", "VK_DRIVER_FILES") if environ.get(v)]
    icds = system_icds() if icds is None else icds
    if given:
        notes.append(f"Vulkan driver: {given[0]}={environ[given[0]]}")
    elif icds:
        default = [i for i in icds if not i.startswith("/usr/local/nvidia/")]
        if not default:  # only outside the loader's default folders (NVIDIA's container path)
            add["VK_DRIVER_FILES"] = os.pathsep.join(icds)
        notes.append(f"Vulkan driver: system ICDs {', '.join(default or icds)}")
    elif SWIFTSHADER_ICD.is_file():
        add["VK_ICD_FILENAMES"] = str(SWIFTSHADER_ICD)
        notes.append(f"Vulkan driver: Chromium's SwiftShader ICD {SWIFTSHADER_ICD} (a CPU implementation: counts are "
                     "exact, times are not GPU times)")
    else:
        notes.append("Vulkan driver: none found (no ICD manifest, no VK_ICD_FILENAMES)")
    return add, notes


def probe(node: str, package: Path, env: dict[str, str], timeout_s: float = PROBE_TIMEOUT_S) -> dict[str, Any]:
    """Run the host with ``--probe``: ``{"adapter": {...} | None, "reason"?, "webgpu_package",
    "dawn_node", "node", "vulkan"}``. Raises :class:`BrowserNotFound` when it fails or says nothing."""
    cmd = [node, str(host_script()), "--probe", "--webgpu", str(package)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env={**os.environ, **env})
    except subprocess.TimeoutExpired:
        raise BrowserNotFound(f"{LABEL}: the adapter probe did not answer within {timeout_s:.0f} s") from None
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        err = (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1]
        raise BrowserNotFound(f"{LABEL}: loading dawn.node failed: {err}")
    return json.loads(lines[-1])


def locate_dawn(node_path: str | None = None, package_dir: str | Path | None = None,
                environ: dict[str, str] | None = None, check_adapter: bool = True) -> DawnLocated:
    """Every piece the host needs (module docstring) and, with ``check_adapter``, the adapter
    Dawn finds. Raises :class:`BrowserNotFound` with the reason a cell is skipped for."""
    node, node_version = find_node(node_path)
    folder, version, binary = find_package(package_dir)
    env, notes = vulkan_env(environ)
    located = DawnLocated(NAME, node, DRIVER, [LABEL, f"npm {PACKAGE} {version}: {binary}", *notes],
                          node_version=node_version, package_dir=str(folder), package_version=version,
                          dawn_node=str(binary), env=env)
    if check_adapter:
        found = probe(node, folder, env)
        if not found.get("adapter"):
            raise BrowserNotFound(f"{LABEL}: {found.get('reason') or 'no adapter'} ({'; '.join(notes)})")
        located.adapter = found["adapter"]
    return located


def version_text(located: DawnLocated) -> str:
    """A cell's ``browser_version``: ``webgpu 0.6.2 (Dawn) · Node v20.20.2``."""
    return f"{PACKAGE} {located.package_version} (Dawn) · Node {located.node_version}"


def host_command(located: DawnLocated, *args: str, dawn_flags: list[str] | None = None) -> list[str]:
    """The host's command line: node, host.js, ``args``, the package and any Dawn flags."""
    cmd = [located.executable, str(host_script()), *args, "--webgpu", located.package_dir]
    for f in dawn_flags or []:
        cmd += ["--dawn-flag", f]
    return cmd


def exit_text(code: int) -> str:
    """``exit status 3`` / ``signal SIGSEGV`` for a process's return code."""
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


class DawnSession(BrowserSession):
    """One Node process per cell (:meth:`open` starts it for the runner page's URL). The host
    stays up after the cell's end until its standard input is closed (the next :meth:`open` or
    :meth:`close`), so any exit during a cell is the process dying."""

    process_scope = "the cell's Node process (Dawn, its Vulkan driver and the workload run inside it)"
    no_devtools = f"{LABEL}: the harness has no DevTools connection to the Node process"
    platform = ""

    def __init__(self, located: DawnLocated, dawn_flags: list[str] | None = None):
        self.located = located
        self.dawn_flags = list(dawn_flags or [])
        self.version = version_text(located)
        self.proc: subprocess.Popen | None = None
        self._log = None

    def open(self, url: str) -> None:
        self._stop()
        self._log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(host_command(self.located, "--url", url, dawn_flags=self.dawn_flags),
                                     env={**os.environ, **self.located.env}, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.PIPE, start_new_session=True)  # its end: stdin closed

    def pump(self, seconds: float) -> None:
        time.sleep(seconds)

    def last_output(self, lines: int = 1) -> str:
        """The last ``lines`` lines the host printed (its error, when it died)."""
        if self._log is None:
            return ""
        self._log.seek(0)
        text = self._log.read().decode("utf-8", "replace").strip().splitlines()
        return " | ".join(x.strip() for x in text[-lines:])

    def dead(self) -> str | None:
        if self.proc is None:
            return None
        code = self.proc.poll()
        if code is None:
            return None
        tail = self.last_output(2)
        return f"node (pid {self.proc.pid}, {LABEL}) exited with {exit_text(code)}" + (f": {tail}" if tail else "")

    def processes(self) -> list[ProcessInfo]:
        if self.proc is None or self.proc.poll() is not None:
            return []
        return [ProcessInfo(self.proc.pid, "node")]

    def evaluate(self, expression: str):
        raise RuntimeError(f"{LABEL}: there is no page to evaluate JavaScript in")

    def _stop(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()  # the host's cue to exit (web/dawn/host.js)
                self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    pass
        if self._log is not None:
            self._log.close()
            self._log = None

    def close(self) -> None:
        try:
            self._stop()
        except Exception:  # never raises
            pass


class DawnDriver(BrowserDriver):
    """``--browser dawn``. Run only when named (not among the default browsers); when something
    it needs is missing its cells are skipped with the reason (``run`` does not exit 2)."""

    name = NAME
    description = f"{LABEL}: npm {PACKAGE} (dawn.node) in one Node process per cell"
    #: harness/plan.py resolve_browsers: not launched when no --browser is given
    only_when_named = True
    #: harness/plan.py resolve_browsers: a missing piece skips the cells instead of exit 2
    skipped_when_missing = True
    #: harness/app_plan.py app_browsers: no page to open a user's web app in (``app`` refuses it)
    opens_web_apps = False

    def locate(self, browser_path: str | None = None) -> DawnLocated:
        return locate_dawn(browser_path)

    def launch(self, located: Located, headed: bool = False, extra_args: list[str] | None = None,
               without_args: list[str] | None = None) -> DawnSession:
        if not isinstance(located, DawnLocated):
            located = locate_dawn(located.executable)
        # --browser-arg values that are not command-line flags (no leading '-') are Dawn's own
        # (dawn.node create(): 'enable-dawn-features=…', 'backend=vulkan'); a browser's flags are left out
        return DawnSession(located, dawn_flags=[a for a in extra_args or [] if not a.startswith("-")])

    def probe_adapter(self, located: Located) -> tuple[str, str]:
        """``(version, adapter)`` for doctor, from the probe :meth:`locate` already ran."""
        if not isinstance(located, DawnLocated):
            located = locate_dawn(located.executable)
        return version_text(located), f"{adapter_text(located.adapter)} ({LABEL})"


if __name__ == "__main__":  # python -m harness.drive.dawn: what was found, as JSON
    try:
        print(json.dumps(locate_dawn().__dict__, indent=2, default=str))
    except BrowserNotFound as exc:
        print(f"skipped: {exc}", file=sys.stderr)
        sys.exit(1)
