"""The dispatch-overhead methods outside the browser, on wgpu-native through wgpu-py.

Mirror of ``workloads/dispatch-overhead/bench.js``: the same WGSL (``workloads/kernels/add.wgsl``
on ``elements`` floats, chained ping-pong so the readback is ``x0 + N*b``), the same methods,
the same counters per method-run, and step samples in the browser worker's schema, so
``harness/tables.py`` and the report read native cells like browser ones.

Its size (over 400 lines) is the mirror's: one class holding every method, kept beside its twin
in bench.js so the two can be read side by side. Only ``wgpu``, ``numpy``, the standard library,
the catalog reader and the options (harness/native/options.py) are imported here: ``benchmarks/native_gpu.py``
runs this module on a GPU machine that has nothing else.

Times come from ``time.perf_counter_ns`` (ns; resolution from ``time.get_clock_info``). Each
per-dispatch figure includes wgpu-py's Python → C call cost, which the browser does not pay
(the dispatch-overhead paper, arXiv 2604.02344, reports ~95 µs per op including Python against
24–36 µs of API overhead on Vulkan).
"""

from __future__ import annotations

import time
import weakref

import numpy as np

from harness import locations
from harness.native.options import (MAX_ELEMENTS, MAX_K, MAX_KERNEL_DISPATCHES, MAX_N,  # noqa: F401 (bench's API)
                                    MAX_ROUNDS, METHODS, VARIANTS, OptionError, Options, parse_options)
from harness.store import catalog

PHASES = ["create_command_encoder", "begin_compute_pass", "create_bind_group", "set_pipeline",
          "set_bind_group", "dispatch_workgroups", "end", "finish", "submit"]
#: Counter names of the probe catalog (web/probes/catalog.js), as the browser worker sends them.
COUNTER_NAMES = catalog.counter_names()
KERNEL_FILE = locations.workloads_dir() / "kernels" / "add.wgsl"


def configurations(o: Options) -> list[dict]:
    """Method configurations in run order: ``{method, k (dispatches per command buffer), config}``."""
    out = []
    for m in o.methods:
        if m == "batched":
            out += [{"method": m, "k": k, "config": f"batched-{lbl}"} for k, lbl in zip(o.batch_sizes, o.batch_labels)]
        else:
            out.append({"method": m, "k": o.n if m == "one-pass" else o.kernel_n if m == "kernel" else 1, "config": m})
    return out


def initial_values(elements: int) -> tuple[np.ndarray, np.ndarray]:
    """x0[i] = i % 251, b[i] = i % 3 + 1 (float32; small integers, so sums stay exact)."""
    i = np.arange(elements)
    return (i % 251).astype(np.float32), (i % 3 + 1).astype(np.float32)


def expected_result(elements: int, n: int) -> np.ndarray:
    """x0 + n*b (float32), what the chain of n dispatches must leave."""
    x0, b = initial_values(elements)
    return (x0 + np.float32(n) * b).astype(np.float32)


def fnv1a32_hex(data: bytes) -> str:
    """32-bit FNV-1a of ``data`` as 8 hex digits (the worker's fnv1a32Hex)."""
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{h:08x}"


class NativeDispatchBench:
    """One device's buffers, pipeline and bind groups, and the methods (see module docstring).

    ``counts`` holds cumulative call counts under the worker probe's names; ``live`` the
    bind groups/buffers made and collected (``weakref.finalize``, as the worker's
    FinalizationRegistry). Raises ``RuntimeError`` when a readback is not ``x0 + N*b``.
    """

    def __init__(self, wgpu, device, wgsl: str, o: Options, variant: str, timestamps: bool,
                 timestamp_period_ns: float = 1.0):
        self.wgpu = wgpu
        self.device = device
        self.queue = device.queue
        self.o = o
        self.fresh = variant == "fresh"
        self.bytes = o.elements * 4
        self.groups = -(-o.elements // 64)
        self.wgsl = wgsl
        self.timestamps = timestamps
        self.timestamp_period_ns = timestamp_period_ns
        self.counts = dict.fromkeys(COUNTER_NAMES, 0)
        self.live = {"bind_groups_created": 0, "bind_groups_collected": 0, "buffers_created": 0, "buffers_collected": 0}

    # counted wrappers -------------------------------------------------------------------
    def _collected(self, kind: str) -> None:
        self.live[f"{kind}_collected"] += 1

    def _buffer(self, label: str, size: int, usage: int):
        self.counts["createBuffer"] += 1
        buf = self.device.create_buffer(label=label, size=size, usage=usage)
        self.live["buffers_created"] += 1
        weakref.finalize(buf, self._collected, "buffers")
        return buf

    def _write(self, buf, data: np.ndarray) -> None:
        self.counts["writeBuffer"] += 1
        self.counts["writeBufferBytes"] += data.nbytes
        self.queue.write_buffer(buf, 0, data)

    def _submit(self, cb) -> None:
        self.counts["submit"] += 1
        self.counts["commandBuffersSubmitted"] += 1
        self.queue.submit([cb])

    def _encoder(self):
        self.counts["createCommandEncoder"] += 1
        return self.device.create_command_encoder()

    def _map(self, buf):
        self.counts["mapAsync"] += 1
        buf.map_sync(self.wgpu.MapMode.READ)
        data = bytes(buf.read_mapped())
        buf.unmap()
        return data

    def make_bind_group(self, j: int):
        """A new bind group for dispatch j: (x[j%2], b, x[(j+1)%2], u)."""
        self.counts["createBindGroup"] += 1
        bg = self.device.create_bind_group(layout=self.layout, entries=[
            {"binding": 0, "resource": {"buffer": self.x[j % 2], "offset": 0, "size": self.bytes}},
            {"binding": 1, "resource": {"buffer": self.b, "offset": 0, "size": self.bytes}},
            {"binding": 2, "resource": {"buffer": self.x[(j + 1) % 2], "offset": 0, "size": self.bytes}},
            {"binding": 3, "resource": {"buffer": self.uniform, "offset": 0, "size": 16}},
        ])
        self.live["bind_groups_created"] += 1
        weakref.finalize(bg, self._collected, "bind_groups")
        return bg

    # setup --------------------------------------------------------------------------------
    def init(self) -> None:
        """Compile add.wgsl, make buffers and the two reusable bind groups, upload x0, b, u."""
        w = self.wgpu
        self.counts["createShaderModule"] += 1
        module = self.device.create_shader_module(label="add", code=self.wgsl)
        self.counts["createComputePipeline"] += 1
        self.pipeline = self.device.create_compute_pipeline(label="add", layout="auto",
                                                            compute={"module": module, "entry_point": "main"})
        self.layout = self.pipeline.get_bind_group_layout(0)
        storage = w.BufferUsage.STORAGE | w.BufferUsage.COPY_SRC | w.BufferUsage.COPY_DST
        self.x = [self._buffer("x.ping", self.bytes, storage), self._buffer("x.pong", self.bytes, storage)]
        self.b = self._buffer("b", self.bytes, storage)
        self.uniform = self._buffer("u", 16, w.BufferUsage.UNIFORM | w.BufferUsage.COPY_DST)
        self.staging = self._buffer("readback", self.bytes, w.BufferUsage.MAP_READ | w.BufferUsage.COPY_DST)
        self.x0, b = initial_values(self.o.elements)
        self._write(self.b, b)
        self._write(self.uniform, np.array([self.o.elements, 0, 0, 0], dtype=np.uint32))
        self.reused_groups = [self.make_bind_group(0), self.make_bind_group(1)]
        if self.timestamps:
            kn = self.o.kernel_n
            self.query_set = self.device.create_query_set(type=w.QueryType.timestamp, count=2 * kn)
            self.query_resolve = self._buffer("ts.resolve", 16 * kn, w.BufferUsage.QUERY_RESOLVE | w.BufferUsage.COPY_SRC)
            self.query_read = self._buffer("ts.read", 16 * kn, w.BufferUsage.MAP_READ | w.BufferUsage.COPY_DST)
        self.done_sync = self._pick_done_sync()
        self.wait_idle()

    def _pick_done_sync(self) -> str:
        """How ``wait_idle`` waits: GPUQueue.onSubmittedWorkDone when wgpu-py's binding works;
        wgpu-py 0.32.0's passes a callback of the wrong C type (TypeError), and then
        ``wgpuDevicePoll(wait=true)`` is used, which blocks until all submitted work is done."""
        try:
            self.queue.on_submitted_work_done_sync()
            return "onSubmittedWorkDone"
        except TypeError:
            if hasattr(self.device, "_poll_wait"):
                return "wgpuDevicePoll(wait=true)"
            raise

    def wait_idle(self) -> None:
        """Block until every submitted command buffer has finished (single-op's 'done' sync)."""
        if self.done_sync == "onSubmittedWorkDone":
            self.queue.on_submitted_work_done_sync()
        else:
            self.device._poll_wait()

    def reset(self) -> None:
        """Reset the chain's input to x0 and wait until the queue is idle (outside any step)."""
        self._write(self.x[0], self.x0)
        self.wait_idle()

    def bind_group(self, j: int):
        """Dispatch j's bind group: a new one (``fresh``) or one of the two made at init."""
        return self.make_bind_group(j) if self.fresh else self.reused_groups[j % 2]

    def encode(self, cpass, j: int) -> None:
        """setPipeline, setBindGroup(0), dispatchWorkgroups: the j-th dispatch of the chain."""
        bg = self.bind_group(j)
        cpass.set_pipeline(self.pipeline)
        cpass.set_bind_group(0, bg)
        self.counts["dispatchWorkgroups"] += 1
        cpass.dispatch_workgroups(self.groups)

    def copy_result(self, enc, n: int) -> None:
        """Encode the copy of the chain's result after n dispatches (4 × elements bytes) into staging."""
        enc.copy_buffer_to_buffer(self.x[n % 2], 0, self.staging, 0, self.bytes)

    def expected(self, n: int, submits: int, maps: int) -> dict:
        """The calls a method-run of n dispatches must make (compared with the counters)."""
        return {"submits": submits, "command_encoders": submits, "dispatches": n,
                "bind_groups": n if self.fresh else 0, "map_async": maps}

    # methods ------------------------------------------------------------------------------
    def run_method(self, method: str, n: int, k: int = 0) -> dict:
        """One method-run over n dispatches. Returns ``{wall_ns, cpu_ns (None for single-op),
        result: bytes, expected}``; ``wall_ns`` spans first encode → final sync."""
        clock = time.perf_counter_ns
        submits = 0
        t0 = clock()
        if method == "single-op":
            result = b""
            for j in range(n):
                enc = self._encoder()
                cpass = enc.begin_compute_pass()
                self.encode(cpass, j)
                cpass.end()
                last = j == n - 1
                mapped = last or self.o.single_op_sync == "map"
                if mapped:
                    self.copy_result(enc, j + 1)
                self._submit(enc.finish())
                submits += 1
                if mapped:
                    result = self._map(self.staging)
                else:
                    self.wait_idle()
            t1 = clock()
            maps = n if self.o.single_op_sync == "map" else 1
            return {"wall_ns": t1 - t0, "cpu_ns": None, "result": result, "expected": self.expected(n, submits, maps)}
        if method == "sequential":
            for j in range(n):
                enc = self._encoder()
                cpass = enc.begin_compute_pass()
                self.encode(cpass, j)
                cpass.end()
                if j == n - 1:
                    self.copy_result(enc, n)
                self._submit(enc.finish())
                submits += 1
        elif method in ("batched", "one-pass"):
            kk = n if method == "one-pass" else k
            per_dispatch = method == "batched" and self.o.batched_pass == "per-dispatch"
            for start in range(0, n, kk):
                end = min(n, start + kk)
                enc = self._encoder()
                if per_dispatch:
                    for j in range(start, end):
                        cpass = enc.begin_compute_pass()
                        self.encode(cpass, j)
                        cpass.end()
                else:
                    cpass = enc.begin_compute_pass()
                    for j in range(start, end):
                        self.encode(cpass, j)
                    cpass.end()
                if end == n:
                    self.copy_result(enc, n)
                self._submit(enc.finish())
                submits += 1
        else:
            raise ValueError(f"unknown method {method!r}")
        t_submit = clock()
        result = self._map(self.staging)
        t1 = clock()
        return {"wall_ns": t1 - t0, "cpu_ns": t_submit - t0, "result": result, "expected": self.expected(n, submits, 1)}

    def run_phases(self, n: int) -> dict:
        """The sequential method with each call timed on its own (perf_counter_ns before and
        after). Returns ``{phases_ns: {phase: summed ns}, wall_ns, result, expected}``."""
        clock = time.perf_counter_ns
        acc = dict.fromkeys(PHASES, 0)
        dev, q = self.device, self.queue
        t0 = clock()
        for j in range(n):
            a = clock()
            self.counts["createCommandEncoder"] += 1
            enc = dev.create_command_encoder()
            b = clock()
            cpass = enc.begin_compute_pass()
            c = clock()
            if self.fresh:
                bg = self.make_bind_group(j)
                e = clock()
                acc["create_bind_group"] += e - c
            else:
                bg = self.reused_groups[j % 2]
                e = clock()
            cpass.set_pipeline(self.pipeline)
            f = clock()
            cpass.set_bind_group(0, bg)
            g = clock()
            cpass.dispatch_workgroups(self.groups)
            h = clock()
            cpass.end()
            i = clock()
            self.counts["dispatchWorkgroups"] += 1
            if j == n - 1:
                self.copy_result(enc, n)
            i2 = clock()
            cb = enc.finish()
            kk = clock()
            q.submit([cb])
            ll = clock()
            self.counts["submit"] += 1
            self.counts["commandBuffersSubmitted"] += 1
            acc["create_command_encoder"] += b - a
            acc["begin_compute_pass"] += c - b
            acc["set_pipeline"] += f - e
            acc["set_bind_group"] += g - f
            acc["dispatch_workgroups"] += h - g
            acc["end"] += i - h
            acc["finish"] += kk - i2
            acc["submit"] += ll - kk
        result = self._map(self.staging)
        t1 = clock()
        return {"phases_ns": acc, "wall_ns": t1 - t0, "result": result, "expected": self.expected(n, n, 1)}

    def run_kernel_timestamps(self, n: int) -> dict:
        """Kernel-only time: n dispatches in one command buffer, each in its own pass with
        timestampWrites at beginning and end. Returns ``{kernel_ns: [per dispatch], quantum_ns,
        result, expected}``; raw timestamps are scaled by the queue's timestamp period."""
        enc = self._encoder()
        for j in range(n):
            cpass = enc.begin_compute_pass(timestamp_writes={
                "query_set": self.query_set, "beginning_of_pass_write_index": 2 * j,
                "end_of_pass_write_index": 2 * j + 1})
            self.encode(cpass, j)
            cpass.end()
        enc.resolve_query_set(self.query_set, 0, 2 * n, self.query_resolve, 0)
        enc.copy_buffer_to_buffer(self.query_resolve, 0, self.query_read, 0, 16 * n)
        self.copy_result(enc, n)
        self._submit(enc.finish())
        raw = np.frombuffer(self._map(self.query_read), dtype=np.uint64)[: 2 * n]
        result = self._map(self.staging)
        ts = raw.astype(np.float64) * self.timestamp_period_ns
        begin, end = ts[0::2], ts[1::2]
        kernel = np.where(end >= begin, end - begin, 0.0)
        steps = np.diff(np.sort(ts))
        steps = steps[steps > 0]
        return {"kernel_ns": kernel.tolist(), "quantum_ns": float(steps.min()) if len(steps) else None,
                "result": result, "expected": self.expected(n, 1, 2)}

    def destroy(self) -> None:
        """Destroy every buffer made in :meth:`init` (counted as ``bufferDestroy``)."""
        for buf in [*self.x, self.b, self.uniform, self.staging, getattr(self, "query_resolve", None),
                    getattr(self, "query_read", None)]:
            if buf is not None:
                self.counts["bufferDestroy"] += 1
                buf.destroy()
