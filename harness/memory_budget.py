"""summary.csv's memory-budget columns (``--memory-budget``): the token at which the content
process would be killed, and how near a budget not crossed came. The content process is where
WebKit charges a page's bind groups and buffers (references.md: BindGroup.mm; the field report:
iOS killed the page at 2,048 MB)."""

from __future__ import annotations

import pandas as pd

from harness.process_types import CONTENT_PROCESS_TYPES, PROCESS_SOURCES


def content_samples(memory: pd.DataFrame) -> pd.DataFrame:
    """psutil samples of content processes (renderer / WebKitWebProcess / WebContent): the
    largest single one per sampling round — the process a jetsam limit would kill."""
    m = memory[memory["source"].isin(PROCESS_SOURCES) & memory["process_type"].isin(CONTENT_PROCESS_TYPES)]
    if "after_last_step" in m:
        m = m.assign(after_last_step=m["after_last_step"].fillna(False).astype(bool))
    else:
        m = m.assign(after_last_step=False)
    return m.groupby(["cell", "time_s"], as_index=False).agg(rss_bytes=("rss_bytes", "max"), token=("token", "max"),
                                                             footprint_bytes=("footprint_bytes", "max"),
                                                             after_last_step=("after_last_step", "max"))


def memory_budget_columns(summary: pd.DataFrame, steps: pd.DataFrame, memory: pd.DataFrame, budget: int | None) -> None:
    """Fill ``would_be_killed_at_token``: the first token at which the content process's RSS
    (measured, psutil; the largest content process) plus the modeled native bytes of live bind groups
    and of buffers (emulated WebGPU only; buffer bytes less those the emulation holds as JS
    ArrayBuffers, which the RSS already has) exceeds ``budget`` bytes — iOS killed the page at 2,048 MB in the onnxruntime field report
    (references.md). The RSS used for a token is the largest sampled while that token was the
    last one reached. ``memory_budget_counted_bytes_max``: the largest sum the budget was
    compared with — or, where content samples were not placed on a token, their largest plus
    the largest modeled bytes — None when neither was measured: how near a budget not crossed came;
    ``memory_budget_counted_bytes_last``: the same sum at the cell's last step (where a projection
    to the budget starts: harness/stats/workloads/retention.py). ``memory_budget_counted_token``:
    the token of that largest sum; ``memory_budget_rss_token``: the token whose content RSS it
    added — earlier than the counted token where the RSS was carried forward from the last sampled
    token (RSS is sampled every ``--memory-interval``, modeled bytes every step); both None where
    the largest sum was made of samples not placed on a token, or had no RSS."""
    summary["memory_budget_bytes"] = budget
    summary["memory_budget_counted_bytes_max"] = None
    summary["memory_budget_counted_bytes_last"] = None
    summary["memory_budget_counted_token"] = None
    summary["memory_budget_rss_token"] = None
    summary["memory_budget_rss_after_last_step"] = None
    if not budget:
        return
    content = content_samples(memory)
    killed, counted, last, at_token, rss_token, rss_after = [], [], [], [], [], []
    for _, row in summary.iterrows():
        s = steps[steps["cell"] == row["cell"]].set_index("step")
        c = content[content["cell"] == row["cell"]].dropna(subset=["token"])
        # macOS: the physical footprint is what jetsam counts (harness/probe/footprint.py)
        col = "footprint_bytes" if c["footprint_bytes"].notna().any() else "rss_bytes"
        rss = c.groupby("token")[col].max().reindex(s.index).ffill().fillna(0) if len(s) else pd.Series(dtype=float)
        modeled = s["modeled_native_bytes"].fillna(0) if len(s) else pd.Series(dtype=float)
        if len(s):
            modeled = modeled + (s["modeled_buffer_bytes"].fillna(0) - s["buffer_contents_js_bytes"].fillna(0)).clip(lower=0)
        over = (rss + modeled) > budget
        killed.append(int(over.idxmax()) if len(over) and over.any() else None)
        every = content[content["cell"] == row["cell"]][col].dropna()
        # samples not placed on a token (before the steps, in the warm-up step) count with the
        # modeled bytes of the first step, when later RSS samples were placed (they count with their
        # own token's); with none placed, with the largest modeled bytes: the RSS of later tokens is
        # unknown, and the sum an upper bound (a budget it crosses is "not decided", never "not reached")
        unplaced = content[(content["cell"] == row["cell"]) & content["token"].isna()][col].dropna()
        measured = len(every) > 0 or (len(s) and s[["modeled_native_bytes", "modeled_buffer_bytes"]].notna().any().any())
        with_unplaced = (float(modeled.iloc[0]) if len(c) else float(modeled.max())) if len(s) else 0.0
        most = max(float((rss + modeled).max()) if len(s) else 0.0,
                   float(unplaced.max()) + with_unplaced if len(unplaced) else 0.0,
                   0.0 if len(s) else (float(every.max()) if len(every) else 0.0))
        counted.append(most if measured else None)
        placed = bool(len(s)) and measured and float((rss + modeled).max()) >= most
        top = int((rss + modeled).idxmax()) if placed else None
        sampled = [int(t) for t in c["token"].unique() if top is not None and t <= top]
        at_token.append(top)
        rss_token.append(max(sampled) if sampled else None)
        # the largest RSS of that token came after the last step ended (an --idle wait, a release)
        at_rss = c[c["token"] == max(sampled)] if sampled else c.iloc[0:0]
        rss_after.append(bool(at_rss.loc[at_rss[col].idxmax(), "after_last_step"]) if len(at_rss) else None)
        at_end = (float((rss + modeled).iloc[-1]) if len(c) or not len(every) else
                  float(every.iloc[-1]) + float(modeled.iloc[-1])) if len(s) else float(every.iloc[-1]) if len(every) else 0.0
        last.append(at_end if measured else None)
    summary["would_be_killed_at_token"] = pd.array(killed, dtype="Int64")
    summary["memory_budget_counted_bytes_max"] = counted
    summary["memory_budget_counted_bytes_last"] = last
    summary["memory_budget_counted_token"] = pd.array(at_token, dtype="Int64")
    summary["memory_budget_rss_token"] = pd.array(rss_token, dtype="Int64")
    summary["memory_budget_rss_after_last_step"] = pd.array(rss_after, dtype="boolean")


def budget_reading(killed, counted_max, budget, row=None, rounds: list[tuple] | None = None) -> str | None:
    """The one wording of a cell's (or a variant's) memory budget, printed by every surface
    (report.html's retention table, findings, summary.md): ``"token 12"`` when the budget was
    passed at token 12 (``would_be_killed_at_token``), ``"not reached (max 165 MB of 400 MB)"``
    when it was not (``memory_budget_counted_bytes_max``: the most it counted, MB = 10⁶ bytes),
    ``"not measured (…)"`` when nothing it counts was sampled; ``"not decided (max …): …"`` when it
    was not passed but rests on fewer than :data:`MIN_RSS_ROUNDS` RSS rounds on the steps (or none
    after the warm-up: ``content_rss_samples``), which says so; None without a budget. With
    ``row`` (the cell's summary.csv row) a max says where its RSS came from and how many RSS
    samples it rests on: ``"not reached (max 466 MB of 2,048 MB at token 63: RSS carried forward
    from token 21 (n=1))"`` (:func:`rss_words`). At 0 RSS rounds placed on a step after the
    warm-up the reading says it rests on no in-step sample (harness/placement.py ``NOT_SAMPLED_AFTER_WARMUP``).
    ``rounds``: for a variant of several repetitions, ``(repetition, content_rss_samples)`` of
    each: the max names its repetition (``at token 1 of r1``), every repetition's rounds are
    given, and "too few" or "no in-step sample" follows the fewest (naming the repetitions)."""
    if budget is None or pd.isna(budget) or not budget:
        return None
    if killed is not None and not pd.isna(killed):
        return f"{_step_unit(row)} {int(killed)}"
    if counted_max is None or pd.isna(counted_max):
        return "not measured (no content process RSS or modeled bytes were sampled)"
    of = f"max {round(float(counted_max) / 1e6):,} MB of {float(budget) / 1e6:,.0f} MB{rss_words(row, rounds)}"
    if float(counted_max) > float(budget):  # over it, but by samples no token was counted with
        return f"not decided ({of}: over the budget only where the RSS was not placed on a {_step_unit(row)})"
    several = rounds is not None and len(rounds) > 1
    ns = [n for _, n in rounds if n is not None] if several else [_int(row, "content_rss_samples")]
    n = min(ns) if ns and None not in ns else None
    where = "" if not several else " in " + ", ".join(f"r{rep}" for rep, k in rounds if k == n)
    if n == 0:  # below the budget where it was sampled, which is too little to say it was never passed
        return (f"not decided ({of}): its content-process RSS rests on no in-step sample{where} "
                "(content process not sampled after the warm-up)")
    if n is not None and n < MIN_RSS_ROUNDS:
        return (f"not decided ({of}): too few RSS rounds{where} to say it was never passed between them (needs "
                f"{MIN_RSS_ROUNDS}" + (" in each repetition)" if several else ")"))
    return f"not reached ({of})"


#: RSS sampling rounds on the steps below which a budget not passed is "not decided", too few: the
#: sampler's period (--memory-interval-ms, 250 ms) can fall between peaks, and one or two rounds
#: over a run say little of the rest (the statement checker: "not reached … (n=1 RSS round)").
MIN_RSS_ROUNDS = 3


def _int(row, key) -> int | None:
    v = row.get(key) if row is not None else None
    return None if v is None or pd.isna(v) else int(v)


def rss_words(row, rounds: list[tuple] | None = None) -> str:
    """Where a budget max's content RSS came from (summary.csv ``memory_budget_counted_token``,
    ``memory_budget_rss_token``, ``content_rss_samples``: RSS sampling rounds placed on a token):
    ``" at token 63: RSS carried forward from token 21 (n=1 RSS round)"``, ``" at token 63: RSS
    sampled there (n=12 RSS rounds)"``, ``" at token 63: no content RSS sampled by then (modeled
    bytes only)"``, ``": RSS sampled outside the tokens (n=2 RSS rounds on them)"`` (the max came from a
    sample before or after the steps), or ``""`` without a row. ``rounds`` (several repetitions'
    ``(repetition, rounds)``): ``" at token 1 of r1: RSS sampled there (RSS rounds: n=0 in r0, n=1 in r1)"``."""
    at, rss, n = (_int(row, "memory_budget_counted_token"), _int(row, "memory_budget_rss_token"),
                  _int(row, "content_rss_samples"))
    n_words = f" (n={n} RSS round{'' if n == 1 else 's'})" if n is not None else ""
    unit = _step_unit(row)
    if rounds is not None and len(rounds) > 1:  # a variant's repetitions: the max's, and every one's rounds
        rep = row.get("repetition") if row is not None else None
        n_words = " (RSS rounds: " + ", ".join(f"n={k} in r{r}" for r, k in rounds) + ")"
        if at is None:
            return f": RSS sampled outside the {unit}s in r{rep}{n_words}"
        at_words = f" at {unit} {at} of r{rep}"
    else:
        if at is None:
            # the max's RSS came from before the first step or after the last; n counts the others
            return f": RSS sampled outside the {unit}s (n={n} RSS round{'' if n == 1 else 's'} on them)" if n_words else ""
        at_words = f" at {unit} {at}"
    if rss is None:
        return f"{at_words}: no content RSS sampled by then (modeled bytes only)"
    after = row.get("memory_budget_rss_after_last_step") if row is not None else None
    if rss == at and after is not None and not pd.isna(after) and bool(after):
        return f"{at_words}: RSS sampled after the last {unit} ended{n_words}"
    if rss == at:
        return f"{at_words}: RSS sampled there{n_words}"
    return f"{at_words}: RSS carried forward from {unit} {rss}{n_words}"


def _step_unit(row) -> str:
    """``step`` for a workload whose step is not a token (harness/own_terms.py STEP_UNITS: an
    app's steps, ort-run's runs, lifecycle's page loads…), else ``token``."""
    from harness.own_terms import STEP_UNITS

    w = row.get("workload") if row is not None else None
    return "step" if isinstance(w, str) and w in STEP_UNITS else "token"
