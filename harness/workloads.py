"""Workload discovery: every ``workloads/<name>/manifest.json`` (format: workloads/README.md) of the
built-in workloads (harness/locations.py) and of the user's folders (``--workloads-dir DIR`` or
``$WEBGPU_HARNESS_WORKLOADS``, same manifest contract; served at ``/workloads/<name>/`` like a
built-in one, so ``../lib/…`` and ``ctx.kernelUrl`` reach the built-in shared code)."""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from harness.workload_names import (WORKLOADS_DIR, WORKLOADS_ENV, WorkloadError,  # noqa: F401 (re-exported)
                                     user_dirs, user_manifests)

#: Declared parameter types (workloads/README.md, "Parameters").
PARAMETER_TYPES = ("int", "number", "bool", "string", "enum", "list")


class ParameterError(ValueError):
    """A parameter value that does not fit its declaration; the message is one line naming the
    valid range or choices."""


class Parameter(BaseModel):
    """One declared workload parameter (``manifest.json`` → ``parameters.<name>``).

    ``type``: ``int`` / ``number`` (with optional ``min``/``max``), ``bool``, ``string``,
    ``enum`` (one of ``choices``) or ``list`` (comma-separated items, each one of ``choices``
    when given). ``help`` says what it changes; ``testing`` marks parameters that exist only for
    the harness's own fault-injection tests."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["int", "number", "bool", "string", "enum", "list"]
    default: Any = None
    min: float | None = None
    max: float | None = None
    choices: list[str] | None = None
    help: str = ""
    testing: bool = False

    @model_validator(mode="after")
    def _consistent(self):
        if self.type == "enum" and not self.choices:
            raise ValueError("an enum parameter needs choices")
        if self.default is not None:
            self.default = self.coerce(self.default, "default")
        return self

    def describe(self) -> str:
        """``int 1..65536``, ``one of a, b``: the valid values, for error messages and --help."""
        if self.type in ("int", "number"):
            lo = "" if self.min is None else f"{self.min:g}"
            hi = "" if self.max is None else f"{self.max:g}"
            return f"{self.type} {lo}..{hi}" if lo or hi else self.type
        if self.type == "enum":
            return "one of " + ", ".join(self.choices or [])
        if self.type == "list":
            return "comma-separated list" + (f" of {', '.join(self.choices)}" if self.choices else "")
        if self.type == "bool":
            return "true or false"
        return "text"

    def coerce(self, value: Any, name: str = "value") -> Any:
        """``value`` (a CLI string or a JSON value) as this parameter's type. Raises
        :class:`ParameterError` when it does not fit."""
        def bad() -> ParameterError:
            return ParameterError(f"{name} {value!r} is not valid ({self.describe()})")

        t = self.type
        if t in ("int", "number"):
            if isinstance(value, bool):
                raise bad()
            try:
                v = float(value) if t == "number" else (int(value) if not isinstance(value, str) else int(value.strip(), 10))
            except (TypeError, ValueError):
                raise bad() from None
            if t == "int" and isinstance(value, float) and not value.is_integer():
                raise bad()
            if t == "int":
                v = int(v)
            if not math.isfinite(v) or (self.min is not None and v < self.min) or (self.max is not None and v > self.max):
                raise bad()
            return v
        if t == "bool":
            if isinstance(value, bool):
                return value
            if isinstance(value, (int, float)) and value in (0, 1):
                return bool(value)
            if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
                return value.strip().lower() in ("true", "1", "yes")
            raise bad()
        if t == "enum":
            if str(value) not in (self.choices or []):
                raise bad()
            return str(value)
        if t == "list":
            items = value if isinstance(value, list) else [x.strip() for x in str(value).split(",") if x.strip()]
            if self.choices and any(str(x) not in self.choices for x in items):
                raise bad()
            return ",".join(str(x) for x in items)
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise bad()
        return str(value)


def _infer(value: Any) -> dict:
    """A declaration for a bare default (an older manifest's ``"name": value``)."""
    if isinstance(value, bool):
        return {"type": "bool", "default": value}
    if isinstance(value, int):
        return {"type": "int", "default": value}
    if isinstance(value, float):
        return {"type": "number", "default": value}
    return {"type": "string", "default": "" if value is None else str(value)}


class Workload(BaseModel):
    """A workload's manifest. ``profiles`` maps a name to model dimensions (numbers);
    ``parameters`` maps a name to its :class:`Parameter` declaration."""

    name: str
    description: str = ""
    entry: str = "main.js"
    variants: dict[str, str]
    default_variants: list[str] = Field(default_factory=list)
    profiles: dict[str, dict[str, Any]] = Field(default_factory=dict)
    default_profile: str | None = None
    parameters: dict[str, Parameter] = Field(default_factory=dict)
    _folder: Path | None = PrivateAttr(default=None)
    #: steps a cell posts, as an expression over ``tokens`` and the parameters (:func:`count_steps`);
    #: default one step per token
    steps: str = "tokens"

    @field_validator("steps")
    @classmethod
    def _steps_parse(cls, value):
        count_steps(value, {"tokens": 1}, check_only=True)
        return value

    def expected_steps(self, params: dict[str, Any], tokens: int) -> int | None:
        """Steps a cell of this workload posts with ``params`` and ``tokens`` (its progress bar's
        total), None when the expression cannot be evaluated for these values."""
        try:
            return max(0, int(count_steps(self.steps, {**self.defaults(), **params, "tokens": tokens})))
        except (ValueError, TypeError, ZeroDivisionError):
            return None

    @field_validator("parameters", mode="before")
    @classmethod
    def _declarations(cls, value):
        if not isinstance(value, dict):
            return value
        return {k: (v if isinstance(v, dict) else _infer(v)) for k, v in value.items()}

    @property
    def entry_url(self) -> str:
        return f"/workloads/{self.name}/{self.entry}"

    @property
    def folder(self) -> Path:
        """The folder holding its manifest.json."""
        return self._folder or WORKLOADS_DIR / self.name

    @property
    def builtin(self) -> bool:
        """True for a workload shipped with the harness, False for one from a user's folder."""
        return self.folder.parent == WORKLOADS_DIR

    def variants_to_run(self) -> list[str]:
        return self.default_variants or list(self.variants)

    def defaults(self) -> dict[str, Any]:
        """Every declared parameter's default value (what a cell gets without ``--param``)."""
        return {k: p.default for k, p in self.parameters.items()}


def count_steps(expr: str, names: dict[str, Any], check_only: bool = False) -> float:
    """Evaluate a manifest's ``steps`` expression: numbers, names (``tokens`` and parameters),
    ``+ - * //``, parentheses and the functions ``count(list)`` (items of a comma-separated
    parameter), ``has(list, "item")`` (1 or 0), ``min``, ``max``. ``check_only``: validate the
    syntax (names need not exist). Raises ``ValueError`` on anything else."""
    import ast

    funcs = {"count": lambda v: len([x for x in str(v).split(",") if x.strip()]),
             "has": lambda v, item: int(item in [x.strip() for x in str(v).split(",")]), "min": min, "max": max}
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.FloorDiv: lambda a, b: a // b}

    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float, str)) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.Name):
            if check_only:
                return 1
            if n.id not in names:
                raise ValueError(f"steps: unknown name {n.id!r}")
            return names[n.id]
        if isinstance(n, ast.BinOp) and type(n.op) in ops:
            return ops[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in funcs and not n.keywords:
            args = [ev(a) for a in n.args]
            return 1 if check_only else funcs[n.func.id](*args)
        raise ValueError(f"steps: {ast.dump(n)[:60]} is not allowed (numbers, names, + - * //, count, has, min, max)")

    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"steps {expr!r}: {exc.msg}") from None
    return ev(tree)


def _read(manifest: Path) -> Workload:
    if not manifest.is_file():  # a FIFO or device is never opened (it would wait for ever)
        raise WorkloadError(f"{manifest}: not a regular file")
    try:
        wl = Workload.model_validate(json.loads(manifest.read_text()))
    except Exception as exc:  # pydantic or JSON error: name the file
        raise WorkloadError(f"{manifest}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                            ) from exc
    if wl.name != manifest.parent.name:
        raise WorkloadError(f"{manifest}: name {wl.name!r} differs from its folder")
    wl._folder = manifest.parent
    return wl


@lru_cache(maxsize=8)
def _discover(builtin: Path, extra: tuple[Path, ...]) -> dict[str, Workload]:
    found: dict[str, Workload] = {}
    for manifest in sorted(builtin.glob("*/manifest.json")):
        wl = _read(manifest)
        found[wl.name] = wl
    for folder in extra:
        for manifest in user_manifests(folder):
            wl = _read(manifest)
            if wl.name in found:
                raise WorkloadError(f"{manifest}: workload {wl.name!r} is already defined by {found[wl.name].folder}; "
                                    "rename its folder and its manifest's name")
            found[wl.name] = wl
    return found


def discover(dirs: Iterable[str | Path] | None = None) -> dict[str, Workload]:
    """All workloads by name: the built-in ones, then those of the user's folders
    (:func:`user_dirs`: ``dirs``, else ``$WEBGPU_HARNESS_WORKLOADS``). A user folder is either one
    workload (it holds manifest.json) or holds one per subfolder. Raises :class:`WorkloadError`
    on a missing folder, a malformed manifest or a name defined twice."""
    return _discover(WORKLOADS_DIR, user_dirs(dirs))


def served_roots(workloads: Iterable[Workload]) -> dict[str, Path]:
    """Server roots (URL prefix → folder) of the user's workloads among ``workloads``: each is
    served at ``/workloads/<name>/`` beside the built-in ones."""
    return {f"workloads/{wl.name}": wl.folder for wl in workloads if not wl.builtin}
