"""A line of samples.jsonl read back (``report``, ``compare``, ``merge``): held to the rules it
was written under. Re-analysis (harness/store/runfolder.py ``not_a_sample``) checks a posted
kind against the model the server checked it against on the wire (harness/serve/samples.py), a
harness record (``process_memory``…) against the types the harness writes, and every value for
NaN/Infinity or an integer beyond 2^53; a line that fails is named and its cell incomplete.
"""

from __future__ import annotations

import functools
import math
import re
import types
import typing
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from typing_extensions import NotRequired, Required, TypedDict

from harness.serve.samples import (MAX_SAFE_INTEGER, MAX_SEQUENCE, RESERVED_KEYS, AppErrorSample, Count, DeviceLostSample, DeviceSample, DoneSample,
                                   EnvSample, ErrorSample, FrameSample, HeartbeatSample, LogSample, OpenStepSample,
                                   SkipSample, StepSample, UasmSample, UncapturedErrorSample, WorkerSample, _non_finite)

_RECORD = ConfigDict(extra="allow", allow_inf_nan=False, strict=True)
Seconds = Annotated[float, Field(ge=0)]


class LineFields(BaseModel):
    """What the harness adds to every line (:data:`RESERVED_KEYS`)."""

    model_config = _RECORD
    seq: Annotated[int, Field(ge=1)] | None = None
    cell: str | None = None
    received_s: Seconds | None = None
    src: str | None = None
    queue: Count | None = None


class ProcessMemoryRecord(BaseModel):
    """harness/probe/process_memory.py: one process's memory (bytes) and CPU time (s)."""

    model_config = _RECORD
    process_type: str | None = None
    pid: Count | None = None
    rss_bytes: Count | None = None
    uss_bytes: Count | None = None
    footprint_bytes: Count | None = None
    cpu_user_s: Seconds | None = None
    cpu_system_s: Seconds | None = None
    time_s: Seconds | None = None
    token: Count | None = None


class WorkerHeapRecord(BaseModel):
    """harness/probe/worker_heap.py: a worker's JS heap (bytes)."""

    model_config = _RECORD
    js_heap_bytes: Count | None = None
    js_heap_total_bytes: Count | None = None
    time_s: Seconds | None = None
    token: Count | None = None


class ClockSyncRecord(BaseModel):
    """harness/probe/clock.py: one reading of the browser's clock against the harness's."""

    model_config = _RECORD
    time_s: Seconds | None = None
    answered_s: Seconds | None = None
    browser_ms: float | None = None
    harness_epoch_ms: float | None = None


class GcCheckpointRecord(BaseModel):
    """harness/probe/gc_checkpoints.py: a forced (or asked) garbage collection."""

    model_config = _RECORD
    token: Count | None = None
    time_s: Seconds | None = None
    done_token: Count | None = None
    done_s: Seconds | None = None


class CellStatusRecord(BaseModel):
    """harness/drive/runner.py: the harness's word on a cell."""

    model_config = _RECORD
    status: str
    reason: str | None = None


_POSTED = {m.model_fields["kind"].annotation.__args__[0]: m for m in (
    EnvSample, StepSample, LogSample, ErrorSample, SkipSample, DoneSample, UasmSample, DeviceLostSample,
    UncapturedErrorSample, HeartbeatSample, DeviceSample, OpenStepSample, AppErrorSample, FrameSample, WorkerSample)}
_RECORDS = {"process_memory": ProcessMemoryRecord, "worker_heap": WorkerHeapRecord, "clock_sync": ClockSyncRecord,
            "gc_checkpoint": GcCheckpointRecord, "cell_status": CellStatusRecord}


def _line_model(base: type[BaseModel], posted: bool) -> type[BaseModel]:
    """``base`` with the fields the harness adds (:class:`LineFields`) declared beside its own: a
    line is checked by one validation, not a copy of its reserved keys and a copy of the rest
    (two thirds of the time of reading a 100,000-line run went to those). A posted model's ``n``
    may be missing (a line the harness wrote for a sender, the Dawn host or ``native``, has none)
    but not null, as when ``{"n": 1, …}`` was validated."""
    extra: dict[str, Any] = {name: (f.annotation, f) for name, f in LineFields.model_fields.items()}
    if posted:
        n = base.model_fields["n"]
        extra["n"] = (int, Field(1, ge=1, le=MAX_SEQUENCE, description=n.description))
    return create_model(f"{base.__name__}Line", __base__=base, **extra)


#: kind → the model one line of that kind is validated against (:func:`_line_model`); other
#: kinds (``refused``, ``gap``…) against :class:`LineFields` alone, their other keys unchecked.
_LINE_MODELS = {**{k: _line_model(m, True) for k, m in _POSTED.items()},
                **{k: _line_model(m, False) for k, m in _RECORDS.items()}}


def _as_typed_dict(model: type[BaseModel], kind: str | None = None) -> Any:
    """A TypedDict with ``model``'s fields, constraints and config (nested models converted too),
    for pydantic to validate a line's JSON bytes into a plain dict in one pass: the dict
    ``from_json`` would give (no defaults filled in; an integer in a float field comes back a
    float), ~3× faster than parsing and then validating a model (which builds an instance per
    line and per nested object). ``kind``: also require ``"kind": kind`` (a record model does not
    declare it). The sample models have no validators of their own, so the constraints are
    the whole of their rules (tests/analysis/test_line_fast_path.py compares both paths)."""
    ann: dict[str, Any] = {}
    for name, f in model.model_fields.items():
        tp = _converted(f.rebuild_annotation())
        ann[name] = Required[tp] if f.is_required() else NotRequired[tp]
    if kind is not None:
        ann["kind"] = Required[Literal[kind]]
    td = TypedDict(f"{model.__name__}Dict", ann)  # type: ignore[operator]
    td.__pydantic_config__ = model.model_config  # type: ignore[attr-defined]
    return td


def _converted(tp: Any) -> Any:
    """``tp`` with every BaseModel inside it (``X | None``, ``list[X]``, ``Annotated[X, …]``)
    replaced by :func:`_as_typed_dict` of it."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _as_typed_dict(tp)
    args, origin = typing.get_args(tp), typing.get_origin(tp)
    if not args:
        return tp
    if origin is Annotated:
        return Annotated[(_converted(args[0]), *tp.__metadata__)]
    new = tuple(_converted(a) for a in args)
    if new == args:
        return tp
    if origin in (Union, types.UnionType):
        return Union[new]
    if origin is list:
        return list[new[0]]
    raise TypeError(f"cannot convert {tp!r} for the fast line check")  # a new container: add it here


#: Where a line names its kind (the store writes compact JSON, ``kind`` at the top level; a line
#: where the first match is a nested key fails its kind's check and takes the full path).
_KIND = re.compile(rb'"kind"\s*:\s*"([a-z_]{1,40})"')


#: The kinds with a model of their own, as the bytes a line names them by.
_FAST_KINDS = {k.encode(): k for k in _LINE_MODELS}


@functools.lru_cache(maxsize=None)
def _fast_validator(kind: str) -> Any:
    """pydantic-core's validator of one line's JSON of ``kind``, one of :data:`_LINE_MODELS`
    (:func:`_as_typed_dict`)."""
    return TypeAdapter(_as_typed_dict(_LINE_MODELS[kind], None if kind in _POSTED else kind)).validator


def fast_line(raw: bytes, faithful: bool = False) -> dict[str, Any] | None:
    """One line of samples.jsonl parsed and held to its kind's model in one pass, as a dict, when
    it passes everything :func:`line_problem` checks (its kind's model and the fields the harness
    adds); else None, and the caller takes the full path (``from_json`` then :func:`line_problem`),
    which says why. None too for a kind without a model of its own, and for a line whose bytes
    could hold NaN, Infinity or an integer beyond 2^53 (:func:`may_be_unfaithful`: walked on the
    full path). ``faithful``: the caller found none in a block of lines holding this one
    (:func:`may_be_unfaithful` of the block), so the line is not searched again."""
    j = raw.find(b'"kind":"')  # compact JSON, as the store writes it; else the pattern
    if j >= 0:
        kind = raw[j + 8:raw.find(b'"', j + 8)]
    else:
        m = _KIND.search(raw)
        kind = m.group(1) if m else b""
    name = _FAST_KINDS.get(kind)  # any other kind (or damage) takes the full path
    if name is None or (not faithful and may_be_unfaithful(raw)):  # a number to walk: on the parsed values, not
        return None                                                 # the validated ones (2^53 + 1 in a float field is a float there)
    try:
        return _fast_validator(name).validate_json(raw)
    except (ValueError, RecursionError):  # ValidationError is a ValueError
        return None


def _object_or_null(tp: Any) -> bool:
    """Whether a field of type ``tp`` can only hold an object (a model, a TypedDict, a dict) or null."""
    if typing.get_origin(tp) is Annotated:
        return _object_or_null(typing.get_args(tp)[0])
    if typing.get_origin(tp) in (Union, types.UnionType):
        return all(a is type(None) or _object_or_null(a) for a in typing.get_args(tp))
    return tp is dict or typing.get_origin(tp) is dict or isinstance(tp, type) and issubclass(tp, BaseModel)


def kinds_held_to_objects(fields: tuple[str, ...]) -> frozenset[str]:
    """The kinds whose line model (:data:`_LINE_MODELS`) forbids keys it does not declare and
    declares each of ``fields`` it has as an object or null, and, for ``step``, a strict integer
    ``step``: a line of such a kind that :func:`fast_line` passed has every one of ``fields`` an
    object or absent, so harness/store/runfolder.py need not look again (a tenth of the time of
    reading a run)."""
    out = set()
    for kind, model in _LINE_MODELS.items():
        if model.model_config.get("extra") != "forbid" or not model.model_config.get("strict"):
            continue
        declared = [model.model_fields[f] for f in fields if f in model.model_fields]
        if not all(_object_or_null(f.rebuild_annotation()) for f in declared):
            continue
        if kind == "step":
            step = model.model_fields.get("step")
            core = step.annotation if step is not None else None
            if core is not int or not step.is_required():
                continue
        out.add(kind)
    return frozenset(out)


def _first_error(exc: ValidationError) -> str:
    e = exc.errors(include_url=False, include_context=False)[0]
    where, got = ".".join(str(x) for x in e["loc"]) or "sample", e.get("input")
    if isinstance(got, float) and not math.isfinite(got):  # an int field says "valid integer" otherwise
        return f"{where}: not a finite number (NaN and Infinity are not JSON)"
    return f"{where}: {e['msg']}"


def _all_finite(value: Any) -> bool:
    """Whether every number inside ``value`` (nested dicts and lists) is finite and within ±2^53:
    the fast, pathless form of :func:`harness.serve.samples._non_finite`, which is asked only
    for a line that fails (walking every line with paths tripled the time to read a 100,000-line
    run)."""
    stack = [value]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is dict:
            stack.extend(x.values())
        elif t is list:
            stack.extend(x)
        elif t is float:
            if x - x != 0:  # NaN or ±Infinity
                return False
        elif t is int and not -MAX_SAFE_INTEGER <= x <= MAX_SAFE_INTEGER:
            return False
    return True


#: ``bytes.translate`` table of :func:`may_be_unfaithful`: digits → ``0``, ``.`` kept, ``e``/``E`` →
#: ``e``, every other byte → a space (``+``/``-`` are deleted), so integer parts and exponents stand out.
_SHAPE = bytes(48 if 48 <= i <= 57 else 46 if i == 46 else 101 if i in (69, 101) else 32 for i in range(256))


def may_be_unfaithful(raw: bytes) -> bool:
    """Whether a line's bytes could hold a number JSON cannot carry faithfully: the tokens NaN or
    Infinity, an integer part of 16 digits or more (2^53 has 16), or an exponent of 3 digits or
    more (1e400 parses as Infinity). Cheap (C-level translate and search); a line without any is
    not walked value by value (:func:`_all_finite`). ``raw`` may hold many lines: every byte is
    mapped alone and a line break maps to a space, so a block without a match has no line with one."""
    if b"NaN" in raw or b"Infinity" in raw:
        return True
    shape = raw.translate(_SHAPE, b"+-")
    return b" 0000000000000000" in shape or b"e000" in shape


def line_problem(line: dict[str, Any], raw: bytes | None = None) -> str | None:
    """Why one parsed line of samples.jsonl (a JSON object) breaks the rules it was written
    under, else None: a posted kind (``step``, ``env``…) is checked against its model above
    (as :func:`check_sample` / :func:`check_injected` did on the wire), a harness record
    (``process_memory``…) against its record model, the fields the harness adds against
    :class:`LineFields`, and every value for NaN/Infinity or an integer beyond 2^53 (where
    ``raw``, the line's bytes, could hold one: :func:`may_be_unfaithful`). One line, like
    :func:`check_sample`'s: the first field that is wrong and how."""
    try:
        kind = line.get("kind")
        (_LINE_MODELS.get(kind, LineFields) if isinstance(kind, str) else LineFields).model_validate(line)
        if raw is not None and not may_be_unfaithful(raw):
            return None
        return None if _all_finite(line) else _non_finite(line)
    except ValidationError as exc:
        return _first_error(exc)
    except RecursionError:
        return "sample: nests too deeply"
