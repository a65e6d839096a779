"""A/A: how often does ``compare`` call a difference significant between two runs of the same code?
(issue 20, item 3: significance only where repetitions support it.)

``2 × PAIRS`` runs of the same command are made per ``--repeat`` setting (1 and 3): Chromium
(Debian's, SwiftShader), decode-loop ``tiny``, variants fresh and reuse, ``TOKENS`` tokens; run
2i is compared with run 2i + 1 (:func:`harness.verdicts.compare.compare`, B − A), so each
setting gives ``PAIRS`` independent comparisons of two matched configurations each. Nothing
differs between A and B but the moment they ran, so every "significant" is a false positive.

Per setting and metric: how many differences were computed, how many were called significant
(the share is the false-positive rate; 5% is the nominal rate of a 95% interval), how many were
not, how many carried no claim and why (``1 repetition: within-run only``, ``n=1: no interval``),
and, for contrast, how many had an interval excluding 0 — what "significant" meant before
(the within-run block bootstrap or Sen's interval was enough, and a zero-width interval counted).
Counts (createBindGroup, dispatches…) are exact and identical in A and B: never significant.

Usage: python -m benchmarks aa-significance   (results in reports/benchmarks/<timestamp>-aa-significance/)
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import out_dir
from harness import REPO_ROOT
from harness import tables as T
from harness.verdicts.compare import compare

PAIRS = 20
TOKENS = 16
REPEATS = (1, 3)
COMMAND = ["-b", "chromium", "-w", "decode-loop", "-p", "tiny", "-v", "fresh,reuse"]


def one_run(folder: Path, repeat: int, tokens: int = TOKENS) -> dict:
    """One ``webgpu-harness run`` into ``folder``: ``{folder, exit, seconds}``."""
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "harness", "run", *COMMAND, "-n", str(tokens), "--repeat", str(repeat),
                           "--output", str(folder)], cwd=REPO_ROOT, capture_output=True, text=True)
    return {"folder": str(folder), "exit": proc.returncode, "seconds": round(time.perf_counter() - t, 1),
            "stderr": proc.stderr[-500:] if proc.returncode else ""}


def tally(comparisons: list) -> dict:
    """Per metric: ``{n, significant, not_significant, no_claim: {why: count}, interval_excludes_0,
    share_significant, share_interval_excludes_0}`` over every difference of ``comparisons``."""
    out: dict[str, dict] = {}
    for c in comparisons:
        for d in c.differences:
            m = out.setdefault(d.metric, {"n": 0, "significant": 0, "not_significant": 0, "no_claim": {},
                                          "interval_excludes_0": 0})
            m["n"] += 1
            if d.significant is True:
                m["significant"] += 1
            elif d.significant is False:
                m["not_significant"] += 1
            else:
                m["no_claim"][d.evidence or "no interval"] = m["no_claim"].get(d.evidence or "no interval", 0) + 1
            lo, hi = d.diff_low, d.diff_high
            if lo is not None and hi is not None and (lo > 0 or hi < 0):
                m["interval_excludes_0"] += 1
    for m in out.values():
        m["share_significant"] = round(m["significant"] / m["n"], 3)
        m["share_interval_excludes_0"] = round(m["interval_excludes_0"] / m["n"], 3)
    return dict(sorted(out.items()))


def retally(folder: Path) -> dict:
    """Compare again the runs a previous :func:`main` left in ``folder`` (no browser): the same
    result with the analysis as it is now."""
    doc = json.loads((folder / "benchmark.json").read_text())
    for name, setting in doc["settings"].items():
        runs = sorted((folder / name).iterdir())
        comparisons = [compare(T.build(a), T.build(b), "A", "B") for a, b in zip(runs[0::2], runs[1::2])
                       if (a / "stats.json").exists() and (b / "stats.json").exists()]
        setting["comparisons"] = len(comparisons)
        setting["matched_configurations"] = sum(len(c.matches) for c in comparisons)
        setting["metrics"] = tally(comparisons)
    (folder / "benchmark.json").write_text(json.dumps(doc, indent=2))
    return doc


def main(pairs: int = PAIRS, repeats=REPEATS, tokens: int = TOKENS) -> dict:
    d = out_dir("aa-significance")
    result: dict = {"benchmark": "aa-significance", "command": "webgpu-harness run " + " ".join(COMMAND)
                    + f" -n {tokens} --repeat R", "pairs": pairs, "settings": {}}
    for repeat in repeats:
        runs = [one_run(d / f"repeat-{repeat}" / f"run{i:02d}", repeat, tokens) for i in range(2 * pairs)]
        comparisons = []
        for i in range(pairs):
            a, b = runs[2 * i], runs[2 * i + 1]
            if a["exit"] or b["exit"]:
                continue  # a run that failed is kept in "runs" with its error, not compared
            comparisons.append(compare(T.build(Path(a["folder"])), T.build(Path(b["folder"])), "A", "B"))
        result["settings"][f"repeat-{repeat}"] = {
            "repeat": repeat, "comparisons": len(comparisons),
            "matched_configurations": sum(len(c.matches) for c in comparisons),
            "runs": [{k: v for k, v in r.items() if k != "folder" or r["exit"]} for r in runs],
            "metrics": tally(comparisons)}
        s = result["settings"][f"repeat-{repeat}"]["metrics"]
        print(f"--repeat {repeat}: {len(comparisons)} comparisons; " + "; ".join(
            f"{m} {v['significant']}/{v['n']} significant ({v['interval_excludes_0']} with an interval excluding 0)"
            for m, v in s.items() if m in ("ms_per_token", "cpu_ms_per_token")), flush=True)
    (d / "benchmark.json").write_text(json.dumps(result, indent=2))
    print(d / "benchmark.json")
    return result


if __name__ == "__main__":
    main()
