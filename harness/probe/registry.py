"""The harness-side probes every cell runs, in start order (crossbench keeps its registries as
plain tuples with their invariants asserted; tests/test_layers.py checks names are unique)."""

from harness.probe.clock import ClockProbe
from harness.probe.gc_checkpoints import GcCheckpointProbe
from harness.probe.process_memory import ProcessMemoryProbe
from harness.probe.worker_heap import WorkerHeapProbe

PROBES = (ClockProbe, ProcessMemoryProbe, WorkerHeapProbe, GcCheckpointProbe)
