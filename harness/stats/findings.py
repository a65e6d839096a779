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

from typing import Any, Callable

from harness.report import format as F
from harness.stats.finding import (FIELD_KILL_BYTES, FUSION_PAIRS, PROCESS_ROLES, Finding, Inputs, Number, families,
                                   find_difference, per_variant, time_flags)
from harness.stats.metrics import HEADLINE
from harness.stats.run import Estimate, GroupStats, RunStats



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
                elif t is not None:
                    parts += [" with no significant change in ms per token"]
        out.append(Finding("dispatches", inp.scope(have[0]), parts + ["."],
                           time_flags(have[0]) if any(isinstance(p, str) and "ms per token" in p for p in parts) else []))
    return out


def live_growth(inp: Inputs) -> list[Finding]:
    """Live GPUBindGroup wrappers' growth per token per variant (Theil–Sen slope, per engine)."""
    out = []
    for fam in families(inp.run):
        if any("live_bind_groups_growth_per_token" in g.metrics for g in fam):
            out.append(Finding("live_growth", inp.scope(fam[0]),
                               ["Live bind groups grow per token: "]
                               + per_variant(inp.run, fam, "live_bind_groups_growth_per_token", relative=False,
                                             mark_zero=True) + ["."]))
    return out


def memory_metrics(g: GroupStats) -> list[tuple[str, str]]:
    """(label, growth metric) of each memory series ``g`` has: content and GPU process RSS (by
    :data:`PROCESS_ROLES`), modeled native bytes (emulated WebGPU) and the worker's JS heap."""
    out = []
    for role, label in (("content", "content process RSS"), ("gpu", "GPU process RSS")):
        for ptype in PROCESS_ROLES[role]:
            if f"rss_growth_bytes_per_token_{ptype}" in g.metrics:
                out.append((f"{label} ({ptype})", f"rss_growth_bytes_per_token_{ptype}"))
                break
    out += [(label, m) for label, m in (("modeled native bytes of live bind groups (a model)",
                                         "modeled_native_growth_bytes_per_token"),
                                        ("worker JS heap", "js_heap_growth_bytes_per_token")) if m in g.metrics]
    return out


def _classification(e: Estimate) -> Any:
    """The statistics' classification of a growth series (bounded / growing until collected /
    retained growth, with the floor slope) when the estimate carries one; else None."""
    return getattr(e, "classification", None)


def memory_growth(inp: Inputs) -> list[Finding]:
    """Memory growth per token per process type (and modeled native bytes, JS heap): one
    sentence per series with a significant slope in some variant; the rest in one sentence."""
    out = []
    for fam in families(inp.run):
        series: dict[str, str] = {}
        for g in fam:
            series.update(dict(memory_metrics(g)))
        flat = []
        for label, metric in series.items():
            parts = per_variant(inp.run, fam, metric, relative=False, mark_zero=True)
            nums = [p for p in parts if isinstance(p, Number)]
            if not any(n.excludes_zero for n in nums):
                flat.append(label)
                continue
            classes = [(g.key.variant, _classification(g.metrics[metric])) for g in fam if metric in g.metrics]
            extra = [f"; classified: {', '.join(f'{v} {c}' for v, c in classes if c)}"] if any(c for _, c in classes) else []
            out.append(Finding("memory_growth", inp.scope(fam[0]), [f"{label[0].upper()}{label[1:]} grows per token: "]
                               + parts + extra + ["."]))
        if flat:
            out.append(Finding("memory_growth", inp.scope(fam[0]),
                               [f"No significant growth per token (every 95% CI includes 0): {', '.join(flat)}."]))
    return out


def memory_budget(inp: Inputs) -> list[Finding]:
    """The token at which the memory budget was passed (summary.csv ``would_be_killed_at_token``:
    content-process RSS plus modeled native bytes), or, for a configuration that stayed under it,
    the token at which it would be passed: the statistics' projection by memory class when the
    analysis has one (``memory`` numbers: bounded series are not projected), else — at a content
    memory growth whose CI is above 0 — (budget − peak) ÷ slope after its last token, range
    from the slope's CI."""
    s = inp.tables.summary
    mem_rows = (inp.workloads.get("memory") or {}).get("rows") or []
    budget_col = s["memory_budget_bytes"].dropna() if "memory_budget_bytes" in s else []
    budget = float(budget_col.iloc[0]) if len(budget_col) else None
    out = []
    for fam in families(inp.run):
        parts: list = []
        projected = False
        for g in fam:
            rows = s[s["cell"].isin(g.cells)]
            passed = rows["would_be_killed_at_token"].dropna() if budget else []
            if len(passed):
                parts += ["; " if parts else "", f"{g.key.variant} passed it at token "]
                for i, (_, r) in enumerate(rows.dropna(subset=["would_be_killed_at_token"]).iterrows()):
                    parts += [", " if i else "", Number(float(r["would_be_killed_at_token"]), "token", n_reps=1,
                                                        ci_method="measured",
                                                        ref={"cell": r["cell"], "column": "would_be_killed_at_token"}),
                              f" (r{r['repetition']})"]
                continue
            classified = [r for r in mem_rows if r.get("group") == g.key.label]
            theirs = [r for r in classified if r.get("projected_tokens_to_budget") is not None]
            if theirs:  # the statistics projected it by class (floor slope or rate between collections)
                r = min(theirs, key=lambda r: r["projected_tokens_to_budget"])
                parts += ["; " if parts else "", f"{g.key.variant} would pass it near token ",
                          Number(float(r["projected_tokens_to_budget"]), "token", None, None, 1, "projection",
                                 {"workload": "memory", "cell": r["cell"], "series": r["series"],
                                  "field": "projected_tokens_to_budget"}),
                          f" ({r.get('label') or r['series']}, {r.get('class')}: {r.get('projection_basis')})"]
                projected = True
                continue
            proj = None if classified else projection(g, budget or FIELD_KILL_BYTES, rows)
            if proj is not None:
                parts += ["; " if parts else "", f"{g.key.variant} would pass it near token ", proj]
                projected = True
            elif budget:
                parts += ["; " if parts else "", f"{g.key.variant} stayed under it for all "
                          f"{int(rows['steps_received'].max())} tokens"]
        if not parts:
            continue
        which = (f"--memory-budget {budget / 1e6:,.0f} MB" if budget else
                 f"iOS's {FIELD_KILL_BYTES / 1e6:,.0f} MB kill in the onnxruntime field report (no --memory-budget given)")
        how = (" (projected from the growth per token measured here, after the last token; range from the slope's "
               "95% CI)") if projected else ""
        out.append(Finding("memory_budget", inp.scope(fam[0]), [f"Memory budget ({which}): "] + parts + [f"{how}."]))
    return out


def projection(g: GroupStats, budget: float, rows) -> Number | None:
    """Token at which ``g`` would pass ``budget`` bytes: after its last token, (budget − peak
    content memory) ÷ growth, where growth is the modeled native bytes' slope under emulated
    WebGPU, else the content process's RSS slope; only for a growth whose CI is above 0."""
    metric = "modeled_native_growth_bytes_per_token" if "modeled_native_growth_bytes_per_token" in g.metrics else None
    if metric is None:
        metric = next((m for _, m in memory_metrics(g) if m.startswith("rss_growth") and "content" in _role(m)), None)
    e = g.metrics.get(metric) if metric else None
    if e is None or e.value is None or e.ci_low is None or e.ci_low <= 0:
        return None
    peak = rows["content_rss_bytes_max"].dropna().mean() if "content_rss_bytes_max" in rows else 0.0
    peak = (0.0 if peak != peak else float(peak)) + float(rows["modeled_native_bytes_max"].dropna().mean()
                                                         if rows["modeled_native_bytes_max"].notna().any() else 0.0)
    last = float(rows["steps_received"].max() - 1)
    remaining = budget - peak
    if remaining <= 0:
        return None
    at = lambda slope: last + remaining / slope  # noqa: E731 - one formula, three slopes
    hi = at(e.ci_low)
    lo = at(e.ci_high) if e.ci_high and e.ci_high > 0 else None
    return Number(round(at(e.value)), "token", round(lo) if lo else None, round(hi) if lo else None, e.n_reps,
                  "theil-sen", {"group": g.key.label, "metric": e.metric, "projection_bytes": budget})


def _role(metric: str) -> str:
    ptype = metric.rsplit("per_token_", 1)[-1]
    return next((role for role, types in PROCESS_ROLES.items() if ptype in types), "")


def time_per_token(inp: Inputs) -> list[Finding]:
    """ms per token differences between variants, only the significant ones, with the adapter
    named and CPU-adapter/emulated times flagged; one plain sentence when none is."""
    out = []
    for fam in families(inp.run):
        sig = [d for d in inp.run.differences if d.metric == "ms_per_token" and d.significant
               and d.a in {g.key.label for g in fam}]
        if not any("ms_per_token" in g.metrics for g in fam) or len(fam) < 2:
            continue
        labels = {g.key.label: g.key.variant for g in fam}
        if not sig:
            out.append(Finding("time_per_token", inp.scope(fam[0]),
                               [f"No significant difference in ms per token between "
                                f"{', '.join(g.key.variant for g in fam)} (95% CIs of the differences include 0)."],
                               time_flags(fam[0])))
            continue
        parts: list = ["ms per token: "]
        for i, d in enumerate(sig):
            parts += ["; " if i else "", f"{labels.get(d.b, d.b)} vs {labels.get(d.a, d.a)} ", Number.rel(d),
                      " (", Number.diff(d), ")"]
        out.append(Finding("time_per_token", inp.scope(fam[0]), parts + ["."], time_flags(fam[0])))
    return out


def dispatch_overhead(inp: Inputs) -> list[Finding]:
    """dispatch-overhead in its own terms: µs per dispatch of single-op and sequential (and
    batched-16, one-pass) and the single-op ÷ sequential ratio, per cell."""
    n = inp.workloads.get("dispatch-overhead") or {}
    out = []
    for m in n.get("methods", []):
        parts: list = ["Wall time per dispatch: "]
        shown = [c for c in ("single-op", "sequential", "batched-16", "one-pass") if (m["per"].get(c) or (None,))[0] is not None]
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
        out.append(Finding("dispatch_overhead", f"{F.provenance(row)} — dispatch-overhead, bind groups {row.get('variant')}",
                           parts + [" (mean over rounds after warm-up)."], flags))
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
        out.append(Finding("gc_collections", f"{prov} — gc-retention", parts + ["."]))
    return out


#: Words of the statistics' memory classes (harness/stats/memory.py, when present).
CLASS_WORDS = {"bounded": "bounded", "growing-until-collected": "growing until collected",
               "retained-growth": "retained growth"}


def _shown_series(name: str) -> bool:
    """The memory series findings speak of: everything but the RSS of processes that are neither
    the content nor the GPU process (browser, utility, zygote, network…: in memory_series.csv)."""
    if not name.startswith("rss_bytes_"):
        return True
    return any(name[len("rss_bytes_"):] in types for types in PROCESS_ROLES.values())


def memory_classes(inp: Inputs) -> list[Finding]:
    """The statistics' classification of every memory series (the ``memory`` numbers: rows of
    memory_series.csv, one per cell × series, when the analysis has them): per configuration
    family and series, each variant's class, and for retained growth the floor slope per
    repetition with its 95% CI (growth that collections do not take back: a leak). One sentence
    per family for the series that are bounded everywhere."""
    rows = (inp.workloads.get("memory") or {}).get("rows") or []
    if not rows:
        return []
    out = []
    for fam in families(inp.run):
        labels = {g.key.label: g for g in fam}
        mine = [r for r in rows if r.get("group") in labels and _shown_series(r.get("series", ""))]
        series = list(dict.fromkeys(r["series"] for r in mine))
        calm = []
        for name in series:
            rs = [r for r in mine if r["series"] == name]
            if all(r.get("class") == "bounded" for r in rs):
                calm.append(rs[0].get("label") or name)
                continue
            parts: list = [f"{(rs[0].get('label') or name)[:1].upper()}{(rs[0].get('label') or name)[1:]}: "]
            for i, g in enumerate(g for g in fam if any(r["group"] == g.key.label for r in rs)):
                gr = [r for r in rs if r["group"] == g.key.label]
                kinds = list(dict.fromkeys(CLASS_WORDS.get(r.get("class"), str(r.get("class"))) for r in gr))
                parts += ["; " if i else "", f"{g.key.variant} {' / '.join(kinds)}"]
                leaks = [r for r in gr if r.get("class") == "retained-growth" and r.get("floor_slope") is not None]
                for j, r in enumerate(leaks):
                    parts += [", floor slope " if j == 0 else ", ",
                              Number(r["floor_slope"], f"{r.get('unit', '')}/token", r.get("floor_ci_low"),
                                     r.get("floor_ci_high"), 1, "theil-sen",
                                     {"workload": "memory", "cell": r["cell"], "series": name, "field": "floor_slope"})]
            out.append(Finding("memory_classes", inp.scope(fam[0]), parts + ["."]))
        if calm:
            out.append(Finding("memory_classes", inp.scope(fam[0]),
                               [f"Bounded (collections bring them back): {', '.join(calm)}."]))
    return out


#: Every finding, in the order a report shows them: (function, what it says).
FINDINGS: tuple[Callable[[Inputs], list[Finding]], ...] = (
    bind_groups, live_growth, memory_growth, memory_classes, memory_budget, dispatches, time_per_token,
    dispatch_overhead, gc_collections,
)


def compute(tables, run: RunStats, workloads: dict | None = None) -> list[Finding]:
    """Every :data:`FINDINGS` function's findings for a run, grouped by scope (browser · adapter
    · WebGPU — workload) in the order scopes first appear, in :data:`FINDINGS` order within one."""
    inp = Inputs(tables, run, workloads or {})
    out = [f for fn in FINDINGS for f in fn(inp)]
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
                parts += [" (not significant)" if d.significant is False else " (no interval)"]
        flags = [f"environment differs: {'; '.join(m.env_differs)}"] if m.env_differs else []
        flags += time_flags(m.b) if any(d.metric == "ms_per_token" for d in shown) else []
        out.append(Finding("compare", m.label, parts + ["."], flags))
    return out
