"""dispatch-overhead's sync-latency methods in real Chromium + WebGPU: every run records one
latency sample per iteration, the probe's counters are exactly the method's calls, and the
workload runs on the page's main thread when asked (paced by requestAnimationFrame there)."""

from __future__ import annotations

import json

import pytest

from conftest import load_run, run_cli

pytestmark = pytest.mark.full   # browser runs of its own: make test-full

N, ITERATIONS, ROUNDS = 4, 8, 2
SYNC = ["sync-empty", "sync-dispatch", "sync-map", "sync-n"]


def _samples(value: str) -> list[float]:
    return [float(x) for x in str(value).split(",")]


@pytest.fixture(scope="module")
def worker_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("sync") / "run"
    cli = run_cli("run", "--browser", "chromium", "--workload", "dispatch-overhead", "--tokens", str(ROUNDS),
                  "--param", f"n={N}", "--param", "methods=" + ",".join(SYNC),
                  "--param", f"sync_iterations={ITERATIONS}", run_dir=d)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return load_run(cli)


def test_one_latency_sample_per_iteration(worker_run):
    for variant in ("fresh", "reused"):
        st = worker_run.cell_steps(variant)
        assert st["extra_config"].tolist() == SYNC * ROUNDS
        assert (st["extra_thread"] == "worker").all() and (st["extra_pacing"] == "none").all()
        for _, row in st.iterrows():
            xs = _samples(row["extra_sync_us_samples"])
            assert len(xs) == ITERATIONS == row["extra_iterations"]
            assert all(x >= 0 for x in xs)
            assert row["extra_sync_us_min"] == pytest.approx(min(xs)) and row["extra_sync_us_max"] == pytest.approx(max(xs))
            assert min(xs) <= row["extra_sync_us_median"] <= max(xs)
            assert row["extra_sync_us_p10"] <= row["extra_sync_us_median"] <= row["extra_sync_us_p90"]
            # the iterations are inside the step: their sum cannot exceed its wall time
            assert sum(xs) / 1000 <= row["wall_ms"] + 0.01


def test_counters_are_the_sync_methods_calls(worker_run):
    for variant in ("fresh", "reused"):
        st = worker_run.cell_steps(variant)
        assert (st["extra_readback_ok"] == 1).all()
        for col, extra in (("submit", "submits"), ("create_command_encoder", "command_encoders"),
                           ("dispatch_workgroups", "dispatches"), ("create_bind_group", "bind_groups"),
                           ("map_async", "map_async")):
            assert (st[col] == st[f"extra_expected_{extra}"]).all(), (variant, col)
        by = st[st["extra_round"] == 0].set_index("extra_config")
        # iterations + the run's one untimed readback
        assert by["submit"].to_dict() == {"sync-empty": 1, "sync-dispatch": ITERATIONS + 1,
                                          "sync-map": ITERATIONS + 1, "sync-n": ITERATIONS + 1}
        assert by["dispatch_workgroups"].to_dict() == {"sync-empty": 0, "sync-dispatch": ITERATIONS,
                                                       "sync-map": 0, "sync-n": N * ITERATIONS}
        assert by.loc["sync-map", "map_async"] == ITERATIONS + 1 and by.loc["sync-empty", "map_async"] == 1
        assert by.loc["sync-n", "create_bind_group"] == (N * ITERATIONS if variant == "fresh" else 0)


def test_main_thread_paced_by_animation_frames_with_n0(tmp_path):
    r = run_cli("run", "--browser", "chromium", "--workload", "dispatch-overhead", "--variant", "reused", "--tokens", "1",
                "--param", "n=0", "--param", "methods=sync-empty,sync-n", "--param", "sync_iterations=6",
                "--param", "main_thread=true", "--param", "pacing=raf", run_dir=tmp_path / "r")
    assert r.returncode == 0, r.stdout + r.stderr
    run = load_run(r)
    st = run.cell_steps("reused")
    assert (st["extra_thread"] == "main").all() and (st["extra_pacing"] == "raf").all()
    assert [len(_samples(v)) for v in st["extra_sync_us_samples"]] == [6, 6]
    n0 = st.set_index("extra_config").loc["sync-n"]
    assert n0["dispatch_workgroups"] == 0 and n0["submit"] == 7   # 6 empty command buffers + the readback
    env = [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text().splitlines() if '"kind":"env"' in x]
    assert env[0]["thread"] == "main"
    # the probes were installed on the page's own WebGPU
    assert "GPUQueue.submit" in env[0]["probes_installed"]


def test_raf_pacing_in_a_worker_is_skipped_with_its_reason(tmp_path):
    r = run_cli("run", "--browser", "chromium", "--workload", "dispatch-overhead", "--variant", "reused", "--tokens", "1",
                "--param", "methods=sync-empty", "--param", "pacing=raf", "--allow-skipped", run_dir=tmp_path / "r")
    assert r.returncode == 0, r.stdout + r.stderr   # without --allow-skipped: 1, nothing was measured
    row = load_run(r).summary.iloc[0]
    assert row["status"] == "skipped" and "main_thread=true" in row["reason"]
