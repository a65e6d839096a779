"""Pydantic models of the samples a worker, the runner page or the harness records.

Every sample is a JSON object with a ``kind``; the server validates each posted batch against
:class:`SampleBatch` and answers 422 on anything else. One line of ``samples.jsonl`` is one
sample plus ``seq`` (arrival order in the run), ``cell`` and ``received_s`` (seconds since the
run started, harness clock).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

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


class EnvSample(_Sample):
    """What the worker found: user agent, isolation, adapter info, features and limits."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)
    kind: Literal["env"]
    user_agent: str = Field(max_length=1000)
    webgpu: Literal["real", "emulated", "none"]


class StepCounters(BaseModel):
    """WebGPU calls made during one step (deltas; see web/probes/counters.js)."""

    model_config = ConfigDict(extra="forbid")
    createBindGroup: Count = 0
    createBuffer: Count = 0
    createComputePipeline: Count = 0
    createComputePipelineAsync: Count = 0
    createShaderModule: Count = 0
    createCommandEncoder: Count = 0
    submit: Count = 0
    commandBuffersSubmitted: Count = 0
    writeBuffer: Count = 0
    writeBufferBytes: Count = 0
    dispatchWorkgroups: Count = 0
    dispatchWorkgroupsIndirect: Count = 0
    mapAsync: Count = 0
    bufferDestroy: Count = 0
    beginComputePass: Count = 0
    copyBufferToBuffer: Count = 0
    onSubmittedWorkDone: Count = 0
    #: bytes asked of GPUDevice.createBuffer (descriptor.size)
    createBufferBytes: Count = 0


class LiveObjects(BaseModel):
    """Cumulative wrapper counts from FinalizationRegistry (web/probes/live-objects.js)."""

    model_config = ConfigDict(extra="forbid")
    bind_groups_created: Count
    bind_groups_collected: Count
    bind_groups_live: Count
    buffers_created: Count
    buffers_collected: Count
    buffers_live: Count
    #: bytes: createBuffer sizes; destroyed (destroy() or device destroy/loss); collected before
    #: being destroyed; live = created - destroyed - collected. None: not measured (a sender
    #: older than these fields, e.g. the native bench)
    buffer_bytes_created: Count | None = None
    buffer_bytes_destroyed: Count | None = None
    buffer_bytes_collected: Count | None = None
    buffer_bytes_live: int | None = None


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
