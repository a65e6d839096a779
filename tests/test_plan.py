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


def test_variants_apply_to_the_workloads_that_have_them():
    wls, variants, _ = P.resolve_workloads(["decode-loop,gc-retention"], ["fresh,minimal"], None)
    assert variants == {"decode-loop": ["fresh"], "gc-retention": ["minimal"]}
    with pytest.raises(P.PlanError, match="unknown variant 'nope' .*decode-loop: fresh"):
        P.resolve_workloads(["decode-loop,gc-retention"], ["fresh,nope"], None)
    with pytest.raises(P.PlanError, match="names no variant of workload gc-retention"):
        P.resolve_workloads(["decode-loop,gc-retention"], ["fresh"], None)
