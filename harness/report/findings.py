"""The findings a report opens with: one sentence per finding, each number chosen from the
statistics of the run (estimates and differences of harness/stats/run.py, the workload numbers
of harness/stats/workloads/) with its 95% CI. Nothing is estimated here; this module chooses
which numbers a newcomer should read first and words them.

A finding function takes :class:`Inputs` and returns a list of :class:`Finding`;
:data:`FINDINGS` lists them in report order. A new kind of finding (e.g. a classification of
memory series) is one function and one line in that tuple. :class:`Number` keeps where each
number lives in ``stats.json`` (``ref``), so a test can check the report against it.

Where a statement is about time, the finding carries a flag naming the adapter when it is a
CPU adapter (SwiftShader, llvmpipe: "not GPU times") or emulated WebGPU (no shader runs).
Token-based findings leave out workloads whose steps are not tokens (:data:`NOT_TOKENS`);
those have their own finding (``dispatch-overhead``: µs per dispatch per method).
"""

from __future__ import annotations

from typing import Callable

from harness.report import format as F
from harness.report.finding import Finding, FUSION_PAIRS, Inputs, Number, families, find_difference, per_variant, time_flags
from harness.report.memory_findings import gc_checkpoints, memory_budget, memory_classes, memory_growth
from harness.stats.metrics import HEADLINE
from harness.stats.run import RunStats



def bind_groups(inp: Inputs) -> list[Finding]:
    """createBindGroup calls per token per variant, and the reduction each variant gives
    relative to the first (the fix's effect)."""
    out = []
    for fam in families(inp.run):
        if any("bind_groups_per_token" in g.metrics for g in fam):
            out.append(Finding("bind_groups", inp.scope(fam[0]),
                               ["createBindGroup calls per token: "]
                               + per_variant(inp.run, fam, "bind_groups_per_token") + ["."]))
    return out


def unbounded_cache(inp: Inputs) -> list[Finding]:
    """A bind group cache that never evicts (harness/stats/workloads/bind_group_cache.py): per
    configuration with a cache at work whose live bind groups keep growing, named as an
    unbounded cache where the run shows the GC does not take them back, else said to be
    unresolved and why (no collection ran, or too few samples)."""
    n = (inp.workloads.get("memory") or {}).get("bind_group_cache") or {}
    groups = {g.key.label: g for fam in families(inp.run) for g in fam}
    out = []
    for r in n.get("rows", []):
        g = groups.get(r["group"])
        if g is None:
            continue
        created = Number.of(g.metrics["bind_groups_per_token"], g.key.label)
        dispatches = Number.of(g.metrics["dispatches_per_token"], g.key.label)
        head = [f"{g.key.variant}{' ' + g.key.sweep if g.key.sweep else ''}: createBindGroup per token ", created,
                " of ", dispatches, " dispatches (a bind group cache at work)"]
        if r["verdict"] == "too-few-samples":
            parts = head + [f"; whether it keeps what it creates: {r['why']}."]
        else:
            growth = Number.of(g.metrics["live_bind_groups_growth_per_token"], g.key.label)
            parts = head + ([", while live bind groups ", growth] if growth.basis and "series" in growth.basis.split("+")
                            else [", while live bind groups grow ", growth, " per token"])
            if r["verdict"] == "unbounded":
                held = f", holding {r['live_end']:,.0f} at the end" if r.get("live_end") is not None else ""
                parts += [f": {r['why']} — a bind group cache that never evicts, unbounded (pixi.js and Defold "
                          f"shipped this fault: a cache must drop the entries of buffers that go away){held}; a "
                          "cap above that would not have been reached in this run."]
            else:
                parts += [f": possibly a cache that never evicts, not resolved: {r['why']}."]
        out.append(Finding("unbounded_cache", inp.scope(g), parts,
                           covers=[f"{g.key.variant}{' ' + g.key.sweep if g.key.sweep else ''}"]))
    return out


def dispatches(inp: Inputs) -> list[Finding]:
    """Dispatches per token; with a fused variant, what fusion saves in dispatches and, when the
    difference is significant, in ms per token."""
    out = []
    for fam in families(inp.run):
        have = [g for g in fam if "dispatches_per_token" in g.metrics]
        if not have:
            continue
        values = {g.metrics["dispatches_per_token"].value for g in have}
        if len(values) == 1:
            parts = ["Dispatches per token: ", Number.of(have[0].metrics["dispatches_per_token"], have[0].key.label),
                     f" in every variant ({', '.join(g.key.variant for g in have)})"]
        else:
            parts = ["Dispatches per token: "] + per_variant(inp.run, have, "dispatches_per_token")
        by_variant = {g.key.variant: g for g in have}
        for unfused, fused in FUSION_PAIRS:
            if unfused in by_variant and fused in by_variant:
                a, b = by_variant[unfused], by_variant[fused]
                d = find_difference(inp.run, a, b, "dispatches_per_token")
                if d is not None:
                    parts += [f"; fusion ({unfused} → {fused}) changes them by ", Number.diff(d), " (", Number.rel(d), ")"]
                t = find_difference(inp.run, a, b, "ms_per_token")
                if t is not None and t.significant:
                    parts += [" and ms per token by ", Number.rel(t)]
                elif t is not None and t.significant is False:
                    parts += [" with no significant change in ms per token"]
                elif t is not None:
                    parts += [f" (ms per token: no significance claimed, {t.evidence})"]
        out.append(Finding("dispatches", inp.scope(have[0]), parts + ["."],
                           time_flags(have[0]) if any(isinstance(p, str) and "ms per token" in p for p in parts) else []))
    return out


def live_growth(inp: Inputs) -> list[Finding]:
    """Live GPUBindGroup wrappers' growth per token per variant (Theil–Sen slope, per engine)."""
    out = []
    for fam in families(inp.run):
        if any("live_bind_groups_growth_per_token" in g.metrics for g in fam):
            out.append(Finding("live_growth", inp.scope(fam[0]),
                               ["Live bind groups, growth per token: "]
                               + per_variant(inp.run, fam, "live_bind_groups_growth_per_token", relative=False,
                                             mark_zero=True) + ["."]))
    return out


def time_per_token(inp: Inputs) -> list[Finding]:
    """ms per token differences between variants, only the significant ones, with the adapter
    named and CPU-adapter/emulated times flagged; one plain sentence for the rest: not
    significant (across repetitions), or no significance claimed and why (one repetition: the
    interval is within-run only)."""
    out = []
    for fam in families(inp.run):
        if not any("ms_per_token" in g.metrics for g in fam) or len(fam) < 2:
            continue
        labels = {g.key.label: g.key.variant for g in fam}
        diffs = [d for d in inp.run.differences if d.metric == "ms_per_token" and d.a in labels]
        sig = [d for d in diffs if d.significant]
        unclaimed = [d for d in diffs if d.significant is None]
        if sig:
            parts: list = ["ms per token: "]
            for i, d in enumerate(sig):
                parts += ["; " if i else "", f"{labels.get(d.b, d.b)} vs {labels.get(d.a, d.a)} ", Number.rel(d),
                          " (", Number.diff(d), ")"]
            out.append(Finding("time_per_token", inp.scope(fam[0]), parts + ["."], time_flags(fam[0])))
        elif len(unclaimed) < len(diffs):
            out.append(Finding("time_per_token", inp.scope(fam[0]),
                               [f"No significant difference in ms per token between "
                                f"{', '.join(g.key.variant for g in fam)} ("
                                + "; ".join(sorted({d.standing for d in diffs if d.significant is False}))
                                + ")."], time_flags(fam[0])))
        if unclaimed:
            pairs = ", ".join(f"{labels.get(d.b, d.b)} vs {labels.get(d.a, d.a)}" for d in unclaimed)
            why = "; ".join(sorted({d.evidence for d in unclaimed}))
            # the hint only where fewer repetitions are what is missing (not emulation, not shared processes)
            hint = ("; --repeat 2 or more compares across repetitions"
                    if any("within-run only" in d.evidence for d in unclaimed) else "")
            out.append(Finding("time_per_token", inp.scope(fam[0]),
                               [f"ms per token, {pairs}: no significance claimed ({why}{hint})."], time_flags(fam[0])))
    return out


def dispatch_overhead(inp: Inputs) -> list[Finding]:
    """dispatch-overhead in its own terms: µs per dispatch of single-op and sequential (and
    batched-16, one-pass) and the single-op ÷ sequential ratio, per cell."""
    n = inp.workloads.get("dispatch-overhead") or {}
    out = []
    for m in n.get("methods", []):
        parts: list = ["Wall time per dispatch: "]
        shown = [c for c in ("single-op", "sequential", "batched-16", "one-pass") if (m["per"].get(c) or (None,))[0] is not None]
        if not shown and m["factor"][0] is None:  # sync-latency methods only (sync_latency says those), or kernel-only
            continue
        for i, c in enumerate(shown):
            mean, lo, hi, k = m["per"][c]
            parts += ["; " if i else "", f"{c} ", Number(mean, "µs", lo, hi, k, "t",
                                                         {"workload": "dispatch-overhead", "cell": m["cell"], "config": c})]
        f_mean, f_lo, f_hi, f_n = m["factor"]
        if f_mean is not None:
            parts += ["; single-op ÷ sequential ", Number(f_mean, "×", f_lo, f_hi, f_n, "t",
                                                           {"workload": "dispatch-overhead", "cell": m["cell"],
                                                            "config": "single-op/sequential"}), "×"]
        row = m["row"]
        flags = [f"{row.get('adapter')}: {m['adapter_class']}"] if m["adapter_class"].startswith("CPU") else []
        g = next((g for g in inp.run.groups.values() if m["cell"] in g.cells), None)
        sweep = f" [{g.key.sweep}]" if g is not None and g.key.sweep else ""  # a sweep's points: one sentence each
        rounds = max((m["per"][c][3] or 0 for c in shown), default=0)
        over = f"{rounds} round{'s' if rounds != 1 else ''}" if rounds else "rounds"
        basis = f" (mean over {over} after warm-up; 1 repetition: within-run only)."
        out.append(Finding("dispatch_overhead", f"{F.provenance(row)} — dispatch-overhead, bind groups {row.get('variant')}{sweep}",
                           parts + [basis], flags, covers=[str(row.get("variant"))]))
    return out


def sync_latency(inp: Inputs) -> list[Finding]:
    """dispatch-overhead's sync-latency methods (``--param methods=sync-…``): per configuration
    (pacing × thread), the median µs of one wait for the GPU per method with its 95% CI and the
    timed syncs behind it (harness/stats/workloads/sync_latency.py, the Sync latency section)."""
    n = inp.workloads.get("sync-latency") or {}
    by_group: dict[str, list[dict]] = {}
    for r in n.get("rows", []):
        by_group.setdefault(r["group"], []).append(r)
    groups = {k.label: g for k, g in inp.run.groups.items()}
    out = []
    for label, rows in by_group.items():
        first, g = rows[0], groups.get(label)
        if g is None:
            continue
        parts: list = [f"Sync latency, median µs per wait for the GPU (pacing {first['pacing']}, {first['thread']} thread): "]
        same = len({(r["syncs"], r["runs"]) for r in rows}) == 1
        for i, r in enumerate(rows):
            parts += ["; " if i else "", f"{r['method']} ", Number.of(r["median"], label)]
            spread = [F.number(r[k].value) if r.get(k) is not None and r[k].value is not None else None
                      for k in ("p10", "p90")]  # a median alone hides two clusters of waits (sync-dispatch here)
            parts += [f" (p10–p90: {spread[0]}–{spread[1]} µs)"] if None not in spread else []
            parts += [] if same else [f" (n={r['syncs']:,} syncs in {r['runs']} rounds)"]
        reps = min(r["reps"] for r in rows)
        each = " each" if len(rows) > 1 else ""
        parts += [f" (n={first['syncs']:,} syncs in {first['runs']} rounds{each}" if same else " (", "; " if same else "",
                  "1 repetition: within-run only)" if reps == 1 else f"{reps} repetitions pooled)"]
        out.append(Finding("sync_latency", inp.scope(g), parts + ["."], time_flags(g),
                           covers=[str(g.key.variant)]))  # bind groups fresh / reused: one scope, two sentences
    return out


def gc_collections(inp: Inputs) -> list[Finding]:
    """gc-retention: collection events per engine and variant (mean over repetitions)."""
    n = inp.workloads.get("gc-retention") or {}
    by_engine: dict[str, list[dict]] = {}
    for c in n.get("confs", []):
        if c.get("mean"):
            by_engine.setdefault(c["provenance"], []).append(c)
    out = []
    for prov, confs in by_engine.items():
        parts: list = [f"Collection events (tokens in which the engine collected bind groups) in "
                       f"{confs[0]['mean']['tokens']:.0f} tokens: "]
        for i, c in enumerate(confs):
            parts += ["; " if i else "", f"{c['variant']} ",
                      Number(c["mean"]["events"], "events", n_reps=len(c["reps"]), ci_method="count",
                             ref={"workload": "gc-retention", "variant": c["variant"], "field": "events"}),
                      f" (live max {F.number(c['mean']['live_max'])})"]
        out.append(Finding("gc_collections", f"{prov} — gc-retention", parts + ["."],
                           covers=[str(c["variant"]) for c in confs]))
    return out


#: Every finding, in the order a report shows them: (function, what it says).
FINDINGS: tuple[Callable[[Inputs], list[Finding]], ...] = (
    bind_groups, live_growth, unbounded_cache, memory_growth, memory_classes, memory_budget, gc_checkpoints, dispatches,
    time_per_token,
    dispatch_overhead, sync_latency, gc_collections,
)


def compute(tables, run: RunStats, workloads: dict | None = None) -> list[Finding]:
    """Every :data:`FINDINGS` function's findings for a run, grouped by scope (browser · adapter
    · WebGPU — workload) in the order scopes first appear, in :data:`FINDINGS` order within one."""
    inp = Inputs(tables, run, workloads or {})
    out = [f for fn in FINDINGS for f in fn(inp)]
    covered: dict[str, list[str]] = {}  # scope → the variants of its groups
    for fam in families(run):
        for g in fam:
            name = f"{g.key.variant}{' ' + g.key.sweep if g.key.sweep else ''}"
            covered.setdefault(inp.scope(g), [])
            if name not in covered[inp.scope(g)]:
                covered[inp.scope(g)].append(name)
    for f in out:  # a workload whose step is not a token: its rates are per step (its scope says what one is)
        if "(one step = one " in f.scope:
            f.step = "step"
        f.covers = f.covers or covered.get(f.scope, [])
    scopes = list(dict.fromkeys(f.scope for f in out))
    return sorted(out, key=lambda f: scopes.index(f.scope))  # by scope (engine), in FINDINGS order within one


#: Metrics every comparison finding states, significant or not (others only when significant).
COMPARE_ALWAYS = ("bind_groups_per_token", "ms_per_token")


def compare_findings(comparison) -> list[Finding]:
    """Findings of ``compare``: per matched configuration, B − A of createBindGroup and ms per
    token (said to be not significant when their CI includes 0) and of every other headline
    metric whose difference is significant, each with its relative change and 95% CI. Flags a
    configuration whose environment differs, and CPU-adapter or emulated times."""
    out = []
    for m in comparison.matches:
        shown = [d for d in m.differences if d.metric in COMPARE_ALWAYS
                 or (d.significant and d.metric in HEADLINE)]
        if not shown:
            continue
        parts: list = ["B − A: "]
        for i, d in enumerate(shown):
            parts += ["; " if i else "", f"{d.metric} ", Number.diff(d)]
            if d.rel is not None:
                parts += [" (", Number.rel(d), ")"]
            if not d.significant:
                parts += [f" ({d.verdict})" if d.significant is False else f" (no significance claimed: {d.verdict})"]
        flags = [f"environment differs: {'; '.join(m.env_differs)}"] if m.env_differs else []
        flags += time_flags(m.b) if any(d.metric == "ms_per_token" for d in shown) else []
        out.append(Finding("compare", m.label, parts + ["."], flags))
    return out
