"""In real Chromium + WebGPU: memory series classified from their floors after collections
(harness/stats/memory.py), forced collections (--gc-checkpoints), real process samples, a
parameter sweep as configurations, and dispatch-overhead's kernel-only method. decode-loop tiny:
one generate call per token (tokens_per_call=1) creates 286,312 bytes of buffers."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from conftest import load_run, run_cli

pytestmark = pytest.mark.full   # browser runs of its own: make test-full


@pytest.fixture(scope="module")
def leak_run(tmp_path_factory):
    """Every generate call's buffers kept (call_ending=leak), one call per token, a forced
    collection every 4 tokens."""
    d = tmp_path_factory.mktemp("leak") / "run"
    cli = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny", "--variant", "fresh",
                  "--tokens", "20", "--param", "tokens_per_call=1", "--param", "call_ending=leak",
                  "--gc-checkpoints", "4", run_dir=d)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return load_run(cli)


def _series(run, name):
    rows = [r for r in csv.DictReader((run.dir / "memory_series.csv").open()) if r["series"] == name]
    assert len(rows) == 1, rows
    return rows[0]


def test_kept_buffers_are_retained_growth_at_the_bytes_each_token_created(leak_run):
    st = leak_run.cell_steps("fresh")
    per_token = st[st["step"] > 0]["create_buffer_bytes"]
    assert per_token.nunique() == 1                       # every call creates the same buffers
    row = _series(leak_run, "buffer_bytes_live")
    assert row["class"] == "retained-growth", row["reason"]
    assert float(row["floor_slope"]) == per_token.iloc[0] and float(row["floor_ci_low"]) > 0
    # the bind groups of those calls were collected: a sawtooth, bounded
    bg = _series(leak_run, "bind_groups_live")
    assert bg["class"] == "bounded", bg["reason"]
    assert int(bg["events"].split()[0]) >= 1 and len(bg["events"].split()) >= 2
    stats = json.loads((leak_run.dir / "stats.json").read_text())
    growth = stats["groups"][0]["metrics"]["live_buffer_bytes_growth_per_token"]
    assert growth["value"] == per_token.iloc[0] and growth["basis"] == "floors"


def test_forced_collections_are_recorded_where_the_browser_allows(leak_run):
    forced = [json.loads(x) for x in (leak_run.dir / "samples.jsonl").read_text().splitlines() if '"gc_checkpoint"' in x]
    assert forced and all(s["forced"] is True and s["done_s"] >= s["time_s"] for s in forced)
    assert all(s["token"] >= 3 for s in forced)          # every 4 tokens: after step 3 at the earliest


def test_forced_collections_follow_the_checkpoints_the_steps_passed(leak_run):
    # checkpoints after steps 3, 7, 11, 15, 19: an ask stands for every one passed since the last
    # (steps reach the harness in batches), and the console says how many of the 5 were done
    forced = sorted((json.loads(x) for x in (leak_run.dir / "samples.jsonl").read_text().splitlines()
                     if '"gc_checkpoint"' in x), key=lambda s: s["time_s"])
    passed = 0
    for s in forced:
        assert s["due"] == (s["token"] + 1) // 4 - passed >= 1, forced
        passed += s["due"]
    assert passed <= 5
    done = sum(s["forced"] is True for s in forced)
    line = next(x for x in leak_run.cli.stdout.splitlines() if "GC checkpoints (--gc-checkpoints 4" in x)
    assert f"fresh {done} of 5 done" in line, line
    if done < 5:
        assert "one ask serving several" in line or "asked and not done" in line, line


def test_the_worker_waits_so_every_checkpoint_is_done_at_its_token(leak_run):
    # the worker waits after steps 3, 7, 11, 15, 19 (web/probes/step.js checkpoint) until the
    # harness forced the collection: each checkpoint asked once, at its own token, and done
    # before the worker went on (before this change: 1 or 2 of the 5, asked late, in batches)
    forced = sorted((json.loads(x) for x in (leak_run.dir / "samples.jsonl").read_text().splitlines()
                     if '"gc_checkpoint"' in x), key=lambda s: s["time_s"])
    assert [s["token"] for s in forced] == [3, 7, 11, 15, 19], forced
    assert all(s["forced"] is True and s["due"] == 1 for s in forced), forced
    assert [s["done_token"] for s in forced] == [3, 7, 11, 15, 19], forced   # done before the next step
    # the step after each checkpoint began after the collection was done (no overlap)
    steps = leak_run.cell_steps("fresh").set_index("step")
    assert all(steps.loc[s["token"] + 1, "received_s"] >= s["done_s"] for s in forced if s["token"] + 1 in steps.index)
    assert "not answer" not in (leak_run.dir / "samples.jsonl").read_text()   # no wait ran out
    line = next(x for x in leak_run.cli.stdout.splitlines() if "GC checkpoints (--gc-checkpoints 4" in x)
    assert "fresh 5 of 5 done" in line, line
    assert "fresh 5 of 5 done" in (leak_run.dir / "summary.md").read_text()


def test_process_samples_are_real(leak_run):
    m = leak_run.memory
    ps = m[m["source"] == "psutil"]
    assert len(ps) and (ps["rss_bytes"] > 0).all()
    assert ps["pid"].map(float.is_integer).all()          # written as 9377, not 9377.0
    assert ".0," not in "".join(line.split(",")[3] + "," for line in (leak_run.dir / "memory.csv").read_text().splitlines()[1:]
                                if ",psutil," in line)
    # CPU time per process never runs backwards, and the GPU process did work
    for _, g in ps.sort_values("time_s").groupby("pid"):
        assert (g["cpu_user_s"].diff().dropna() >= 0).all()
    cell = leak_run.cell("fresh")
    assert cell["cpu_s_gpu-process"] > 0
    assert cell["js_heap"] == "measured (CDP)" and cell["js_heap_bytes_max"] > 0


@pytest.fixture(scope="module")
def sweep_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep") / "run"
    cli = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny", "--variant", "fresh",
                  "--tokens", "4", "--param", "max_pending_dispatches=1,16,320", run_dir=d)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return load_run(cli)


def test_a_three_value_sweep_is_three_configurations_with_differences(sweep_run):
    cells = sweep_run.manifest["cells"]
    assert [c["sweep"] for c in cells] == [{"max_pending_dispatches": v} for v in (1, 16, 320)]
    assert [c["cell"] for c in cells] == [f"chromium.decode-loop.fresh.tiny.max_pending_dispatches-{v}.r0" for v in (1, 16, 320)]
    stats = json.loads((sweep_run.dir / "stats.json").read_text())
    groups = {g["group"]: g for g in stats["groups"]}
    labels = [f"chromium/decode-loop/fresh@tiny[max_pending_dispatches={v}]" for v in (1, 16, 320)]
    assert set(labels) <= set(groups)
    # 42 dispatches: floor(42 / n) + 1 submits (the last carries the readback copies)
    assert [groups[x]["metrics"]["submits_per_token"]["value"] for x in labels] == [43, 3, 1]
    diffs = {(d["a"], d["b"]): d for d in stats["differences"] if d["metric"] == "submits_per_token"}
    assert diffs[(labels[0], labels[1])]["diff"] == -40 and diffs[(labels[1], labels[2])]["diff"] == -2
    assert len(diffs) == 3 and all(d["significant"] for d in diffs.values())
    assert (sweep_run.summary["tokens_identical"] == "yes").all()   # batching changes no token
    assert "max_pending_dispatches=16" in sweep_run.cli.stdout


def _one_point(src, dst, value):
    """A run folder holding only the sweep point ``value`` of ``src``, as a run made with
    ``--param max_pending_dispatches=value`` alone would be (no sweep)."""
    dst.mkdir()
    man = json.loads((src / "manifest.json").read_text())
    keep = [c for c in man["cells"] if c["sweep"] == {"max_pending_dispatches": value}]
    for c in keep:
        c["sweep"] = {}
    man["cells"] = keep
    (dst / "manifest.json").write_text(json.dumps(man))
    ids = {c["cell"] for c in keep}
    (dst / "samples.jsonl").write_text("".join(x + "\n" for x in (src / "samples.jsonl").read_text().splitlines()
                                               if json.loads(x)["cell"] in ids))


def test_compare_matches_runs_that_differ_only_in_a_parameter(sweep_run, tmp_path):
    _one_point(sweep_run.dir, tmp_path / "a", 1)
    _one_point(sweep_run.dir, tmp_path / "b", 16)
    r = run_cli("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--output", str(tmp_path / "cmp"))
    assert r.returncode == 0, r.stdout + r.stderr
    c = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert len(c["matches"]) == 1 and c["matches"][0]["params_differ"] == ["max_pending_dispatches 1 → 16"]
    d = next(d for d in c["matches"][0]["differences"] if d["metric"] == "submits_per_token")
    assert d["diff"] == -40


def test_dispatch_overhead_kernel_only_runs_and_reports(tmp_path):
    r = run_cli("run", "--browser", "chromium", "--workload", "dispatch-overhead", "--variant", "fresh", "--tokens", "2",
                "--param", "methods=kernel", "--param", "n=16", run_dir=tmp_path / "run")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    run = load_run(r)
    row = run.cell("fresh")
    assert row["status"] == "ok" and row["step_unit"] == "method × round"
    assert row["kernel_us_per_dispatch"] > 0 or "timestamp" in r.stdout
    assert (run.dir / "report.html").exists() and "[None]" not in r.stdout
    # the folder is a finished run: analysing it again works, a new run into it is refused (exit 2)
    assert run_cli("report", str(run.dir)).returncode == 0
    again = run_cli("run", "--browser", "chromium", "--workload", "dispatch-overhead", run_dir=tmp_path / "run")
    assert again.returncode == 2 and "already holds a run" in again.stderr
