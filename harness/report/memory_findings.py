"""The memory findings (harness/report/findings.py lists every finding): growth per token of
the content and GPU processes' RSS, modeled native bytes and the JS heap; each memory series'
class (harness/stats/floors.py); the memory budget, reached or not, and projections to it. Each
says what is missing where too few points stood behind a slope or a class."""

from __future__ import annotations

from harness.report.finding import FIELD_KILL_BYTES, PROCESS_ROLES, Finding, Inputs, Number, families
from harness.stats.floors import MIN_POINTS
from harness.stats.run import GroupStats


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


def trend_word(n: Number) -> str:
    """The verb a growth per token may carry: ``rises`` (95% CI above 0), ``falls`` (below 0),
    ``no trend stated`` (the CI includes 0, or there is none)."""
    if n.excludes_zero and (n.value or 0) > 0:
        return "rises"
    if n.excludes_zero and (n.value or 0) < 0:
        return "falls"
    return "no trend stated" if n.ci_method != "exact" or n.value else "flat"


def memory_growth(inp: Inputs) -> list[Finding]:
    """Memory growth per token per process type (and modeled native bytes, JS heap): one
    sentence per series with a slope whose CI excludes 0 in some variant, each variant's number
    after its own verb (:func:`trend_word`) and, where a configuration pooled several
    repetitions, how many (memory_series.csv and the Memory section give each cell's own fit);
    the rest in one sentence; series with too few points for a slope in every variant in
    another, saying what is missing."""
    out = []
    for fam in families(inp.run):
        series: dict[str, str] = {}
        for g in fam:
            series.update(dict(memory_metrics(g)))
        flat, few = [], []
        for label, metric in series.items():
            ests = [(g.key.variant, g.metrics[metric]) for g in fam if metric in g.metrics]
            if all(e.value is None for _, e in ests):
                few.append(f"{label} ({'; '.join(f'{v} {e.ci_method}' for v, e in ests)})")
                continue
            nums = [Number.of(g.metrics[metric], g.key.label) for g in fam if metric in g.metrics]
            if not any(n.excludes_zero for n in nums) and all(e.value is not None for _, e in ests):
                flat.append(label)
                continue
            parts: list = [f"{label[0].upper()}{label[1:]}, growth per token: "]
            for i, ((variant, e), n) in enumerate(zip(ests, nums)):
                parts += ["; " if i else "", f"{variant} "]
                if e.value is None:
                    parts.append(f"not stated ({e.ci_method})")
                    continue
                word = trend_word(n)
                parts += [f"{word} " if word != "flat" else "", n]
                parts += [" (95% CI includes 0)"] if word == "no trend stated" and n.ci_low is not None else []
                parts += [f" (pooled over {e.n_reps} repetitions)"] if (e.n_reps or 0) > 1 else []
            out.append(Finding("memory_growth", inp.scope(fam[0]), parts + ["."]))
        if flat:
            out.append(Finding("memory_growth", inp.scope(fam[0]),
                               [f"No significant growth per token (every 95% CI includes 0): {', '.join(flat)}."]))
        if few:
            out.append(Finding("memory_growth", inp.scope(fam[0]),
                               [f"No growth per token stated, too few points: {', '.join(few)}."]))
    return out


def memory_budget(inp: Inputs) -> list[Finding]:
    """Per variant: the token at which the memory budget was passed (summary.csv
    ``would_be_killed_at_token``: content-process RSS plus modeled native bytes), or that it was
    not reached, with the most it counted (``not reached (max 312 MB of 400 MB)``); and the token
    at which it would be passed: the statistics' projection by memory class of the series the
    budget counts (``memory`` numbers: never of a bounded or flat series), else — at a content
    memory growth whose CI is above 0 — (budget − peak) ÷ slope after its last token, range from
    the slope's CI."""
    s = inp.tables.summary
    mem_rows = (inp.workloads.get("memory") or {}).get("rows") or []
    budget_col = s["memory_budget_bytes"].dropna() if "memory_budget_bytes" in s else []
    budget = float(budget_col.iloc[0]) if len(budget_col) else None
    out = []
    for fam in families(inp.run):
        parts: list = []
        for g in fam:
            rows = s[s["cell"].isin(g.cells)]
            lead = ["; " if parts else "", f"{g.key.variant} "]
            passed = rows.dropna(subset=["would_be_killed_at_token"]) if budget else rows.iloc[0:0]
            if len(passed):
                parts += lead + ["passed it at token "]
                for i, (_, r) in enumerate(passed.iterrows()):
                    parts += [", " if i else "", Number(float(r["would_be_killed_at_token"]), "token", n_reps=1,
                                                        ci_method="measured",
                                                        ref={"cell": r["cell"], "column": "would_be_killed_at_token"}),
                              f" (r{r['repetition']})"]
                continue
            words: list = []
            if budget:
                counted = (rows["memory_budget_counted_bytes_max"].dropna() if "memory_budget_counted_bytes_max" in rows
                           else [])
                words += [f"not reached (max {float(max(counted)) / 1e6:,.0f} MB of {budget / 1e6:,.0f} MB)"
                          if len(counted) else "not measured (no content process RSS or modeled bytes were sampled)"]
            classified = [r for r in mem_rows if r.get("group") == g.key.label]
            theirs = [r for r in classified if r.get("projected_tokens_to_budget") is not None]
            if theirs:  # the statistics projected it by class (floor slope or rate between collections)
                r = min(theirs, key=lambda r: r["projected_tokens_to_budget"])
                words += ["; " if words else "", "would pass it near token ",
                          Number(float(r["projected_tokens_to_budget"]), "token", None, None, 1, "projection",
                                 {"workload": "memory", "cell": r["cell"], "series": r["series"],
                                  "field": "projected_tokens_to_budget"}),
                          f" ({r.get('label') or r['series']}, {r.get('class')}: {r.get('projection_basis')}, "
                          "from its last value)"]
            else:
                proj = None if classified else projection(g, budget or FIELD_KILL_BYTES, rows)
                if proj is not None:
                    words += ["; " if words else "", "would pass it near token ", proj,
                              " (content memory growth after its last token; range from the slope's 95% CI)"]
            if words:
                parts += lead + words
        if not parts:
            continue
        which = (f"--memory-budget {budget / 1e6:,.0f} MB" if budget else
                 f"iOS's {FIELD_KILL_BYTES / 1e6:,.0f} MB kill in the onnxruntime field report (no --memory-budget given)")
        out.append(Finding("memory_budget", inp.scope(fam[0]), [f"Memory budget ({which}): "] + parts + ["."]))
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


#: Words of the statistics' memory classes (harness/stats/floors.py).
CLASS_WORDS = {"too-few-samples": "too few samples", "flat": "flat", "bounded": "bounded",
               "growing-until-collected": "growing until collected", "retained-wrappers":
               "wrappers retained (buffers destroyed: not GPU memory)", "retained-growth": "retained growth"}
#: Classes said together in one sentence per family when every variant's series has them.
CALM = {"flat": "Flat (nothing new kept, nothing collected)", "bounded": "Bounded (collections bring them back)"}


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
    per family each for the series that are flat everywhere, bounded (or flat) everywhere, and
    too short for a class everywhere (with the number of points they had)."""
    rows = (inp.workloads.get("memory") or {}).get("rows") or []
    if not rows:
        return []
    out = []
    for fam in families(inp.run):
        labels = {g.key.label: g for g in fam}
        mine = [r for r in rows if r.get("group") in labels and _shown_series(r.get("series", ""))]
        series = list(dict.fromkeys(r["series"] for r in mine))
        calm: dict[str, list[str]] = {k: [] for k in CALM}
        few = []
        for name in series:
            rs = [r for r in mine if r["series"] == name]
            label = rs[0].get("label") or name
            kinds = {r.get("class") for r in rs}
            if kinds == {"too-few-samples"}:
                few.append(f"{label} (n={max(int(r.get('points') or 0) for r in rs)})")
                continue
            if kinds <= set(CALM):
                calm["flat" if kinds == {"flat"} else "bounded"].append(label)
                continue
            parts: list = [f"{label[:1].upper()}{label[1:]}: "]
            for i, g in enumerate(g for g in fam if any(r["group"] == g.key.label for r in rs)):
                gr = [r for r in rs if r["group"] == g.key.label]
                words = list(dict.fromkeys(CLASS_WORDS.get(r.get("class"), str(r.get("class")))
                                           + (f" (n={r.get('points')})" if r.get("class") == "too-few-samples" else "")
                                           for r in gr))
                parts += ["; " if i else "", f"{g.key.variant} {' / '.join(words)}"]
                leaks = [r for r in gr if r.get("class") == "retained-growth" and r.get("floor_slope") is not None]
                for j, r in enumerate(leaks):
                    parts += [", floor slope " if j == 0 else ", ",
                              Number(r["floor_slope"], f"{r.get('unit', '')}/token", r.get("floor_ci_low"),
                                     r.get("floor_ci_high"), 1, "theil-sen",
                                     {"workload": "memory", "cell": r["cell"], "series": name, "field": "floor_slope"})]
            out.append(Finding("memory_classes", inp.scope(fam[0]), parts + ["."]))
        for kind, names in calm.items():
            if names:
                out.append(Finding("memory_classes", inp.scope(fam[0]), [f"{CALM[kind]}: {', '.join(names)}."]))
        if few:
            out.append(Finding("memory_classes", inp.scope(fam[0]),
                               [f"No class, too few samples (a class needs {MIN_POINTS} positions): {', '.join(few)}."]))
    return out


def gc_checkpoints(inp: Inputs) -> list[Finding]:
    """``--gc-checkpoints N``: per cell, how many of the checkpoints its steps called for (after
    steps N-1, 2N-1…: ``(last step + 1) // N``) a forced collection was done for (``gc_checkpoint``
    samples with ``forced: true``) and how many were asked. The harness asks when it sees a step;
    steps reach it in batches (web/probes/sink.js), so one ask serves every checkpoint passed
    since the last (harness/probe/gc_checkpoints.py): fewer done than due is said, never hidden."""
    every = int((inp.tables.manifest.get("parameters") or {}).get("gc_checkpoints") or 0)
    gc = getattr(inp.tables, "gc", None)
    if every <= 0 or gc is None:
        return []
    out = []
    for fam in families(inp.run):
        parts = []
        for g in fam:
            cells = [c for c in inp.run.cells if c.key == g.key and c.status == "ok"]
            for c in cells:
                steps = c.steps["step"].dropna() if "step" in c.steps else []
                due = (int(steps.max()) + 1) // every if len(steps) else 0
                rows = gc[gc["cell"] == c.cell]
                unavailable = rows[~rows["forced"] & rows["reason"].str.startswith("not available")]
                done = int(rows["forced"].sum())
                asked = done + int((~rows["forced"]).sum()) - len(unavailable)
                who = g.key.variant + (f" r{c.repetition}" if len(cells) > 1 else "")
                if len(unavailable) and not done:
                    parts.append(f"{who} none of {due} done ({unavailable['reason'].iloc[0]})")
                    continue
                text = f"{who} {done} of {due} done"
                notes = []
                if asked < due:
                    notes.append(f"{asked} asked: {due - asked} passed while the harness had not yet seen their "
                                 "steps, one ask serving several")
                if asked > done:
                    notes.append(f"{asked - done} asked and not done (no answer, or an error)")
                parts.append(text + (f" ({'; '.join(notes)})" if notes else ""))
        if parts:
            out.append(Finding("gc_checkpoints", inp.scope(fam[0]),
                               [f"GC checkpoints (--gc-checkpoints {every}: a forced collection after every "
                                f"{every} tokens): {'; '.join(parts)}."]))
    return out
