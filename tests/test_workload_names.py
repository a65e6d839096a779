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
    sketches = N.sketches(sorted(models), N.manifests())
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
    (sk,) = N.sketches(["toy"], N.manifests([folder]))
    assert list(sk.variants) == ["a"] and not sk.parameters["k"].testing and sk.parameters["t"].testing
    with pytest.raises(P.PlanError, match="unknown variant 'b'"):
        P.resolve_workloads(["toy"], ["b"], None, [folder])
    with pytest.raises(P.PlanError, match=r"unknown --param 'z' for toy \(valid: k\)"):
        P.resolve_workloads(["toy"], None, None, [folder], ["z"])
    wls, variants, _ = P.resolve_workloads(["toy"], None, None, [folder], ["k"])
    assert variants == {"toy": ["a"]}
    bad = _user(tmp_path / "2", "{not json")
    assert N.sketches(["toy"], N.manifests([bad])) is None
    with pytest.raises(P.PlanError, match="manifest.json"):  # the model's reading names the file
        P.resolve_workloads(["toy"], None, None, [bad])


@pytest.mark.parametrize("folder,said", [("~nouser-xyz/x", "cannot be used"), ("/tmp/" + "a" * 300, "cannot be read")])
def test_an_unusable_workloads_folder_is_one_line(folder, said):
    with pytest.raises(P.PlanError, match=said):
        P.resolve_workloads(["decode-loop"], None, None, [folder])


def test_a_file_given_as_workloads_folder_is_said_not_a_folder(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(P.PlanError, match="is not a folder"):
        P.resolve_workloads(["decode-loop"], None, None, [f])


def test_a_fifo_manifest_is_refused_without_waiting(tmp_path):
    import os
    import threading

    d = tmp_path / "mine" / "wl"
    d.mkdir(parents=True)
    os.mkfifo(d / "manifest.json")
    result = {}

    def attempt():
        try:
            P.resolve_workloads(["wl"], None, None, [tmp_path / "mine"])
        except P.PlanError as exc:
            result["error"] = str(exc)

    t = threading.Thread(target=attempt, daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive(), "reading a FIFO manifest hung"
    assert "not a regular file" in result.get("error", ""), result


def test_a_mistyped_name_beside_a_broken_user_manifest_names_the_broken_manifest(tmp_path):
    folder = _user(tmp_path, {"name": "other", "variants": {"a": "A"}})
    with pytest.raises(P.PlanError, match="differs from its folder"):
        P.resolve_workloads(["nope"], None, None, [folder])
