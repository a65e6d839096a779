"""The parts findings are made of (harness/report/findings.py): :class:`Number` (a value with
its 95% CI and where ``stats.json`` holds it), :class:`Finding` (one sentence), how a number is
written (:func:`quantity`), and the helpers that pick a run's configurations, scopes and caveats.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from harness.report import format as F
from harness.own_terms import STEP_UNITS
from harness.process_types import CONTENT_PROCESS_TYPES
from harness.stats.metrics import NOT_TOKENS  # noqa: F401 (report modules read it here too)
from harness.stats.run import Difference, Estimate, GroupStats, RunStats, clean
from harness.stats.workloads.dispatch_overhead import adapter_class

#: Unfused → fused variant pairs of decode-loop (harness/stats/workloads/dispatch_overhead.py).
FUSION_PAIRS = (("fresh", "fused"), ("reuse", "fused-reuse"))
#: Process types by role (memory.csv ``process_type``): the process that hosts the page and its
#: worker, and the process that talks to the GPU driver (Chromium ``--type=gpu-process``,
#: WebKitGTK ``WebKitGPUProcess``, Safari ``com.apple.WebKit.GPU``; harness/drive/processes.py).
PROCESS_ROLES = {"content": CONTENT_PROCESS_TYPES,
                 "gpu": ("gpu-process", "WebKitGPUProcess", "GPU")}
#: The onnxruntime field report's iOS kill (references.md: microsoft/onnxruntime #33750), the
#: budget a projection uses when the run had no ``--memory-budget``.
FIELD_KILL_BYTES = 2_048 * 10**6


@dataclass
class Number:
    """A number of a finding: ``value`` in ``unit`` (``relative``: a fraction, b/a − 1) with its
    95% CI (``None``: no interval, e.g. one repetition), ``n_reps`` repetitions behind it, and
    ``ref``: where ``stats.json`` holds the same value — ``{"group", "metric"}`` (an estimate,
    ``value``), ``{"a", "b", "metric", "field"}`` (a difference's ``diff`` or ``rel``),
    ``{"workload", "cell", ...}`` (a workload section's numbers) or ``{"cell", "column"}``
    (summary.csv)."""

    value: float | None
    unit: str = ""
    ci_low: float | None = None
    ci_high: float | None = None
    n_reps: int | None = None
    ci_method: str = ""
    ref: dict = field(default_factory=dict)
    #: a growth slope's basis and floors (:class:`Estimate`): from fewer than 3 floors it is
    #: written as a rate between collections, never a growth rate
    basis: str = ""
    floors: int | None = None
    #: the most drops any repetition saw (:attr:`Estimate.drops`; 0: no collection seen)
    drops: int | None = None

    @classmethod
    def of(cls, e: Estimate, group: str) -> "Number":
        """The headline value of an estimate of group ``group`` (its label)."""
        return cls(e.value, e.unit, e.ci_low, e.ci_high, e.n_reps, e.ci_method, {"group": group, "metric": e.metric},
                   e.basis, e.floors, e.drops)

    @classmethod
    def rel(cls, d: Difference) -> "Number":
        """A difference's relative value b/a − 1 (a fraction) with its CI."""
        return cls(d.rel, "relative", d.rel_low, d.rel_high, None, d.ci_method,
                   {"a": d.a, "b": d.b, "metric": d.metric, "field": "rel"})

    @classmethod
    def diff(cls, d: Difference) -> "Number":
        """A difference b − a in the metric's unit with its CI."""
        return cls(d.diff, d.unit, d.diff_low, d.diff_high, None, d.ci_method,
                   {"a": d.a, "b": d.b, "metric": d.metric, "field": "diff"})

    @property
    def excludes_zero(self) -> bool | None:
        """Whether the CI excludes 0 (None without an interval)."""
        if self.ci_low is None or self.ci_high is None or self.ci_method == "exact":
            return None if self.ci_method != "exact" else bool(self.value != 0)
        return bool(self.ci_low > 0 or self.ci_high < 0)  # a Python bool, also for numpy bounds

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return {k: clean(v) for k, v in asdict(self).items()}


@dataclass
class Finding:
    """One sentence: ``parts`` are plain text and :class:`Number` in reading order; ``scope``
    says what was measured (browser + version · adapter · real/emulated WebGPU — workload);
    ``flags`` are caveats shown with it (CPU adapter, emulated WebGPU, environment differs)."""

    kind: str
    scope: str
    parts: list
    flags: list[str] = field(default_factory=list)
    #: what one step of the scope's workload is called in a rate: ``token`` (a decoder's), else
    #: ``step`` (its scope says what one step is: harness/own_terms.py STEP_UNITS)
    step: str = "token"
    #: the variants (with their sweep point) the sentence speaks of; named after it where the
    #: sentence does not name each already (harness/report/findings.py ``compute`` fills it)
    covers: list[str] = field(default_factory=list)

    @property
    def numbers(self) -> list[Number]:
        """The numbers of the sentence, in order."""
        return [p for p in self.parts if isinstance(p, Number)]

    def text(self, fmt: Callable[[Number], str] | None = None) -> str:
        """The sentence as plain text, numbers written by ``fmt`` (default :func:`quantity`)."""
        text = self._sentence(fmt)
        return text + self._covers_note(text)

    def covers_note(self) -> str:
        """What :meth:`text` adds after the sentence: `` (variants: fresh, reuse)`` when the
        sentence does not name each variant it covers, else ''; the HTML report writes it after
        the sentence's parts too."""
        return self._covers_note(self._sentence(None))

    def _sentence(self, fmt: Callable[[Number], str] | None) -> str:
        fmt = fmt or quantity
        text = "".join(fmt(p) if isinstance(p, Number) else str(p) for p in self.parts)
        if self.step != "token":  # a rate of a workload whose step is not a token says "per step"
            text = re.sub(r"(?<=[ /])token(s?)\b", self.step + r"\1", text)
        return text

    def _covers_note(self, text: str) -> str:
        unnamed = [v for v in self.covers if not re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-])", text)]
        if unnamed:  # every finding names what it covers
            return f" (variant{'s' if len(self.covers) > 1 else ''}: {', '.join(self.covers)})"
        return ""

    def to_dict(self) -> dict:
        """``stats.json`` → ``findings[]``: kind, scope, flags, the plain ``text`` and ``numbers``."""
        return {"kind": self.kind, "scope": self.scope, "flags": self.flags, "step": self.step, "covers": self.covers,
                "text": self.text(),
                "numbers": [n.to_dict() for n in self.numbers]}


def quantity(n: Number) -> str:
    """How a finding's number is written: ``42``, ``6.14 [-0.5, 16.2]``, ``12.3 KiB/token [...]``,
    ``-100%``, ``+7.4% [-10.7%, +22.8%]``; ``(1 repetition, no interval)`` when one repetition gave none;
    what is missing (``too few samples (n=4; needs 10)``) when too few points stood behind it."""
    if n.value is None and n.ci_method.startswith("too few"):
        return n.ci_method  # what is missing, never a bare dash
    if n.unit == "relative":
        if n.value is None:
            return F.MISSING
        ci = ("" if n.ci_low is None or n.ci_method == "exact" or n.ci_low == n.ci_high
              else f" [{n.ci_low * 100:+.1f}%, {n.ci_high * 100:+.1f}%]")
        return f"{n.value * 100:+.1f}%{ci}"
    point = n.ci_low is not None and n.ci_low == n.ci_high  # every resample/slope equal: no spread to show
    text = F.estimate({"value": n.value, "unit": n.unit, "ci_low": n.ci_low, "ci_high": n.ci_high,
                       "ci_method": "exact" if point else n.ci_method, "basis": n.basis, "floors": n.floors,
                       "drops": n.drops})
    if n.unit in ("ms", "µs"):
        text += f" {n.unit}"
    if n.ci_low is None and n.n_reps == 1 and n.ci_method in ("", "none", "t"):
        text += " (1 repetition, no interval)"
    elif n.ci_low is None and n.ci_method.startswith("too few") and n.ci_method not in text:
        text += f" ({n.ci_method}: no interval)"  # once: F.estimate may have said it already
    return text


@dataclass
class Inputs:
    """What a finding function reads: ``tables`` (harness.tables.Tables), ``run``
    (:class:`RunStats`), ``workloads`` (section id → numbers, harness/stats/workloads/)."""

    tables: Any
    run: RunStats
    workloads: dict = field(default_factory=dict)

    def scope(self, g: GroupStats) -> str:
        """:func:`scope` of ``g``, naming the parameters that differ between this run's groups
        of the same workload (every parameter is in manifest.json; most are the defaults)."""
        return scope(g, varying_params(self.run, g.key.workload))


def varying_params(run: RunStats, workload: str) -> set[str]:
    """Parameter names whose values differ between the groups of ``workload`` in ``run``."""
    seen: dict[str, set[str]] = {}
    for k in run.groups:
        if k.workload == workload:
            for p, v in json.loads(k.params or "{}").items():
                seen.setdefault(p, set()).add(json.dumps(v, sort_keys=True))
    return {p for p, vs in seen.items() if len(vs) > 1}


# ----------------------------------------------------------------------------------------------
# helpers


def env_row(g: GroupStats) -> dict:
    """A provenance row of a group (browser, version, adapter, webgpu, machine) for
    :func:`harness.report.format.provenance`."""
    first = {k: (v[0] if v else "") for k, v in g.env.items()}
    return {"browser": g.key.browser, "browser_version": first.get("browser_version", ""),
            "adapter": first.get("adapter", ""), "webgpu": first.get("webgpu", ""), "machine": g.key.machine}


def measured_on(g: GroupStats) -> str:
    """Where a group's numbers came from, the console's ``measured on:`` words
    (:func:`harness.stats.provenance.provenance`): ``chromium 156 · google swiftshader · real
    WebGPU``; several versions or adapters among its repetitions are each named."""
    rows = [{**env_row(g), "browser_version": v, "adapter": a, "webgpu": w}
            for v in (g.env.get("browser_version") or [""]) for a in (g.env.get("adapter") or [""])
            for w in (g.env.get("webgpu") or [""])]
    return " / ".join(dict.fromkeys(F.provenance(r) for r in rows))


def compared_on(c) -> list[str]:
    """A comparison's ``measured on:`` lines (console, summary.md, one per distinct pair):
    ``measured on: chromium 156 · google swiftshader · real WebGPU (A and B)``, or A's and B's."""
    pairs = dict.fromkeys((measured_on(m.a), measured_on(m.b)) for m in c.matches)
    return [f"measured on: {a} (A and B)" if a == b else f"measured on: A {a}; B {b}" for a, b in pairs]


def values_basis(metrics) -> str:
    """Which of ``metrics`` are measured and which modeled, in words (a table's provenance line):
    ``modeled_*`` metrics come from emulated WebGPU's memory model (web/emulation/), every other
    one was measured (probes' counts, the harness clock's times, psutil's RSS, CDP's JS heap)."""
    modeled = [m for m in metrics if m.startswith("modeled_")]
    return ("measured: every value" if not modeled else
            f"modeled (emulated WebGPU's memory model): {', '.join(modeled)}; measured: every other value")


def scope(g: GroupStats, show_params: set[str] | None = None) -> str:
    """``chromium 156 · google swiftshader · real WebGPU — decode-loop@tiny`` (and the
    parameters named in ``show_params``; ``, steps with size_bytes=256`` for one value of a list
    parameter)."""
    k = g.key
    params = {p: v for p, v in json.loads(k.params or "{}").items() if p in (show_params or set())}
    extra = " " + ", ".join(f"{p}={v}" for p, v in params.items()) if params else ""
    profile = f"@{k.profile}" if k.profile not in ("", "default") else ""
    part = f", steps with {k.part}" if k.part else ""  # one value of a list parameter (never pooled)
    unit = STEP_UNITS.get(k.workload)
    step = f" (one step = one {unit})" if unit else ""
    return f"{F.provenance(env_row(g))} — {k.workload}{profile}{step}{extra}{part}"


def time_flags(g: GroupStats) -> list[str]:
    """Caveats of a time measured in ``g``: a CPU adapter's times are not GPU times; emulated
    WebGPU runs no shaders."""
    row = env_row(g)
    if row["webgpu"] == "emulated":
        return ["emulated WebGPU: no shader runs, times are not comparable with a GPU's"]
    cls = adapter_class(row, None)
    return [f"{row['adapter']}: {cls}"] if cls.startswith("CPU adapter") else []


def families(run: RunStats) -> list[list[GroupStats]]:
    """Groups with ok cells, by family (everything but the variant), in plan order."""
    out: dict[tuple, list[GroupStats]] = {}
    for key, g in run.groups.items():
        if g.cells and key.workload not in NOT_TOKENS:
            out.setdefault(key.family, []).append(g)
    return list(out.values())


def find_difference(run: RunStats, a: GroupStats, b: GroupStats, metric: str) -> Difference | None:
    """The difference b − a of ``metric`` computed by the statistics (either order), or None."""
    for d in run.differences:
        if d.metric == metric and d.a == a.key.label and d.b == b.key.label:
            return d
    return None


def _not_significant(n: Number) -> list:
    return [" (CI includes 0)"] if n.excludes_zero is False and n.ci_method != "exact" else []


def per_variant(run: RunStats, fam: list[GroupStats], metric: str, relative: bool = True,
                mark_zero: bool = False) -> list:
    """Parts ``fresh 42; reuse 0 (-100% vs fresh)``: each variant's estimate of ``metric``, the
    first as reference for the relative differences the statistics computed."""
    parts: list = []
    have = [g for g in fam if metric in g.metrics]
    for i, g in enumerate(have):
        n = Number.of(g.metrics[metric], g.key.label)
        parts += ([] if i == 0 else ["; "]) + [f"{g.key.variant} ", n]
        if mark_zero:
            parts += _not_significant(n)
        d = find_difference(run, have[0], g, metric) if i and relative else None
        if d is not None and d.rel is not None and not (d.rel == 0 and d.ci_method == "exact"):
            parts += [" (", Number.rel(d), f" vs {have[0].key.variant})"]
    return parts
