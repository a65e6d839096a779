"""Pydantic models of the samples a worker, the runner page or the harness records.

Every sample is a JSON object with a ``kind``; the server validates each posted batch against
:class:`SampleBatch` and answers 422 on anything else. One line of ``samples.jsonl`` is one
sample plus ``seq`` (arrival order in the run), ``cell`` and ``received_s`` (seconds since the
run started, harness clock).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model, model_validator

from harness.store import catalog

#: Largest request body the results endpoint accepts (bytes). A step sample is ~1 KiB; a
#: batch of a few hundred fits. Larger bodies get HTTP 413.
MAX_BODY_BYTES = 1 << 20
#: Most samples in one POST.
MAX_SAMPLES_PER_BATCH = 512

Scalar = Union[int, float, str, bool, None]
Count = Annotated[int, Field(ge=0)]


#: Keys the harness sets on every line of samples.jsonl; a sample may not carry them.
RESERVED_KEYS = ("seq", "cell", "received_s")


class _Sample(BaseModel):
    # non-finite floats would be written as bare NaN/Infinity, which JSON readers reject
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    t_ms: float | None = Field(None, description="performance.now() in the sender (ms)")
    #: the page or worker global that sent it (apps measured by injection, web/inject/)
    realm: str | None = Field(None, max_length=64)


class EnvSample(_Sample):
    """What the worker found: user agent, isolation, adapter info, features and limits."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)
    kind: Literal["env"]
    user_agent: str = Field(max_length=1000)
    webgpu: Literal["real", "emulated", "none"]


#: WebGPU calls made during one step (deltas), one field per counter of the catalog
#: (web/probes/catalog.js via harness/store/catalog.py).
StepCounters = create_model("StepCounters", __config__=ConfigDict(extra="forbid"),
                            **{c.name: (Count, 0) for c in catalog.counters()})
#: Cumulative wrapper counts from FinalizationRegistry (web/probes/live-objects.js), one field
#: per live key of the catalog; ``optional`` keys may be missing or null (a sender older than
#: them, e.g. the native bench: not measured), ``signed`` ones may go below zero.
LiveObjects = create_model("LiveObjects", __config__=ConfigDict(extra="forbid"), **{
    k.name: ((int if k.signed else Count) | None, None) if k.optional else (int if k.signed else Count, ...)
    for k in catalog.live_keys()})


class StepSample(_Sample):
    """One token: counter deltas, live objects, CPU encode+submit ms and wall ms to its sync."""

    kind: Literal["step"]
    step: Annotated[int, Field(ge=0, le=10_000_000)]
    token: int | None = None
    logits_hash: str | None = Field(None, max_length=64)
    cpu_ms: float | None = None
    wall_ms: float = Field(ge=0)
    #: None when the counters were not installed (--no-probes): not measured, not zero
    counters: StepCounters | None
    live: LiveObjects | None
    extra: dict[str, Scalar] = Field(default_factory=dict, max_length=64)
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
    step: int | None = None
    destroy_step: int | None = None


class UncapturedErrorSample(_Sample):
    """A GPUDevice ``uncapturederror`` event (web/probes/device-events.js)."""

    kind: Literal["uncaptured_error"]
    message: str = Field(max_length=5_000)
    error_type: str = Field("GPUError", max_length=100)
    step: int | None = None


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
          UncapturedErrorSample],
    Field(discriminator="kind"),
]


class DeviceSample(_Sample):
    """An injected realm got a GPUDevice (web/inject/bootstrap.js): its adapter and features."""

    kind: Literal["device"]
    adapter: dict[str, Scalar] = Field(default_factory=dict, max_length=32)
    features: list[str] = Field(default_factory=list, max_length=256)


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
InjectedSample = Annotated[Union[EnvSample, StepSample, LogSample, DeviceSample, WorkerSample],
                           Field(discriminator="kind")]
_INJECTED = TypeAdapter(InjectedSample)


def check_injected(raw: dict) -> dict:
    """One sample an injected realm posted, checked against :data:`InjectedSample`; returns it
    as sent (less ``received_s``, which the run's store sets). Raises ``ValueError`` with one
    line when it does not fit (pydantic's ValidationError is one)."""
    sample = {k: v for k, v in raw.items() if k != "received_s"}
    _INJECTED.validate_python(sample)
    bad = [k for k in RESERVED_KEYS if k in sample]
    if bad:
        raise ValueError(f"sample may not set {', '.join(bad)} (the harness sets them)")
    return sample


class SampleBatch(BaseModel):
    """Body of ``POST /api/cells/{cell}/samples``."""

    # cache only keys: pydantic-core would otherwise intern every distinct string value (a new
    # logits hash per token) in its JSON string cache, which grows the harness for a long run
    model_config = ConfigDict(extra="forbid", cache_strings="keys")
    samples: list[PageSample] = Field(min_length=1, max_length=MAX_SAMPLES_PER_BATCH)

    @model_validator(mode="after")
    def _no_reserved_keys(self):
        for s in self.samples:
            bad = [k for k in RESERVED_KEYS if k in (s.model_extra or {})]
            if bad:
                raise ValueError(f"sample may not set {', '.join(bad)} (the harness sets them)")
        return self
