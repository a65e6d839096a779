"""How fast a bad option is answered: wall and CPU time of ``python -m harness <command> <bad
option>`` until it exits 2 with its one line, for every command and for the names checked
against the workloads' manifests (variant, profile, ``--param`` key) (issue 19, item 3: ≤ 0.3 s).

Each case is started as a new process ``ROUNDS`` times; its wall time (``time.perf_counter``
around the process) and its CPU time (user + system, ``resource.getrusage(RUSAGE_CHILDREN)``
before and after) are recorded, and min / median / max reported. CPU time is the steadier
figure on a shared machine: wall time also counts waiting for a core.

With ``--baseline DIR`` (a checkout of an older commit, e.g. ``git archive <commit> | tar -x -C
DIR``) the same cases run from that checkout too (``PYTHONPATH=DIR``, same interpreter and
packages), interleaved with this one's (baseline, current, baseline, current …) so that the
machine's load hits both alike; the ratios current / baseline of the medians are the benchmark's
figures. The load average is recorded at the start and end.

Bytecode: the harness's modules are compiled once and cached (``__pycache__``), as for anyone who
installed or cloned it: the processes run without ``PYTHONDONTWRITEBYTECODE`` and each case runs
once, untimed, before its timed rounds (this machine's shells set that variable; compiling the
harness's sources on every start added 0.04 s of CPU to `run --param oops` here, before and after alike).

Usage: python -m benchmarks bad-input              (this checkout only)
       python -m benchmarks.bad_input [--baseline DIR] [--rounds N]
       (results in reports/benchmarks/<timestamp>-bad-input/benchmark.json)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: One bad option per command: (label, argv after ``python -m harness``). ``{tmp}``: a scratch
#: folder (never written: every case fails validation first).
CASES = (
    ("run --tokens 0", ["run", "--tokens", "0", "-o", "{tmp}/r"]),
    ("run --workload nope", ["run", "--workload", "nope", "-o", "{tmp}/r"]),
    ("run --param oops", ["run", "--param", "oops", "-o", "{tmp}/r"]),
    ("run --param oops=1 (a key)", ["run", "--param", "oops=1", "-o", "{tmp}/r"]),
    ("run --variant nope", ["run", "-w", "decode-loop", "--variant", "nope", "-o", "{tmp}/r"]),
    ("run --profile nope", ["run", "--profile", "nope", "-o", "{tmp}/r"]),
    ("app --steps 0", ["app", "http://127.0.0.1:9/", "--steps", "0", "-o", "{tmp}/r"]),
    ("serve --tokens 0", ["serve", "--tokens", "0", "-o", "{tmp}/r"]),
    ("report (not a run folder)", ["report", "{tmp}/none"]),
    ("compare (not a run folder)", ["compare", "{tmp}/none", "{tmp}/none"]),
    ("merge (not a run folder)", ["merge", "{tmp}/none", "-o", "{tmp}/m"]),
    ("index (not a folder)", ["index", "{tmp}/none"]),
    ("native --n 0", ["native", "--n", "0", "-o", "{tmp}/n"]),
    ("doctor --workloads-dir (missing)", ["doctor", "--workloads-dir", "{tmp}/none"]),
    ("setup --no-such-option", ["setup", "--no-such-option"]),
)
ROUNDS = 5


def time_once(argv: list[str], source: Path | None) -> tuple[float, float, int, str]:
    """``(wall s, CPU s, exit status, last stderr line)`` of one ``python -m harness argv``,
    from ``source`` (a checkout, put first on PYTHONPATH) or from the installed harness."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    if source is not None:
        env["PYTHONPATH"] = str(source)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "harness", *argv], capture_output=True, text=True, env=env,
                       cwd=source or Path(__file__).resolve().parent.parent, timeout=120)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    return wall, cpu, r.returncode, lines[-1] if lines else ""


def spread(xs: list[float]) -> dict:
    """min / median / max, rounded to ms."""
    return {"min": round(min(xs), 3), "median": round(statistics.median(xs), 3), "max": round(max(xs), 3)}


def measure(sources: dict[str, Path | None], rounds: int) -> dict:
    """Every case from every source, interleaved; returns ``{case: {source: figures}}``."""
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="bad-input-") as tmp:
        for label, argv in CASES:
            args = [a.format(tmp=tmp) for a in argv]
            walls: dict[str, list[float]] = {s: [] for s in sources}
            cpus: dict[str, list[float]] = {s: [] for s in sources}
            last: dict[str, tuple[int, str]] = {}
            for source in sources.values():  # untimed: writes the bytecode cache
                time_once(args, source)
            for _ in range(rounds):
                for name, source in sources.items():
                    wall, cpu, code, line = time_once(args, source)
                    walls[name].append(wall)
                    cpus[name].append(cpu)
                    last[name] = (code, line)
            out[label] = {name: {"wall_s": spread(walls[name]), "cpu_s": spread(cpus[name]), "exit": last[name][0],
                                 "line": last[name][1]} for name in sources}
            if "baseline" in sources:
                b, c = out[label]["baseline"], out[label]["current"]
                out[label]["ratio_wall_median"] = round(c["wall_s"]["median"] / b["wall_s"]["median"], 3)
                out[label]["ratio_cpu_median"] = round(c["cpu_s"]["median"] / b["cpu_s"]["median"], 3)
    return out


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark; print and write its results."""
    from benchmarks.common import out_dir

    ap = argparse.ArgumentParser(prog="python -m benchmarks.bad_input")
    ap.add_argument("--baseline", type=Path, help="a checkout of an older commit to compare with")
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    a = ap.parse_args(argv or [])
    sources: dict[str, Path | None] = {}
    if a.baseline is not None:
        sources["baseline"] = a.baseline.resolve()
    sources["current"] = None
    load0 = os.getloadavg()
    cases = measure(sources, a.rounds)
    result = {"benchmark": "bad-input", "rounds": a.rounds, "bytecode_cached": True, "python": sys.version.split()[0],
              "cpus": os.cpu_count(), "load_average_start": [round(x, 2) for x in load0],
              "load_average_end": [round(x, 2) for x in os.getloadavg()],
              "baseline": str(sources.get("baseline")) if a.baseline else None, "cases": cases,
              "current_max_wall_median_s": max(c["current"]["wall_s"]["median"] for c in cases.values()),
              "current_max_cpu_median_s": max(c["current"]["cpu_s"]["median"] for c in cases.values())}
    d = out_dir("bad-input")
    (d / "benchmark.json").write_text(json.dumps(result, indent=2))
    for label, c in cases.items():
        cur = c["current"]
        line = f"{label:34} exit {cur['exit']}  wall {cur['wall_s']['median']:.3f} s  cpu {cur['cpu_s']['median']:.3f} s"
        if "baseline" in c:
            base = c["baseline"]
            line += (f"   baseline: wall {base['wall_s']['median']:.3f} s  cpu {base['cpu_s']['median']:.3f} s"
                     f"   ratio wall {c['ratio_wall_median']:.2f} cpu {c['ratio_cpu_median']:.2f}")
        print(line)
    print(f"results: {d / 'benchmark.json'}")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
