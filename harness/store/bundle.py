"""The archive of ``webgpu-harness doctor --bundle FILE``: one .zip a user attaches to an issue.

Everything sits under one folder, :data:`TOP`::

    README.txt         what each file is (:data:`CONTENTS`), when and by which harness it was made
    environment.json   harness version and install, OS, CPU, memory, Python, the versions of the
                       Python packages the harness uses, and the environment variables that change
                       what it does (:data:`ENV_VARIABLES`; nothing else of the environment)
    adapters.json      per browser: found or why not, how it is driven, its version, and its
                       default WebGPU adapter (GPUAdapterInfo, features, limits, WGSL language
                       features) or why there is none; the wgpu-native adapters
    doctor.txt         what `webgpu-harness doctor` printed
    run-console.txt    what the bundle's run printed, its command line and exit status
    run/               that run's folder: a 32-token run of the default suite on every local
                       browser (manifest.json, samples.jsonl, tables, statistics, report.html)

The archive is written to ``FILE.part`` and renamed when complete: a bundle that failed midway
leaves no half-written FILE.
"""

from __future__ import annotations

import json
import os
import zipfile
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

#: The folder every file of the archive is under.
TOP = "webgpu-harness-bundle"

#: Python packages whose versions the environment records (the harness's dependencies, pyproject.toml).
PACKAGES = ("playwright", "selenium", "fastapi", "uvicorn", "pydantic", "typer", "rich", "psutil", "numpy", "pandas",
            "scipy", "plotly", "jinja2", "httpx", "cryptography", "segno", "wgpu", "onnx")

#: Environment variables recorded (when set): the harness's own and those that change how browsers
#: start or where they draw.
ENV_VARIABLES = ("WEBGPU_HARNESS_RUNS", "WEBGPU_HARNESS_WORKLOADS", "WEBGPU_HARNESS_CACHE", "WEBGPU_HARNESS_TLS_DIR",
                 "DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "XDG_RUNTIME_DIR", "VK_ICD_FILENAMES",
                 "PLAYWRIGHT_BROWSERS_PATH", "SELENIUM_SERVER_JAR")

#: README.txt's lines: (name in the archive, what it holds).
CONTENTS = (
    ("environment.json", "harness version and install, OS, CPU, memory, Python, package versions, the environment "
                         "variables that change what the harness does (only those: " + ", ".join(ENV_VARIABLES) + ")"),
    ("adapters.json", "per browser: found or why not, how it is driven, version, and its default WebGPU adapter "
                      "(GPUAdapterInfo, features, limits, WGSL language features) or why there is none; "
                      "wgpu-native's adapters"),
    ("doctor.txt", "what `webgpu-harness doctor` printed"),
    ("run-console.txt", "what the bundle's run printed, its command line and exit status"),
    ("run/", "that run's folder (RESULTS.md describes every file): a 32-token run of the default suite on every "
             "local browser; open run/report.html"),
)


def package_versions() -> dict[str, str | None]:
    """Installed version of each of :data:`PACKAGES` (None: not installed)."""
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def environment(base: dict) -> dict:
    """environment.json: ``base`` (harness/store/environment.py ``describe()``) with the package
    versions and the set variables of :data:`ENV_VARIABLES`."""
    import platform
    import sys

    return {**base, "python_executable": sys.executable, "machine": platform.machine(),
            "packages": package_versions(),
            "environment_variables": {k: os.environ[k] for k in ENV_VARIABLES if k in os.environ}}


def readme(made_by: str) -> str:
    """README.txt of the archive."""
    when = datetime.now(timezone.utc).isoformat(timespec="seconds")
    lines = [f"webgpu-harness bundle, made {when} by {made_by} (`webgpu-harness doctor --bundle`).",
             "Attach it to an issue as it is. It holds file paths of this machine (where the harness, the",
             "browsers and the run folder are) and nothing else of its environment.", ""]
    lines += [f"  {name:17} {what}" for name, what in CONTENTS]
    return "\n".join(lines) + "\n"


def write(path: Path, texts: dict[str, str], run_dir: Path | None) -> list[str]:
    """Write the archive to ``path``: ``texts`` (archive name → text, e.g. ``doctor.txt``) and
    every file under ``run_dir`` as ``run/…``, each under :data:`TOP`. Returns the names written.
    Raises OSError when it cannot be written (nothing is left at ``path`` then)."""
    path = Path(path)
    part = path.with_name(path.name + ".part")
    names = []
    try:
        with zipfile.ZipFile(part, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for name, text in texts.items():
                z.writestr(f"{TOP}/{name}", text)
                names.append(name)
            if run_dir is not None and Path(run_dir).is_dir():
                for f in sorted(Path(run_dir).rglob("*")):
                    if f.is_file():
                        name = f"run/{f.relative_to(run_dir).as_posix()}"
                        z.write(f, f"{TOP}/{name}")
                        names.append(name)
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)
    return names


def dumps(obj) -> str:
    """JSON text of the archive (indented; anything not JSON as its string)."""
    return json.dumps(obj, indent=2, default=str) + "\n"
