"""The fusion experiment: decode-loop's `fused` variant in real Chromium computes the same tokens
(and bit-identical logits) with strictly fewer dispatches per token than the unfused graph."""

from __future__ import annotations

import re

import pytest

from conftest import load_run, run_cli

pytestmark = pytest.mark.full   # browser runs of its own: make test-full


@pytest.fixture(scope="module")
def fused_run(tmp_path_factory):
    """tiny profile (2 layers, no qk_norm): fresh vs fused, 8 tokens, checked against the CPU reference."""
    d = tmp_path_factory.mktemp("fusion") / "run"
    cli = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny",
                  "--variant", "fresh,fused", "--tokens", "8", "--param", "verify=true", run_dir=d)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return load_run(cli)


def test_fused_has_strictly_fewer_dispatches_per_token(fused_run):
    f, u = fused_run.cell("fused"), fused_run.cell("fresh")
    assert (f["status"], u["status"]) == ("ok", "ok")
    assert u["dispatches_per_token"] == 2 * 19 + 4          # tiny: 2 layers
    assert f["dispatches_per_token"] == 2 * 8 + 3
    assert f["dispatches_per_token"] < u["dispatches_per_token"]
    st = fused_run.cell_steps("fused")
    assert (st["dispatch_workgroups"] == st["extra_dispatches"]).all()
    assert (st["create_bind_group"] == st["dispatch_workgroups"]).all()   # same fresh dispatch path
    assert f["submits_per_token"] < u["submits_per_token"]


def test_fused_tokens_and_logits_are_identical(fused_run):
    f, u = fused_run.cell_steps("fused"), fused_run.cell_steps("fresh")
    assert list(f["token"]) == list(u["token"])
    assert list(f["logits_hash"]) == list(u["logits_hash"])   # bit-identical logits
    assert set(fused_run.summary["tokens_identical"]) == {"yes"}
    assert (f["extra_max_abs_logit_err"] < 1e-3).all()


def test_report_shows_the_fusion_result(fused_run):
    html = (fused_run.dir / "report.html").read_text()
    assert "Fusion experiment" in html
    row = re.search(r"fresh → fused</td>\s*<td>42 → 19</td>", html)
    assert row, "fusion row with dispatches/token 42 → 19 not found"
    assert "implied µs saved per removed dispatch" in html


def test_fused_qk_norm_path_matches_unfused(tmp_path):
    # ort-field-1.7b has qk_norm (the qk_norm_rope_kv_append kernel); 2 layers keep it quick.
    cli = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "ort-field-1.7b",
                  "--param", "layers=2", "--variant", "fresh,fused", "--tokens", "4", "--param", "verify=true",
                  run_dir=tmp_path / "r")
    assert cli.returncode == 0, cli.stdout + cli.stderr
    run = load_run(cli)
    assert run.cell("fresh")["dispatches_per_token"] == 2 * 21 + 4
    assert run.cell("fused")["dispatches_per_token"] == 2 * 8 + 3
    assert list(run.cell_steps("fused")["logits_hash"]) == list(run.cell_steps("fresh")["logits_hash"])


def test_fused_is_not_a_default_variant():
    from harness.workloads import discover

    wl = discover()["decode-loop"]
    assert "fused" in wl.variants and "fused" not in wl.variants_to_run()
