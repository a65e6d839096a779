"""The workloads as harness/workload_names.py reads them (folders and manifest JSON, no pydantic)
name what the manifest models name: every built-in workload and a user folder's, so the early
checks of --workload, --variant, --profile and --param keys (harness/plan.py) accept and refuse
what the checks on the models do."""

from __future__ import annotations

import json

import pytest

from harness import plan as P
from harness import workload_names as N
from harness.workloads import discover


def test_every_builtin_workload_sketches_as_its_model_reads():
    models = discover()
    assert N.names() == set(models) and len(models) >= 6
    sketches = N.sketches(sorted(models))
    assert sketches is not None
    for sk in sketches:
        wl = models[sk.name]
        assert list(sk.variants) == list(wl.variants) and sk.variants_to_run() == wl.variants_to_run()
        assert list(sk.profiles) == list(wl.profiles) and sk.default_profile == wl.default_profile
        assert {k: v.testing for k, v in sk.parameters.items()} == {k: p.testing for k, p in wl.parameters.items()}
        for prof in list(wl.profiles) or [None]:
            assert sk.profiles.get(prof or "", {}).keys() == wl.profiles.get(prof or "", {}).keys()


def _user(tmp_path, doc):
    d = tmp_path / "mine" / "toy"
    d.mkdir(parents=True)
    (d / "manifest.json").write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return tmp_path / "mine"


def test_a_user_workload_is_sketched_and_a_malformed_one_is_left_to_its_model(tmp_path):
    folder = _user(tmp_path, {"name": "toy", "variants": {"a": "A"}, "parameters": {"k": 1, "t": {"type": "int", "testing": True}}})
    (sk,) = N.sketches(["toy"], [folder])
    assert list(sk.variants) == ["a"] and not sk.parameters["k"].testing and sk.parameters["t"].testing
    with pytest.raises(P.PlanError, match="unknown variant 'b'"):
        P.resolve_workloads(["toy"], ["b"], None, [folder])
    with pytest.raises(P.PlanError, match=r"unknown --param 'z' for toy \(valid: k\)"):
        P.resolve_workloads(["toy"], None, None, [folder], ["z"])
    wls, variants, _ = P.resolve_workloads(["toy"], None, None, [folder], ["k"])
    assert variants == {"toy": ["a"]}
    bad = _user(tmp_path / "2", "{not json")
    assert N.sketches(["toy"], [bad]) is None
    with pytest.raises(P.PlanError, match="manifest.json"):  # the model's reading names the file
        P.resolve_workloads(["toy"], None, None, [bad])
