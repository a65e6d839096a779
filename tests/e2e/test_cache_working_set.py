"""The bind group cache's working set from one run (issue 21 item 2), on the ort-decode fixture in
Chromium with real onnxruntime-web: the cache records reuse distances, so each cell predicts the
hit rate at every capacity; a capacity sweep checks it — each point's measured hit rate equals
the one its reuse distances predict, and the smallest swept capacity with ≥ 99% hits is the
smallest one at or above the predicted capacity.

tiny fixture, static KV cache (every key repeats once onnxruntime's uniform buffers come round
again), 16 tokens: the steady state is the last 8."""

from __future__ import annotations

import pytest

from conftest import load_run, run_cli
from harness import tables as T
from harness.stats.workloads import cache_working_set as C

pytestmark = pytest.mark.full

CAPACITIES = (64, 128, 256)


@pytest.fixture(scope="module")
def sweep_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("working-set") / "run"
    cli = run_cli("run", "--browser", "chromium", "--workload", "ort-decode", "--profile", "tiny",
                  "--variant", "bind-group-cache", "--tokens", "16", "--param", "kvCache=static",
                  "--param", "bindGroupCacheMaxEntries=" + ",".join(map(str, CAPACITIES)), run_dir=d, timeout=1500)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return load_run(cli)


def test_predicted_capacity_for_99_percent_agrees_with_the_sweep(sweep_run):
    tables = T.build(sweep_run.dir)
    n = C.numbers(tables)
    (sweep,) = n["sweeps"]
    check = sweep["check"]
    assert check["capacities"] == list(CAPACITIES)
    assert check["predicted_capacity"] and check["measured_first"] is not None
    assert check["agrees"], check
    # each point: the hit rate its own reuse distances predict is the one its cache had
    for p in sweep["points"]:
        assert p["measured"] == pytest.approx(p["predicted"], abs=0.01), p
    assert all(p["capacity_99"] == check["predicted_capacity"] for p in sweep["points"])
    # one run is enough: the smallest cell's distances predict every other cell's hit rate
    reuse = tables.results[sweep["points"][0]["cell"]]["bindGroupCacheReuse"]
    snap = sorted(reuse["snapshots"], key=lambda x: x["step"])[-1]
    steady = C.steady(snap, reuse["atEnd"])
    for p in sweep["points"][1:]:
        assert C.hit_rate(steady["hist"], steady["lookups"], p["capacity"]) == pytest.approx(p["measured"], abs=0.01), p


def test_working_set_per_token_and_the_report(sweep_run):
    st = sweep_run.steps.sort_values(["cell", "step"])
    last = st[st["step"] >= 8]
    assert (last["extra_bind_group_cache_distinct_keys"] == last["dispatch_workgroups"]).all()  # one key per dispatch
    assert (last["extra_bind_group_cache_new_keys"] == 0).all()
    for cap in CAPACITIES:
        cell = st[st["cell"].str.contains(f"bindGroupCacheMaxEntries-{cap}.")]
        assert (cell["extra_bind_group_cache_size"] <= cap).all()
    smallest = st[st["cell"].str.contains(f"bindGroupCacheMaxEntries-{CAPACITIES[0]}.")]
    assert smallest["extra_bind_group_cache_evictions"].sum() > 0
    html = (sweep_run.dir / "report.html").read_text()
    section = html[html.index('id="cache-working-set"'):]
    section = section[:section.index("</section>")]
    assert "they agree" in section and "Capacity sweep" in section and "cache_hit_curve" in html
