"""harness/plan.py: the run plan and the validation of parameters before anything launches
(against the real workload manifests in workloads/)."""

from __future__ import annotations

import pytest

from harness import plan as P
from harness.workloads import discover


def test_repetitions_interleave_variants_round_robin():
    from harness.plan import RunPlan
    from harness.workloads import discover

    wl = discover()["decode-loop"]
    plan = RunPlan(browsers=["chromium"], workloads=[wl], variants={wl.name: ["fresh", "reuse"]},
                   profiles={wl.name: "tiny"}, repeat=3)
    order = [(c.repetition, c.variant) for c in plan.cells()]
    assert order == [(0, "fresh"), (0, "reuse"), (1, "fresh"), (1, "reuse"), (2, "fresh"), (2, "reuse")]


def test_params_are_typed_by_the_declaration_and_applied_to_the_workloads_that_declare_them():
    wls = [discover()["decode-loop"], discover()["gc-retention"]]
    out = P.resolve_params({"max_pending_dispatches": "8", "churn_kb": "64", "max_tokens": "32"}, wls,
                           {"decode-loop": "tiny", "gc-retention": None})
    assert out["decode-loop"] == {"max_pending_dispatches": 8, "max_tokens": 32}
    assert out["gc-retention"] == {"churn_kb": 64}


@pytest.mark.parametrize("raw, words", [
    ({"max_pending_dispatchez": "8"}, "unknown --param 'max_pending_dispatchez'"),
    ({"max_pending_dispatches": "eight"}, "max_pending_dispatches 'eight' is not valid (int"),
    ({"seed": "3"}, "reserved"),
])
def test_bad_params_name_the_valid_ones(raw, words):
    wls = [discover()["decode-loop"]]
    with pytest.raises(P.PlanError) as exc:
        P.resolve_params(raw, wls, {"decode-loop": "tiny"})
    assert words in str(exc.value)
    if "unknown" in words:
        assert "max_pending_dispatches" in str(exc.value) and "valid:" in str(exc.value)


def test_sizes_and_names():
    assert P.parse_bytes("2048MB", "--memory-budget") == 2_048_000_000
    assert P.parse_bytes("1.5 GiB", "--memory-budget") == 3 * 2**29
    with pytest.raises(P.PlanError, match="valid units"):
        P.parse_bytes("12 parsecs", "--memory-budget")
    assert P.split_names(["a,b", "a"], "--variant") == ["a", "b"]
    with pytest.raises(P.PlanError, match="names nothing"):
        P.split_names([","], "--variant")


def test_the_memory_budget_defaults_to_the_field_reports_ios_kill_and_none_switches_it_off():
    from harness.report.finding import FIELD_KILL_BYTES

    assert P.parse_memory_budget(None) == FIELD_KILL_BYTES == 2_048_000_000
    assert P.resolve_cells(workload=None, variant=None, profile=None, tokens=8).memory_budget_bytes == FIELD_KILL_BYTES
    assert P.parse_memory_budget("none") is None and P.parse_memory_budget("OFF") is None
    assert P.resolve_cells(workload=None, variant=None, profile=None, tokens=8,
                           memory_budget="none").memory_budget_bytes is None
    assert P.parse_memory_budget("3GB") == 3 * 10**9
    with pytest.raises(P.PlanError, match="'none' for no budget"):
        P.parse_memory_budget("0")


def test_a_comma_separated_value_of_a_number_parameter_is_a_sweep_and_a_list_parameters_is_not():
    dl, do = discover()["decode-loop"], discover()["dispatch-overhead"]
    single, sweeps = P.resolve_sweeps({"max_pending_dispatches": "1,16,320", "verify": "true"}, [dl], {"decode-loop": "tiny"})
    assert single == {"verify": "true"} and sweeps == {"decode-loop": {"max_pending_dispatches": [1, 16, 320]}}
    # a list parameter's commas are its items: one configuration
    single, sweeps = P.resolve_sweeps({"methods": "kernel,sequential"}, [do], {"dispatch-overhead": None})
    assert single == {"methods": "kernel,sequential"} and sweeps == {}
    with pytest.raises(P.PlanError, match="is not valid"):   # every value is validated
        P.resolve_sweeps({"max_pending_dispatches": "1,zero"}, [dl], {"decode-loop": "tiny"})
    with pytest.raises(P.PlanError, match="distinct values"):
        P.resolve_sweeps({"max_pending_dispatches": "1,1"}, [dl], {"decode-loop": "tiny"})


def test_a_sweep_is_a_matrix_axis_like_variants():
    wl = discover()["decode-loop"]
    plan = P.RunPlan(browsers=["chromium"], workloads=[wl], variants={wl.name: ["fresh", "reuse"]},
                     profiles={wl.name: "tiny"}, sweeps={wl.name: {"max_pending_dispatches": [1, 16]}})
    cells = plan.cells()
    assert [c.cell for c in cells] == [
        "chromium.decode-loop.fresh.tiny.max_pending_dispatches-1.r0", "chromium.decode-loop.fresh.tiny.max_pending_dispatches-16.r0",
        "chromium.decode-loop.reuse.tiny.max_pending_dispatches-1.r0", "chromium.decode-loop.reuse.tiny.max_pending_dispatches-16.r0"]
    assert [c.params["max_pending_dispatches"] for c in cells] == [1, 16, 1, 16]
    assert cells[1].sweep == {"max_pending_dispatches": 16}
    assert plan.parameters()["sweeps"] == {"decode-loop": {"max_pending_dispatches": [1, 16]}}


@pytest.mark.parametrize("items, expected", [
    (["limits=ios-2025"], {"limits": "ios-2025"}),
    (["limits.maxBufferSize=1073741824"], {"limits": {"maxBufferSize": 1073741824}}),
    (['limits={"maxStorageBuffersPerShaderStage": 10}'], {"limits": {"maxStorageBuffersPerShaderStage": 10}}),
    (["completion.delayMs=2"], {"completion": {"delayMs": 2}}),
    (["completion=microtask"], {"completion": "microtask"}),
    (["argumentBytes.buffer=16"], {"argumentBytes": {"buffer": 16}}),
    (["memoryBudgetBytes=1500000000", "atMemoryBudget=kill-page"], {"memoryBudgetBytes": 1500000000, "atMemoryBudget": "kill-page"}),
    (["reportCostToJs=true"], {"reportCostToJs": True}),
])
def test_emulation_options_and_their_object_forms_are_typed(items, expected):
    out = P.emulation_options(items)
    assert {k: out[k] for k in expected} == expected


@pytest.mark.parametrize("items, words", [
    (["limits=ios-2026"], "valid: spec-default, webkit-apple7, ios-2024, ios-2025"),
    (["limits.maxBuferSize=3"], "unknown limit (valid: maxTextureDimension1D"),
    (["completion=soon"], "valid: task, microtask, manual"),
    (["atMemoryBudget=explode"], "one of lose-device, kill-page"),
    (["memoryBudgetBytes=0"], "is not valid (int 1.."),
    (["reportCostToJs=maybe"], "true or false"),
    (["nope=1"], "unknown --emulation-option 'nope' (valid: bytesPerStage"),
])
def test_bad_emulation_options_name_the_valid_ones(items, words):
    with pytest.raises(P.PlanError) as exc:
        P.emulation_options(items)
    assert words in str(exc.value)


def test_progress_totals_count_each_workloads_own_steps():
    wl = discover()
    assert wl["decode-loop"].expected_steps({}, 64) == 64
    # 64 rounds × (single-op, sequential, batched × 4 sizes, one-pass, phases, kernel)
    assert wl["dispatch-overhead"].expected_steps({}, 64) == 576
    assert wl["dispatch-overhead"].expected_steps({"methods": "kernel"}, 3) == 3
    assert wl["ort-run"].expected_steps({"sessions": 3}, 4) == 3 * (4 + 2)        # create, runs, release
    assert wl["upload"].expected_steps({"sizes": "16,32"}, 5) == 10                 # rounds × sizes


def test_variants_apply_to_the_workloads_that_have_them():
    wls, variants, _ = P.resolve_workloads(["decode-loop,gc-retention"], ["fresh,minimal"], None)
    assert variants == {"decode-loop": ["fresh"], "gc-retention": ["minimal"]}
    with pytest.raises(P.PlanError, match="unknown variant 'nope' .*decode-loop: fresh"):
        P.resolve_workloads(["decode-loop,gc-retention"], ["fresh,nope"], None)
    with pytest.raises(P.PlanError, match="names no variant of workload gc-retention"):
        P.resolve_workloads(["decode-loop,gc-retention"], ["fresh"], None)


def test_ort_run_inputs_from_local_files_are_served_one_file_each(tmp_path):
    import shutil

    from harness.locations import workloads_dir

    frame = tmp_path / "frame.npy"
    shutil.copy(workloads_dir() / "ort-run" / "models" / "conv-tiny" / "input.npy", frame)
    roots: dict = {}
    spec = P.local_inputs(f"image={frame},mask=/workloads/x.npy,other=https://cdn.example/y.npy", roots)
    assert spec == "image=/user-inputs/0/frame.npy,mask=/workloads/x.npy,other=https://cdn.example/y.npy"
    assert roots == {"user-inputs/0/frame.npy": frame.resolve()}   # that file, not its folder
    (tmp_path / "notes.npy").write_text("not numpy")
    for bad, words in [(f"image={tmp_path / 'notes.npy'}", "is not a .npy file"), ("image=frame.npy", "no such file"),
                       ("image", "is not NAME=FILE.npy or NAME=URL")]:
        with pytest.raises(P.PlanError, match=words):
            P.local_inputs(bad, {})
