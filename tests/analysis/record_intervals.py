"""Record the 95% intervals (and findings) the analysis gives on the recorded run folders, into
tests/analysis/intervals.json, which tests/analysis/test_intervals_kept.py compares the current
analysis with (a faster bootstrap must keep its intervals within ±5% of these).

The file in the repository was made on 2026-12-01 by the analysis as it was *before* the
bootstrap was made independent of the number of tokens (branch ``stats``, on commit 8ca8df7):
every token metric's circular block bootstrap over every token (2,000 resamples, seed 0).
Re-running this script records what the current code gives instead — do that only on purpose.

Besides tests/analysis/runs/*, it records ``synth-16x1000``: 16 cells × 1,000 tokens synthesised
from the real samples of tests/analysis/runs/mixed-decode-loop (benchmarks/report_size.py), where
groups have more tokens than the bootstrap resamples in full.

    .venv/bin/python tests/analysis/record_intervals.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OUT = HERE / "intervals.json"
#: Synthesised folders: name → (cells of mixed-decode-loop taken, copies, tokens).
SYNTH = {"synth-16x1000": (8, 2, 1000)}


def intervals(run_dir: Path) -> dict:
    """Every estimate and difference of ``run_dir`` (value, interval, method, n) and the findings."""
    from harness import pipeline

    a = pipeline.analyse(run_dir)
    keep = ("value", "ci_low", "ci_high", "ci_method", "n", "n_reps", "kind")
    dkeep = ("diff", "diff_low", "diff_high", "rel", "rel_low", "rel_high", "ci_method", "significant")
    return {"estimates": {g.key.label: {m: {k: e.to_dict()[k] for k in keep} for m, e in g.metrics.items()}
                          for g in a.stats.groups.values()},
            "differences": [{"a": d.a, "b": d.b, "metric": d.metric, **{k: d.to_dict()[k] for k in dkeep}}
                            for d in a.stats.differences],
            "findings": [f.text() for f in a.findings]}


def main() -> None:
    sys.path.insert(0, str(REPO))
    from benchmarks.report_size import synthesize

    out = {"made_by": "tests/analysis/record_intervals.py", "runs": {}}
    for d in sorted(p for p in (HERE / "runs").iterdir() if (p / "manifest.json").exists()):
        out["runs"][d.name] = intervals(d)
    with tempfile.TemporaryDirectory() as tmp:
        for name, (first, copies, tokens) in SYNTH.items():
            run = Path(tmp) / name
            synthesize(run, copies, tokens, first=first)
            out["runs"][name] = intervals(run)
    OUT.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(OUT)


if __name__ == "__main__":
    main()
