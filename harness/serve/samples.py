"""Pydantic models of the samples a worker, the runner page or the harness records.

A POST carries one :class:`SampleBatch` from one sender (``src``: a worker's or a page's
``SampleSink``, web/probes/sink.js): its samples each hold ``n``, the sender's sequence
number (1, 2, 3… in the order they were made). The envelope is validated first (422 when it
is not a batch); then every sample on its own (:func:`check_sample`), strictly: finite numbers
only (no NaN/Infinity anywhere, nested values included), non-negative times and counts, no
booleans where numbers belong, nothing beyond the declared fields. A sample that fails is
refused on its own (the store writes a ``refused`` record naming it and why) and the rest of
the batch is kept. One line of ``samples.jsonl`` is one sample plus ``seq`` (arrival order in
the run), ``cell``, ``received_s`` (seconds since the run started, harness clock) and, for a
posted sample, ``src`` and ``queue`` (RESULTS.md).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from harness.store import catalog

#: Largest request body the results endpoint accepts (bytes). A step sample is ~1 KiB; a
#: batch of a few hundred fits. Larger bodies get HTTP 413.
MAX_BODY_BYTES = 1 << 20
#: Most samples in one POST.
MAX_SAMPLES_PER_BATCH = 512

#: Most samples one sender may hold unsent (web/probes/sink.js MAX_QUEUE); the ``queue`` a
#: batch reports is at most this.
MAX_QUEUE = 10_000

Scalar = Union[int, float, str, bool, None]
Count = Annotated[int, Field(ge=0)]
Millis = Annotated[float, Field(ge=0)]
#: Sender ids: a worker's or a page's SampleSink makes one per instance (``w-…``, ``p-…``).
SENDER_ID = r"^[A-Za-z0-9_-]{1,40}$"

#: Keys the harness sets on every line of samples.jsonl; a sample may not carry them.
RESERVED_KEYS = ("seq", "cell", "received_s", "src", "queue")
#: Strict validation: no booleans as numbers, no strings as numbers, no NaN/Infinity.
STRICT = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)


#: The largest sequence number a sender may use (2^40: a trillion samples); one beyond it is
#: refused without moving the sender's sequence (harness/store/store.py).
MAX_SEQUENCE = 1 << 40


class _Sample(BaseModel):
    # non-finite floats would be written as bare NaN/Infinity, which JSON readers reject
    model_config = STRICT
    n: int = Field(ge=1, le=MAX_SEQUENCE, description="the sender's sequence number (1, 2, 3…)")
    t_ms: Millis | None = Field(None, description="performance.now() in the sender (ms)")
    #: the page or worker global that sent it (apps measured by injection, web/inject/)
    realm: str | None = Field(None, max_length=64)


class EnvSample(_Sample):
    """What the worker found: user agent, isolation, adapter info, features and limits."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False, strict=True)
    kind: Literal["env"]
    user_agent: str = Field(max_length=1000)
    webgpu: Literal["real", "emulated", "none"]


#: WebGPU calls made during one step (deltas), one field per counter of the catalog
#: (web/probes/catalog.js via harness/store/catalog.py).
StepCounters = create_model("StepCounters", __config__=STRICT,
                            **{c.name: (Count, 0) for c in catalog.counters()})
#: Cumulative wrapper counts from FinalizationRegistry (web/probes/live-objects.js), one field
#: per live key of the catalog; ``optional`` keys may be missing or null (a sender older than
#: them, e.g. the native bench: not measured), ``signed`` ones may go below zero.
LiveObjects = create_model("LiveObjects", __config__=STRICT, **{
    k.name: ((int if k.signed else Count) | None, None) if k.optional else (int if k.signed else Count, ...)
    for k in catalog.live_keys()})


class CreatedBuffers(BaseModel):
    """The buffers one step created with one (label, usage): web/probes/counters.js
    ``takeCreatedBuffers``. ``label`` is '' when the app set none (cut to 100 characters);
    ``usage`` the GPUBufferUsage bits (0 for the ``(other)`` group that sums what did not fit)."""

    model_config = STRICT
    label: str = Field(max_length=100)
    usage: Annotated[int, Field(ge=0, le=0xFFFFFFFF)]
    buffers: Count
    bytes: Count


#: Most (label, usage) groups one step sample carries (web/probes/counters.js MAX_BUFFER_GROUPS).
MAX_BUFFER_GROUPS = 32


class StepSample(_Sample):
    """One token: counter deltas, live objects, CPU encode+submit ms and wall ms to its sync."""

    kind: Literal["step"]
    #: steps count 0, 1, 2… per cell; the store refuses one that repeats or goes back
    step: Annotated[int, Field(ge=0, le=10_000_000)]
    token: int | None = None
    logits_hash: str | None = Field(None, max_length=64)
    cpu_ms: Millis | None = None
    wall_ms: Millis
    #: None when the counters were not installed (--no-probes): not measured, not zero
    counters: StepCounters | None
    live: LiveObjects | None
    extra: dict[str, Scalar] = Field(default_factory=dict, max_length=64)
    #: The step's createBuffer calls by (label, usage), largest first; None from senders older
    #: than it or without counters (not measured)
    created_buffers: list[CreatedBuffers] | None = Field(None, max_length=MAX_BUFFER_GROUPS)
    #: Under emulated WebGPU: the emulation's ledger (modeled_native_bytes, bind_groups_live ...)
    emulation: dict[str, Scalar] | None = None


class DeviceLostSample(_Sample):
    """A GPUDevice was lost during the run (web/probes/device-events.js); the cell ends
    ``device-lost``. ``reason`` is GPUDeviceLostInfo.reason (``unknown`` or ``destroyed``: a
    device destroyed with destroy() and then used); ``step`` the step it fell in (None before the
    first); ``destroy_step`` the step of the destroy() call."""

    kind: Literal["device_lost"]
    reason: str = Field(max_length=100)
    message: str = Field("", max_length=5_000)
    step: Count | None = None
    destroy_step: Count | None = None


class UncapturedErrorSample(_Sample):
    """A GPUDevice ``uncapturederror`` event (web/probes/device-events.js)."""

    kind: Literal["uncaptured_error"]
    message: str = Field(max_length=5_000)
    error_type: str = Field("GPUError", max_length=100)
    step: Count | None = None


class HeartbeatSample(_Sample):
    """The workload says it is making progress inside a long step or set-up
    (``ctx.heartbeat(what)``): it resets the cell's step timeout as a step does, where a
    ``log`` does not."""

    kind: Literal["heartbeat"]
    what: str = Field("", max_length=200)


class LogSample(_Sample):
    kind: Literal["log"]
    message: str = Field(max_length=20_000)


class ErrorSample(_Sample):
    """A workload or worker failure; fails the cell."""

    kind: Literal["error"]
    message: str = Field(max_length=20_000)
    stack: str = Field("", max_length=50_000)


class SkipSample(_Sample):
    """The cell cannot run here (e.g. no WebGPU adapter); recorded as skipped."""

    kind: Literal["skip"]
    reason: str = Field(max_length=2_000)


class DoneSample(_Sample):
    kind: Literal["done"]
    result: dict[str, Any] = Field(default_factory=dict)


class UasmSample(_Sample):
    """performance.measureUserAgentSpecificMemory() of the page (bytes)."""

    kind: Literal["uasm"]
    bytes: Count
    breakdown: list[dict[str, Any]] = Field(default_factory=list, max_length=256)


PageSample = Annotated[
    Union[EnvSample, StepSample, LogSample, ErrorSample, SkipSample, DoneSample, UasmSample, DeviceLostSample,
          UncapturedErrorSample, HeartbeatSample],
    Field(discriminator="kind"),
]
_PAGE_SAMPLE = TypeAdapter(PageSample)
#: The ``kind`` values a sender may post.
PAGE_KINDS = ("env", "step", "log", "error", "skip", "done", "uasm", "device_lost", "uncaptured_error", "heartbeat")


class DeviceSample(_Sample):
    """An injected realm got a GPUDevice (web/inject/bootstrap.js): its adapter and features;
    ``index`` counts the realm's devices from 0 (1 or more: a device made again, e.g. after a
    loss)."""

    kind: Literal["device"]
    adapter: dict[str, Scalar] = Field(default_factory=dict, max_length=32)
    features: list[str] = Field(default_factory=list, max_length=256)
    index: Count | None = None


class OpenStepSample(_Sample):
    """The calls an injected realm counted so far in its open step (web/inject/steps.js
    ``openSnapshot``): deltas since that step began, like a step's, without ending it. The
    harness places them on the measured realm's steps by time (harness/store/timeline.py)."""

    kind: Literal["open_step"]
    step: Annotated[int, Field(ge=0, le=10_000_000)]
    wall_ms: Millis
    counters: StepCounters | None
    live: LiveObjects | None
    extra: dict[str, Scalar] = Field(default_factory=dict, max_length=64)
    emulation: dict[str, Scalar] | None = None


class AppErrorSample(_Sample):
    """An uncaught error or unhandled promise rejection in an injected realm (its ``error`` and
    ``unhandledrejection`` events), or an error event of a worker the bootstrap could not enter
    (``error_kind`` ``worker error``), with the realm's open step."""

    kind: Literal["app_error"]
    error_kind: str = Field(max_length=40)
    message: str = Field(max_length=5_000)
    source: str = Field("", max_length=1_000)
    stack: str = Field("", max_length=10_000)
    step: Count | None = None


class FrameSample(_Sample):
    """A frame the page's bootstrap could not enter in time (web/inject/frames.js):
    ``instrumented`` False (with ``reason``), ``late`` (entered at its load: earlier calls not
    counted), or None (cross-origin or sandboxed: decided by whether a frame realm with that URL
    reports ``env``)."""

    kind: Literal["frame"]
    frame_id: str = Field(max_length=64)
    url: str = Field(max_length=8_000)
    instrumented: bool | Literal["late"] | None = None
    late: bool = False
    reason: str = Field("", max_length=2_000)


class WorkerSample(_Sample):
    """An injected realm started a worker (web/inject/workers.js). ``instrumented`` is False
    (with ``reason``) when the bootstrap could not go in, None when an ``env`` sample with this
    ``worker_id`` decides it."""

    kind: Literal["worker"]
    worker_id: str = Field(max_length=64)
    worker_kind: str = Field(max_length=32)
    url: str = Field(max_length=8_000)
    script_type: str | None = Field(None, max_length=16)
    via: str | None = Field(None, max_length=32)
    instrumented: bool | None = None
    reason: str = Field("", max_length=2_000)


#: What an app's injected realms post (web/inject/README.md, "Samples").
InjectedSample = Annotated[Union[EnvSample, StepSample, LogSample, DeviceSample, WorkerSample, OpenStepSample,
                                 AppErrorSample, FrameSample, DeviceLostSample, UncapturedErrorSample],
                           Field(discriminator="kind")]
_INJECTED = TypeAdapter(InjectedSample)


def check_injected(raw: dict) -> dict:
    """One sample an injected realm posted, checked against :data:`InjectedSample`; returns it
    as sent (less ``received_s``, which the run's store sets). Raises ``ValueError`` with one
    line when it does not fit (pydantic's ValidationError is one)."""
    sample = {k: v for k, v in raw.items() if k != "received_s"}
    _INJECTED.validate_python(sample)
    try:
        found = _non_finite(sample)  # env keeps fields beyond the declared ones: NaN could hide there
    except RecursionError:
        raise ValueError("sample: nests too deeply") from None
    if found:
        raise ValueError(found)
    bad = [k for k in RESERVED_KEYS if k in sample]
    if bad:
        raise ValueError(f"sample may not set {', '.join(bad)} (the harness sets them)")
    return sample


class SampleBatch(BaseModel):
    """Body of ``POST /api/cells/{cell}/samples``: ``src`` (the sender), ``queue`` (samples the
    sender held unanswered when it sent this batch: the batch and those behind it) and the samples, each checked on its
    own by :func:`check_sample` (so one bad sample does not cost the batch)."""

    # cache only keys: pydantic-core would otherwise intern every distinct string value (a new
    # logits hash per token) in its JSON string cache, which grows the harness for a long run
    model_config = ConfigDict(extra="forbid", cache_strings="keys", strict=True, allow_inf_nan=False)
    src: str = Field(pattern=SENDER_ID)
    queue: int = Field(0, ge=0, le=MAX_QUEUE + MAX_SAMPLES_PER_BATCH)
    samples: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_SAMPLES_PER_BATCH)


class SampleRefused(ValueError):
    """A sample that does not fit the schema; ``str()`` is one line saying where and why."""


#: Largest integer magnitude a sample may hold: 2^53, the last integer every JSON reader (a
#: JavaScript number, an IEEE-754 double: ECMA-262 §6.1.6.1 Number.MAX_SAFE_INTEGER + 1) holds exactly.
MAX_SAFE_INTEGER = 2**53


def _non_finite(value: Any, path: str = "") -> str | None:
    """Path and why of the first value inside ``value`` (nested dicts and lists) that JSON cannot
    carry faithfully — NaN/Infinity, an integer beyond ±2^53 — else None."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{path or 'value'}: not a finite number (NaN and Infinity are not JSON)"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INTEGER:
        return f"{path or 'value'}: an integer beyond 2^53 (no JSON reader holds it exactly)"
    if isinstance(value, dict):
        for k, v in value.items():
            found = _non_finite(v, f"{path}.{k}" if path else str(k))
            if found:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = _non_finite(v, f"{path}[{i}]")
            if found:
                return found
    return None


def check_sample(raw: Any) -> dict[str, Any]:
    """One posted sample → the dict written to samples.jsonl (declared fields only; ``None``
    kept). Raises :class:`SampleRefused` with one line: the first field that is wrong and how."""
    if not isinstance(raw, dict):
        raise SampleRefused(f"a sample is a JSON object, not {type(raw).__name__}")
    bad = [k for k in RESERVED_KEYS if k in raw]
    if bad:
        raise SampleRefused(f"sample may not set {', '.join(bad)} (the harness sets them)")
    try:
        sample = _PAGE_SAMPLE.validate_python(raw)
    except ValidationError as exc:
        e = exc.errors(include_url=False, include_input=False, include_context=False)[0]
        where = ".".join(str(x) for x in e["loc"]) or "sample"
        raise SampleRefused(f"{where}: {e['msg']}") from None
    out = sample.model_dump(exclude_none=False)
    try:
        found = _non_finite(out)
    except RecursionError:
        raise SampleRefused("sample: nests too deeply") from None
    if found:
        raise SampleRefused(found)
    return out

