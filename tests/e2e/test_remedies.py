"""decode-loop's remedies side by side in real Chromium + WebGPU (SwiftShader), issue 21 item 1:
``dynamic-offset`` (one shared uniform buffer at dynamic offsets, a bind group per node) and
``immediates`` (setImmediates, var<immediate>) create no bind group after warm-up and give the
same tokens and logits as ``fresh``, which the CPU reference confirms (verify=true); the report
shows all five side by side; where a device has no immediates the cell is skipped with why.

tiny profile: 42 dispatches per token, 15 of them with a per-token parameter (pos / total_len).
"""

from __future__ import annotations

import json

import pytest

from conftest import REPO, load_run, run_cli

pytestmark = pytest.mark.full

TINY = json.loads((REPO / "workloads/decode-loop/manifest.json").read_text())["profiles"]["tiny"]
DISPATCHES = TINY["layers"] * 19 + 4
VARIANTS = ["fresh", "reuse", "dynamic-offset", "immediates", "bind-group-cache"]
N = 4


@pytest.fixture(scope="module")
def remedies_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("remedies") / "run"
    cli = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny",
                  "--variant", ",".join(VARIANTS), "--tokens", str(N), "--param", "verify=true", run_dir=d)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return load_run(cli)


def test_dynamic_offset_and_immediates_create_no_bind_group_after_warmup_and_give_fresh_tokens(remedies_run):
    fresh = remedies_run.cell_steps("fresh")
    assert (fresh["create_bind_group"] == DISPATCHES).all()
    for variant in ("dynamic-offset", "immediates"):
        st = remedies_run.cell_steps(variant)
        assert list(st["create_bind_group"]) == [DISPATCHES] + [0] * (N - 1), variant  # one per node, in token 0
        assert (st["dispatch_workgroups"] == DISPATCHES).all() and (st["set_bind_group"] == DISPATCHES).all()
        assert list(st["token"]) == list(fresh["token"]) and list(st["logits_hash"]) == list(fresh["logits_hash"])
        assert (st["extra_max_abs_logit_err"] < 1e-3).all()  # verify=true: the CPU reference agrees
        assert (st["extra_bind_group_cache_size"] == DISPATCHES).all()  # one bind group held per node
    assert (remedies_run.summary["tokens_identical"] == "yes").all()


def test_each_remedy_in_its_own_counts(remedies_run):
    dyn = remedies_run.cell_steps("dynamic-offset")
    assert (dyn["set_bind_group_dynamic_offsets"] == DISPATCHES).all()
    assert (dyn["extra_uniform_buffers"] == 1).all()
    assert dyn["create_buffer_bytes_uniform"].iloc[0] == DISPATCHES * 256  # a 256-byte slot per node
    later = dyn[dyn["step"] > 0]
    # only the blocks that change per token are written: 15 nodes read pos or total_len
    assert (later["write_buffer"] == 15).all() and (later["create_buffer"] == 0).all()
    imm = remedies_run.cell_steps("immediates")
    assert (imm["set_immediates"] == DISPATCHES).all() and (imm["set_immediates_bytes"] > 0).all()
    assert (imm["extra_uniform_buffers"] == 0).all() and (imm["create_buffer_bytes_uniform"] == 0).all()
    assert (imm[imm["step"] > 0]["write_buffer"] == 0).all()  # no uniform writes at all
    fresh = remedies_run.cell_steps("fresh")
    assert (fresh["write_buffer"] == DISPATCHES).all() and (fresh["set_bind_group_dynamic_offsets"] == 0).all()
    cache = remedies_run.cell_steps("bind-group-cache")
    assert cache["create_bind_group"].iloc[-1] == 0 and cache["extra_bind_group_cache_hits"].iloc[-1] == DISPATCHES


def test_report_sets_the_five_side_by_side(remedies_run):
    html = (remedies_run.dir / "report.html").read_text()
    section = html[html.index('id="remedies"'):]
    section = section[:section.index("</section>")]
    for v in VARIANTS:
        assert f'<td class="l">{v}</td>' in section, v
    for head in ("uniform buffers held", "writeBuffer bytes / token", "setImmediates bytes / token", "submits / token"):
        assert head in section


def test_a_device_without_immediates_skips_the_cell_with_the_reason(tmp_path):
    d = tmp_path / "run"
    cli = run_cli("run", "--browser", "chromium", "--webgpu", "emulated", "--workload", "decode-loop", "--profile", "tiny",
                  "--variant", "dynamic-offset,immediates", "--tokens", "2", "--allow-skipped",
                  "--emulation-option", "limits.maxImmediateSize=0", run_dir=d)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    run = load_run(cli)
    assert run.cell("dynamic-offset")["status"] == "ok"  # the emulation has dynamic offsets
    imm = run.cell("immediates")
    assert imm["status"] == "skipped" and "maxImmediateSize is 0" in imm["reason"], imm["reason"]
