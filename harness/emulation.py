"""The options of emulated WebGPU (``installEmulatedWebGPU``, web/emulation/webgpu-emulated.js)
declared like workload parameters, and ``--emulation-option`` validated against them before
anything runs.

``--emulation-option KEY=VALUE`` sets one option; the documented object forms are reachable
too: ``limits=ios-2025`` (a preset), ``limits.maxBufferSize=1073741824`` or
``limits={"maxBufferSize": 1073741824}`` (``{name: value}`` over the spec's defaults, the
emulation's rule), ``argumentBytes.buffer=16``, ``completion=5`` (ms) or
``completion.delayMs=5``. Limit names and presets are read from web/emulation/internals.js
(one source). A bad key or value raises :class:`EmulationOptionError` naming the valid ones.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, Iterable

from harness import locations
from harness.workloads import Parameter, ParameterError

INTERNALS = locations.web_dir() / "emulation" / "internals.js"


class EmulationOptionError(ValueError):
    """A bad --emulation-option: one line naming the valid keys or values."""


#: Scalar options: name → declaration (web/emulation/webgpu-emulated.js, "Options").
SCALARS: dict[str, Parameter] = {
    "bytesPerStage": Parameter(type="int", min=0, help="modeled native bytes per shader stage with bindings, at least"),
    "pageBytes": Parameter(type="int", min=0, help="round each stage's argument buffer up to this (0: no rounding)"),
    "reportCostToJs": Parameter(type="bool", help="report bind groups' modeled bytes to the JS engine as extra memory"),
    "retainWrappersUntilDone": Parameter(type="bool", help="command lists keep GPUBindGroup wrappers alive until done"),
    "contents": Parameter(type="enum", choices=["lazy", "none"], help="keep buffer bytes (lazy) or none"),
    "logUncapturedErrors": Parameter(type="bool", help="console.warn errors nobody captured"),
    "memoryBudgetBytes": Parameter(type="int", min=1, help="the page's memory budget over modeled bytes"),
    "atMemoryBudget": Parameter(type="enum", choices=["lose-device", "kill-page", "out-of-memory"],
                                help="what passing the budget does (out-of-memory: createBuffer fails, the page lives on)"),
    "encoderRetainsBindGroups": Parameter(type="bool", help="WebKit model: encoders hold their bind groups"),
    "bufferRecordsEncoders": Parameter(type="bool", help="WebKit model: buffers record encoders until destroy()"),
    "encoderRecordBytes": Parameter(type="int", min=0, help="bytes per (buffer, encoder) record"),
}
#: ``completion``'s word forms (or a number of ms, or ``{delayMs}``).
COMPLETION_WORDS = ("task", "microtask", "manual")
#: ``argumentBytes``'s keys (memory-model.js resolveModel).
ARGUMENT_KINDS = ("buffer", "sampler", "texture", "storageTexture", "externalTexture")
#: Every option --emulation-option may set.
OPTIONS = tuple(SCALARS) + ("limits", "completion", "argumentBytes")


@lru_cache(maxsize=1)
def limit_names_and_presets() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(limit names of DEFAULT_LIMITS, preset names of LIMIT_PRESETS) from web/emulation/internals.js."""
    src = INTERNALS.read_text(encoding="utf-8")
    block = re.search(r"export const DEFAULT_LIMITS = Object\.freeze\(\{(.*?)\}\);", src, re.S)
    presets = re.search(r"export const LIMIT_PRESETS = Object\.freeze\(\{(.*?)\}\);", src, re.S)
    names = tuple(re.findall(r"^\s*(\w+):", block.group(1), re.M)) if block else ()
    return names, tuple(re.findall(r"'([\w-]+)':", presets.group(1))) if presets else ()


def _number(text: Any, what: str, lo: float = 0) -> float | int:
    try:
        v = float(text)
    except (TypeError, ValueError):
        raise EmulationOptionError(f"--emulation-option {what} {text!r} is not a number") from None
    if not v >= lo or v != v or v in (float("inf"),):
        raise EmulationOptionError(f"--emulation-option {what} {text!r} must be a finite number ≥ {lo:g}")
    return int(v) if v.is_integer() else v


def _object(text: str, what: str) -> dict | None:
    if not text.strip().startswith("{"):
        return None
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise EmulationOptionError(f"--emulation-option {what}: not a JSON object ({exc})") from None
    if not isinstance(obj, dict):
        raise EmulationOptionError(f"--emulation-option {what}: not a JSON object")
    return obj


def _limits(current: Any, sub: str | None, text: str) -> Any:
    names, presets = limit_names_and_presets()
    if sub is None:
        obj = _object(text, "limits")
        if obj is None:
            if text not in presets:
                raise EmulationOptionError(f"--emulation-option limits {text!r} is not a preset (valid: {', '.join(presets)}, "
                                           "or limits.NAME=VALUE / limits={\"NAME\": VALUE} over the spec defaults)")
            return text
        return {k: _limit_value(k, v, names) for k, v in obj.items()}
    base = dict(current) if isinstance(current, dict) else {}
    base[sub] = _limit_value(sub, text, names)
    return base


def _limit_value(name: str, v: Any, names: tuple[str, ...]) -> int:
    if name not in names:
        raise EmulationOptionError(f"--emulation-option limits.{name}: unknown limit (valid: {', '.join(names)})")
    n = _number(v, f"limits.{name}", 0)
    if not float(n).is_integer():
        raise EmulationOptionError(f"--emulation-option limits.{name} {v!r} must be a whole number")
    return int(n)


def _completion(current: Any, sub: str | None, text: str) -> Any:
    if sub is not None:
        if sub != "delayMs":
            raise EmulationOptionError(f"--emulation-option completion.{sub}: unknown key (valid: completion.delayMs)")
        return {"delayMs": _number(text, "completion.delayMs")}
    obj = _object(text, "completion")
    if obj is not None:
        if set(obj) != {"delayMs"}:
            raise EmulationOptionError("--emulation-option completion={...}: the object form is {\"delayMs\": N}")
        return {"delayMs": _number(obj["delayMs"], "completion.delayMs")}
    if text in COMPLETION_WORDS:
        return text
    try:
        return _number(text, "completion")
    except EmulationOptionError:
        raise EmulationOptionError(f"--emulation-option completion {text!r} is not valid (valid: "
                                   f"{', '.join(COMPLETION_WORDS)}, a number of ms, or completion.delayMs=N)") from None


def _argument_bytes(current: Any, sub: str | None, text: str) -> dict:
    obj = _object(text, "argumentBytes") if sub is None else {sub: text}
    if obj is None:
        raise EmulationOptionError("--emulation-option argumentBytes needs a kind: argumentBytes.buffer=16 "
                                   f"(kinds: {', '.join(ARGUMENT_KINDS)}) or argumentBytes={{\"buffer\": 16}}")
    out = dict(current) if isinstance(current, dict) else {}
    for k, v in obj.items():
        if k not in ARGUMENT_KINDS:
            raise EmulationOptionError(f"--emulation-option argumentBytes.{k}: unknown kind (valid: {', '.join(ARGUMENT_KINDS)})")
        out[k] = int(_number(v, f"argumentBytes.{k}"))
    return out


def resolve(values: Iterable[str] | None, defaults: dict[str, Any], overrides: dict[str, Any] | None = None
            ) -> dict[str, Any]:
    """``--emulation-option`` items (``KEY=VALUE``, ``KEY.SUB=VALUE``, ``KEY={json}``) over
    ``defaults``, then ``overrides`` (set ones only): the options object passed to
    installEmulatedWebGPU. Raises :class:`EmulationOptionError`."""
    out = dict(defaults)
    for item in values or []:
        if "=" not in item or not item.split("=", 1)[0].strip():
            raise EmulationOptionError(f"--emulation-option {item!r} is not KEY=VALUE")
        key, text = (x.strip() for x in item.split("=", 1))
        top, _, sub = key.partition(".")
        sub = sub or None
        if top not in OPTIONS:
            raise EmulationOptionError(f"unknown --emulation-option {top!r} (valid: {', '.join(OPTIONS)})")
        if top == "limits":
            out[top] = _limits(out.get(top) if sub else None, sub, text)
        elif top == "completion":
            out[top] = _completion(out.get(top), sub, text)
        elif top == "argumentBytes":
            out[top] = _argument_bytes(out.get(top), sub, text)
        else:
            if sub:
                raise EmulationOptionError(f"--emulation-option {key}: {top} takes a single value")
            p = SCALARS[top]
            try:
                out[top] = p.coerce(text, f"--emulation-option {top}")
            except ParameterError as exc:
                raise EmulationOptionError(str(exc)) from None
    out.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return out
