"""Browser-side engines and user models the workloads load: onnxruntime-web installs under
``node_modules/`` and local ONNX models passed with ``--model``.

The pinned onnxruntime-web is the build of the onnxruntime field report
(``1.31.0-dev.20260914-8d85527a0``, references.md), installed by ``npm ci`` from
``package-lock.json``. Another version can sit beside it under an npm alias
(``npm install --no-save ort-1.22.0@npm:onnxruntime-web@1.22.0``) and be chosen with
``--ort-version``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from harness import REPO_ROOT

NODE_MODULES = REPO_ROOT / "node_modules"
PINNED_ORT = "1.31.0-dev.20260914-8d85527a0"
#: Inputs and outputs a decoder model must have (Transformers.js / onnxruntime-genai layout).
REQUIRED_INPUTS = ("input_ids",)
REQUIRED_OUTPUTS = ("logits",)


class EngineError(ValueError):
    """An engine or model the user asked for cannot be used; the message says why and how to fix it."""


@dataclass
class OrtInstall:
    version: str
    folder: Path  #: the package folder (holds dist/)

    @property
    def dist_url(self) -> str:
        """URL path of its dist/ folder on the harness server."""
        return "/node_modules/" + self.folder.relative_to(NODE_MODULES).as_posix() + "/dist/"


def ort_installs(node_modules: Path = NODE_MODULES) -> list[OrtInstall]:
    """Every onnxruntime-web package directly under ``node_modules`` (aliases included)."""
    found = []
    for pkg in sorted(node_modules.glob("*/package.json")):
        try:
            meta = json.loads(pkg.read_text())
        except (OSError, ValueError):
            continue
        if meta.get("name") == "onnxruntime-web" and (pkg.parent / "dist").is_dir():
            found.append(OrtInstall(str(meta.get("version")), pkg.parent))
    return found


def find_ort(version: str | None = None) -> OrtInstall:
    """The onnxruntime-web install of ``version`` (default: the pinned one).

    Raises :class:`EngineError` naming the installed versions and the command that adds one.
    """
    installs = ort_installs()
    want = version or PINNED_ORT
    for inst in installs:
        if inst.version == want:
            return inst
    have = ", ".join(i.version for i in installs) or "none"
    if not installs:
        hint = "run `npm ci` in the repository (make run / make test do it)"
    else:
        hint = f"install it beside the pinned one: npm install --no-save ort-{want}@npm:onnxruntime-web@{want}"
    raise EngineError(f"onnxruntime-web {want} is not installed (installed: {have}); {hint}")


@dataclass
class UserModel:
    """A local ONNX decoder served to the worker under ``/user-model/<key>/``."""

    path: Path
    key: str
    external: list[str]  #: external data files it references (relative to its folder)
    inputs: list[str]
    outputs: list[str]

    @property
    def url(self) -> str:
        return f"/user-model/{self.key}/{self.path.name}"

    @property
    def files(self) -> dict[str, Path]:
        """URL path (no leading slash) → file, for the server: the model and the external data
        files it names, nothing else of its folder."""
        out = {f"user-model/{self.key}/{self.path.name}": self.path}
        out.update({f"user-model/{self.key}/{name}": self.path.parent / name for name in self.external})
        return out

    def external_data_param(self) -> list[dict]:
        return [{"path": name, "url": f"/user-model/{self.key}/{name}"} for name in self.external]


def user_model(path: str | Path, decoder: bool = True) -> UserModel:
    """Check a ``--model`` file before any browser starts.

    Reads the graph with the ``onnx`` package (weights not loaded): it must parse, have (when
    ``decoder``, for ort-decode) an ``input_ids`` input and a ``logits`` output, and every
    external data file it references must exist beside it. Raises :class:`EngineError` with a one-line reason otherwise. A file that
    parses here but that onnxruntime-web rejects fails its cell with ORT's message.
    """
    import onnx

    p = Path(path).expanduser().resolve()
    if p.is_dir():
        raise EngineError(f"--model {path} is a folder; give the .onnx file (its external data files are found beside it)")
    if not p.is_file():
        raise EngineError(f"--model {path}: no such file")
    try:
        model = onnx.load(str(p), load_external_data=False)
    except Exception as exc:  # protobuf DecodeError and friends
        raise EngineError(f"--model {path}: not a readable ONNX model ({type(exc).__name__}: {str(exc)[:120]})") from None
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    outputs = [o.name for o in model.graph.output]
    for name in REQUIRED_INPUTS if decoder else ():
        if name not in inputs:
            raise EngineError(f"--model {path}: no input named {name!r} (inputs: {', '.join(inputs)})")
    for name in REQUIRED_OUTPUTS if decoder else ():
        if name not in outputs:
            raise EngineError(f"--model {path}: no output named {name!r} (outputs: {', '.join(outputs)})")
    external = []
    for tensor in model.graph.initializer:
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            loc = next((e.value for e in tensor.external_data if e.key == "location"), None)
            if loc and loc not in external:
                external.append(loc)
    for loc in external:
        target = (p.parent / loc).resolve()
        if target.parent != p.parent:
            raise EngineError(f"--model {path}: external data location {loc!r} is not a file beside the model")
        if not target.is_file():
            raise EngineError(f"--model {path}: external data file {loc} is missing (expected beside the model)")
    key = hashlib.sha256(str(p).encode()).hexdigest()[:12]
    return UserModel(p, key, external, inputs, outputs)
