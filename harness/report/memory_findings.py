"""The memory findings (harness/report/findings.py lists every finding): growth per token of
the content and GPU processes' RSS, modeled native bytes and the JS heap; each memory series'
class (harness/stats/floors.py); the memory budget, reached or not, and projections to it. Each
says what is missing where too few points stood behind a slope or a class."""

from __future__ import annotations

import pandas as pd

from harness.memory_budget import budget_reading
from harness.process_types import processes_of
from harness.report.finding import FIELD_KILL_BYTES, PROCESS_ROLES, Finding, Inputs, Number, families
from harness.stats.floors import MIN_FLOORS, MIN_POINTS
from harness.stats.run import GroupStats


def memory_metrics(g: GroupStats) -> list[tuple[str, str]]:
    """(label, growth metric) of each memory series ``g`` has: content and GPU process RSS (by
    :data:`PROCESS_ROLES`; summed over every process of that type in each sampling round,
    harness/stats/cells.py ``rss_rounds``, so labelled "RSS of all renderer processes (sum)", never
    as one process's), modeled native bytes (emulated WebGPU) and the worker's JS heap."""
    out = []
    for role in ("content", "gpu"):
        for ptype in PROCESS_ROLES[role]:
            if f"rss_growth_bytes_per_token_{ptype}" in g.metrics:
                out.append((f"RSS of {processes_of(ptype)} (sum)", f"rss_growth_bytes_per_token_{ptype}"))
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
                word = "rate" if "series" in (n.basis or "").split("+") else trend_word(n)
                # a growth rests on when the GC ran: from one repetition its interval is within-run
                # only, and, as for every measured difference, nothing rises or falls on it alone
                within = (e.n_reps or 0) < 2 and word in ("rises", "falls")
                word = "no trend stated" if within else word
                parts += [f"{word} " if word not in ("flat", "rate") else "", n]
                parts += [" (1 repetition: within-run only)"] if within else \
                    [" (95% CI includes 0)"] if word == "no trend stated" and n.ci_low is not None else []
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
    not reached, with the most it counted (``not reached (max 312 MB of 400 MB)``:
    :func:`harness.memory_budget.budget_reading`); and the token at which it would be passed: the
    one projection of what the budget counts (:func:`harness.stats.workloads.retention.budget_projection`),
    the earliest of the variant's cells, named; nothing where the data cannot carry one."""
    s = inp.tables.summary
    ret_rows = (inp.workloads.get("retention") or {}).get("rows") or []
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
                top = rows.loc[counted.astype(float).idxmax()] if len(counted) else None  # the repetition with the most
                # every repetition's RSS rounds, not only those of the one with the most
                rounds = [(r["repetition"], None if pd.isna(r.get("content_rss_samples")) else int(r["content_rss_samples"]))
                          for _, r in rows.iterrows()] if "content_rss_samples" in rows else None
                words += [budget_reading(None, float(max(counted)) if len(counted) else None, budget, top, rounds)]
            # the one projection (harness/stats/workloads/retention.py): the counted quantity, per cell
            proj = [r["budget_projection"] for r in ret_rows if r["cell"] in g.cells and r.get("budget_projection")
                    and r["budget_projection"]["token"] is not None]
            if proj:
                p = min(proj, key=lambda p: p["token"])
                words += ["; " if words else "", "would pass it near token ",
                          Number(round(p["token"]), "token", None, None, 1, "projection",
                                 {"workload": "retention", "cell": p["cell"], "field": "budget_projection"}),
                          f" ({p['cell']}: what the budget counts, projected {p['basis']} from {p['floors']} floors)"]
            if words:
                parts += lead + words
        if not parts:
            continue
        which = (f"--memory-budget {budget / 1e6:,.0f} MB" if budget else
                 f"iOS's {FIELD_KILL_BYTES / 1e6:,.0f} MB kill in the onnxruntime field report (no --memory-budget given)")
        out.append(Finding("memory_budget", inp.scope(fam[0]), [f"Memory budget ({which}): "] + parts + ["."]))
    return out


def _count(row: dict, key: str) -> int:
    """How many entries a space-separated column of memory_series.csv names (``falls``,
    ``collection_events``, ``forced_events``; ``floors``: ``token:value`` pairs)."""
    v = row.get(key)
    return len(str(v).split()) if v is not None and v == v else 0


def _came_back(row: dict) -> bool:
    """Whether a growing-until-collected row was seen freed: :data:`MIN_FLOORS` floors or more
    whose rise a later drop took back (harness/stats/floors.py ``classify``); with fewer it rose
    and no one knows whether collections would free it (its reason says so)."""
    return _count(row, "floors") >= MIN_FLOORS


def _class_words(row: dict) -> str:
    """The words of one row's class: :data:`CLASS_WORDS`, ``too few samples (n=K tokens)``, and
    ``rising`` for a growing-until-collected row that no collection was seen to free
    (:func:`_came_back`): the class's name would say more than its samples."""
    kind = row.get("class")
    if kind == "too-few-samples":
        return f"{CLASS_WORDS[kind]} ({_n_tokens(int(row.get('points') or 0))})"
    if kind == "growing-until-collected" and not _came_back(row):
        return "growing"
    return CLASS_WORDS.get(kind, str(kind))


def _role(metric: str) -> str:
    ptype = metric.rsplit("per_token_", 1)[-1]
    return next((role for role, types in PROCESS_ROLES.items() if ptype in types), "")


#: Words of the statistics' memory classes (harness/stats/floors.py).
CLASS_WORDS = {"too-few-samples": "too few samples", "flat": "flat", "bounded": "bounded",
               "growing-until-collected": "growing until collected", "retained-wrappers":
               "wrappers retained (buffers destroyed: not GPU memory)", "retained-growth": "retained growth"}
#: Classes said together in one sentence per family when every variant's series has them.
CALM = {"flat": "Flat (nothing new kept, nothing collected)", "bounded": "Bounded (collections bring them back)",
        "falls": "Bounded (falls bring them back: measured RSS and heap have no collection counter)",
        "uncollected": "Bounded (falls with no collection of them bring them back: destroy(), or a device destroyed or lost)",
        "flat-fell": "Flat until one drop (nothing new kept; it fell once, at the step memory_series.csv's "
                     "`falls` names: destroy() or a collection, its `reason` says which)"}


def _fell_once(row: dict) -> bool:
    """A flat series that fell once (harness/stats/floors.py: one drop is not enough for bounded):
    memory_series.csv's ``falls`` names the step."""
    return _count(row, "falls") > 0


def _measured(name: str) -> bool:
    """RSS and JS heap series: no collected counter of their own, so their drops are falls."""
    return name.startswith("rss_bytes_") or name.startswith("js_heap")


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
        # (class, the variants it holds for) → series: a sentence covers only the variants it is true of
        calm: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        few = []
        for name in series:
            rs = [r for r in mine if r["series"] == name]
            label = rs[0].get("label") or name
            kinds = {r.get("class") for r in rs}
            if kinds == {"too-few-samples"}:
                few.append(f"{label} ({_n_per_variant(fam, rs)})")
                continue
            if kinds <= {"flat", "bounded"}:
                # a variant is bounded where any repetition's series is, flat where all are; RSS and
                # heap series are bounded by falls (no collection counter of their own)
                for kind in ("flat", "bounded"):
                    held = tuple(g.key.variant for g in fam if (kind == "bounded") == any(
                        r.get("class") == "bounded" for r in rs if r["group"] == g.key.label)
                        and any(r["group"] == g.key.label for r in rs))
                    if not held:
                        continue
                    hr = [r for r in rs if r["group"] in {g.key.label for g in fam if g.key.variant in held}]
                    if kind == "bounded" and _measured(name):
                        fall = all(r.get("floor_ci_high") is not None and r["floor_ci_high"] < 0 for r in hr)
                        calm.setdefault(("falls", held), []).append(
                            label + f" ({_evidence(hr)}" + ("; its floors fall)" if fall else ")"))
                    elif kind == "flat" and any(_fell_once(r) for r in hr):
                        # never "nothing collected" then
                        calm.setdefault(("flat-fell", held), []).append(f"{label} ({_evidence(hr)})")
                    elif kind == "bounded" and not any(_count(r, "collection_events") for r in hr):
                        # a counted series that fell with no collection of its own: destroy() freed it
                        calm.setdefault(("uncollected", held), []).append(f"{label} ({_evidence(hr)})")
                    else:
                        calm.setdefault((kind, held), []).append(f"{label} ({_evidence(hr)})")
                continue
            parts: list = [f"{label[:1].upper()}{label[1:]}: "]
            for i, g in enumerate(g for g in fam if any(r["group"] == g.key.label for r in rs)):
                gr = [r for r in rs if r["group"] == g.key.label]
                words = list(dict.fromkeys(_class_words(r) for r in gr))
                parts += ["; " if i else "", f"{g.key.variant} {' / '.join(words)}"]
                growing = [r for r in gr if r.get("class") == "growing-until-collected"]
                for j, r in enumerate(growing):  # how fast, and whether anything was ever collected
                    rate, unit = r.get("rate_between_collections"), str(r.get("unit") or "")
                    if rate is not None and rate == rate:
                        parts += [(", rising " if _came_back(r) or len(words) > 1 else " by ") if j == 0 else ", "]
                        parts += ([Number(rate, "bytes/token", None, None, 1, "between drops",
                                          {"workload": "memory", "cell": r["cell"], "series": name,
                                           "field": "rate_between_collections"})] if unit == "bytes"
                                  else [f"{rate:,.3g} {unit}/token"])
                        parts += [" between drops" if _count(r, "falls") else ""]  # a forced collection that freed nothing is no drop
                    if not _measured(name) and not _count(r, "collection_events"):
                        parts += [" (no collection seen)"]  # a counted series: its collected counter never rose
                unknown = [r for r in growing if not _came_back(r)]
                if unknown:  # the class says growth a collection frees; here that was not seen
                    floors = sorted({_count(r, "floors") for r in unknown})
                    parts += [f"; whether collections bring it back is not known ("
                              f"{'–'.join(map(str, floors))} floor{'' if floors[-1] == 1 else 's'}; needs {MIN_FLOORS})"]
                leaks = [r for r in gr if r.get("class") == "retained-growth" and r.get("floor_slope") is not None]
                for j, r in enumerate(leaks):
                    parts += [", floor slope " if j == 0 else ", ",
                              Number(r["floor_slope"], f"{r.get('unit', '')}/token", r.get("floor_ci_low"),
                                     r.get("floor_ci_high"), 1, "theil-sen",
                                     {"workload": "memory", "cell": r["cell"], "series": name, "field": "floor_slope"})]
                if any(r.get("class") != "too-few-samples" for r in gr):  # what the class rests on
                    parts += [f" ({_evidence([r for r in gr if r.get('class') != 'too-few-samples'])})"]
            out.append(Finding("memory_classes", inp.scope(fam[0]), parts + ["."]))
        for (kind, held), names in sorted(calm.items(), key=lambda kv: list(CALM).index(kv[0][0])):
            out.append(Finding("memory_classes", inp.scope(fam[0]), [f"{CALM[kind]}: {', '.join(names)}."],
                               covers=list(held)))
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


def _n_per_variant(fam, rs: list[dict]) -> str:
    """``fresh n=3 and 4 tokens in its 2 repetitions; reuse n=1 token in each of 2 repetitions``: how many positions each
    variant's series had, per repetition (memory_series.csv ``points``); no variant name for a
    family of one variant."""
    out = []
    for g in fam:
        pts = [int(r.get("points") or 0) for r in rs if r["group"] == g.key.label]
        if pts:
            n = (_n_tokens(pts[0]) + (f" in each of {len(pts)} repetitions" if len(pts) > 1 else "")
                 if len(set(pts)) == 1 else f"n={', '.join(map(str, pts[:-1]))} and {pts[-1]} tokens in its {len(pts)} repetitions")
            out.append(n if len(fam) == 1 else f"{g.key.variant} {n}")
    return "; ".join(out)


def _evidence(rows: list[dict]) -> str:
    """``n=15 positions, 10 falls`` for one series' rows (memory_series.csv ``points``, ``falls``
    and, where there were any, ``collection_events`` and ``forced_events``), as a range where
    repetitions differ (``n=12–15 positions, 1–3 falls, 2 collection events``): what a class
    rests on. Falls and collections are counted apart: a collection that freed none of the
    series' objects is not a fall, and a forced collection may free nothing."""
    def span(vals: list[int], one: str, many: str) -> str:
        lo, hi = min(vals), max(vals)
        return f"{lo}{'–' + str(hi) if hi != lo else ''} {one if hi == 1 else many}"

    points = [int(r.get("points") or 0) for r in rows]
    if not points:
        return "no rows"
    out = [f"n={span(points, 'position', 'positions')}", span([_count(r, "falls") for r in rows], "fall", "falls")]
    for key, one, many in (("collection_events", "collection event", "collection events"),
                           ("forced_events", "forced collection", "forced collections")):
        n = [_count(r, key) for r in rows]
        if any(n):
            out.append(span(n, one, many))
    return ", ".join(out)


def _n_tokens(n: int) -> str:
    """``n=1 token`` / ``n=4 tokens``: how many positions (tokens, or steps: :attr:`Finding.step`) had samples."""
    return f"n={n} token" if n == 1 else f"n={n} tokens"
