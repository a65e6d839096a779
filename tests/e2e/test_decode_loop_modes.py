"""decode-loop's failure-kind parameters in real Chromium + WebGPU: each mode's signature in the
counters the probes measured (workloads/decode-loop/README.md).

tiny profile: 2 layers, kv_heads 2, head_dim 32, vocab 1024 → 4 KV caches of 256 bytes per
position, a 4,104-byte readback buffer (1024 f32 logits + 8 bytes argmax), 42 dispatches.
"""

from __future__ import annotations

import json

import pytest

from conftest import REPO, load_run, run_cli

pytestmark = pytest.mark.full   # browser runs of its own: make test-full

TINY = json.loads((REPO / "workloads/decode-loop/manifest.json").read_text())["profiles"]["tiny"]
KV_CACHES = 2 * TINY["layers"]                                  # a K and a V cache per layer
BYTES_PER_POSITION = TINY["kv_heads"] * TINY["head_dim"] * 4    # one position of one KV cache
READBACK_BYTES = TINY["vocab"] * 4 + 8
DISPATCHES = TINY["layers"] * 19 + 4                            # unfused graph, no qk_norm


def _run(tmp_path_factory, name, *args):
    d = tmp_path_factory.mktemp(name) / "run"
    cli = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny", *args, run_dir=d)
    return cli, d


@pytest.fixture(scope="module")
def recreate_run(tmp_path_factory):
    """KV and readback buffers re-created (and destroyed) every token, with a 1 KiB minimum."""
    cli, _ = _run(tmp_path_factory, "recreate", "--variant", "fresh,reuse", "--tokens", "5",
                  "--param", "kv_buffers=recreate-destroy", "--param", "storage_buffer_min_bytes=1024",
                  "--param", "verify=true")
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return load_run(cli)


def test_recreate_creates_and_destroys_kv_and_readback_buffers_every_token(recreate_run):
    for variant in ("fresh", "reuse"):
        st = recreate_run.cell_steps(variant)
        assert list(st["extra_kv_capacity"]) == [1, 2, 3, 4, 5]
        later = st[st["step"] > 0]
        # per token: one new buffer per KV cache (pos + 1 positions, at least 1 KiB) + one readback
        kv_bytes = [max(BYTES_PER_POSITION * (pos + 1), 1024) for pos in later["step"]]
        assert list(later["create_buffer"]) == [KV_CACHES + 1] * len(later)
        assert list(later["create_buffer_bytes"]) == [KV_CACHES * b + READBACK_BYTES for b in kv_bytes]
        # ... and the previous ones destroyed: exactly last token's KV + readback bytes
        assert list(later["buffer_destroy"]) == [KV_CACHES + 1] * len(later)
        prev_kv = [max(BYTES_PER_POSITION * pos, 1024) for pos in later["step"]]
        assert list(later["buffer_bytes_destroyed"].diff().fillna(later["buffer_bytes_destroyed"].iloc[0])) == \
            [KV_CACHES * b + READBACK_BYTES for b in prev_kv]
        # old positions copied in: one copy per KV head per cache, plus the 2 readback copies
        assert list(later["copy_buffer_to_buffer"]) == [KV_CACHES * TINY["kv_heads"] + 2] * len(later)
        live = st["buffer_bytes_live"]
        assert (live == st["buffer_bytes_created"] - st["buffer_bytes_destroyed"] - st["buffer_bytes_collected"]).all()
    # reuse: the 4 nodes per layer that bind a KV cache miss the bind group cache every token
    reuse = recreate_run.cell_steps("reuse")
    assert list(reuse[reuse["step"] > 0]["create_bind_group"]) == [4 * TINY["layers"]] * 4
    # same tokens as the CPU reference (verify=true) and across variants
    assert list(reuse["logits_hash"]) == list(recreate_run.cell_steps("fresh")["logits_hash"])
    assert (reuse["extra_max_abs_logit_err"] < 1e-3).all()


@pytest.fixture(scope="module")
def patterns_run(tmp_path_factory):
    cli, _ = _run(tmp_path_factory, "patterns", "--variant", "fresh,reuse", "--tokens", "3",
                  "--param", "dispatches_per_pass=1", "--param", "max_in_flight=1",
                  "--param", "uniform_buffers=per-dispatch", "--param", "bindings_per_bind_group=16",
                  "--param", "verify=true")
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return load_run(cli)


def test_encoding_patterns_signatures(patterns_run):
    for variant in ("fresh", "reuse"):
        st = patterns_run.cell_steps(variant)
        assert (st["dispatch_workgroups"] == DISPATCHES).all()
        # one compute pass per dispatch, independent of the 16 dispatches per submit
        assert (st["begin_compute_pass"] == st["dispatch_workgroups"]).all()
        assert (st["submit"] == -(-DISPATCHES // 16)).all()
        # in-flight cap 1: every submit waited on with onSubmittedWorkDone
        assert (st["on_submitted_work_done"] == st["submit"]).all()
        later = st[st["step"] > 0]
        # a uniform buffer per dispatch, created and destroyed within the token
        assert (later["create_buffer"] == DISPATCHES).all() and (later["buffer_destroy"] == DISPATCHES).all()
        assert (later["create_buffer_bytes"] >= 16 * DISPATCHES).all() and (later["create_buffer_bytes"] <= 32 * DISPATCHES).all()
        assert later["create_buffer_bytes"].nunique() == 1
        # every bind group padded to 16 entries
        assert (st["extra_bindings_min"] == 16).all() and (st["extra_bindings_max"] == 16).all()
        assert (st["extra_max_abs_logit_err"] < 1e-3).all()
    # reuse: a new uniform buffer per dispatch means a bind group cache miss per dispatch
    reuse = patterns_run.cell_steps("reuse")
    assert (reuse["create_bind_group"] == DISPATCHES).all()
    assert list(reuse["token"]) == list(patterns_run.cell_steps("fresh")["token"])


@pytest.fixture(scope="module")
def ending_runs(tmp_path_factory):
    """3 generate calls of 2 tokens, each with a 1 MiB encoder output (a chunk loop), per ending."""
    runs = {}
    for ending in ("leak", "clean", "drop-undestroyed"):
        cli, _ = _run(tmp_path_factory, ending, "--variant", "reuse", "--tokens", "6",
                      "--param", "tokens_per_call=2", f"--param", f"call_ending={ending}",
                      "--param", "encoder_mib_per_call=1")
        assert cli.returncode == 0, cli.stdout + cli.stderr
        runs[ending] = load_run(cli).cell_steps("reuse")
    return runs


def test_generate_calls_start_over_and_hold_their_encoder_output(ending_runs):
    for ending, st in ending_runs.items():
        assert list(st["extra_call"]) == [0, 0, 1, 1, 2, 2], ending
        assert list(st["extra_pos"]) == [0, 1] * 3
        assert list(st["token"][::2]) == [st["token"].iloc[0]] * 3       # each call decodes the same tokens
        firsts = st[st["extra_pos"] == 0]
        assert (firsts["extra_encoder_bytes"] == 1 << 20).all()
        # every call allocates the same: its first step creates it all (1 MiB of it the encoder output)
        assert firsts["create_buffer_bytes"].nunique() == 1 and (firsts["create_buffer_bytes"] > 1 << 20).all()
        assert (st[st["extra_pos"] == 1]["create_buffer"] == 0).all()


def test_leak_grows_live_buffer_bytes_by_each_calls_bytes(ending_runs):
    st = ending_runs["leak"]
    per_call = int(st["create_buffer_bytes"].iloc[0])
    ends = st[st["extra_pos"] == 1]["buffer_bytes_live"].tolist()
    assert [b - a for a, b in zip(ends, ends[1:])] == [per_call, per_call]
    assert (st["buffer_bytes_destroyed"] == 0).all() and (st["buffer_bytes_collected"] == 0).all()


def test_clean_returns_live_buffer_bytes_to_baseline(ending_runs):
    st = ending_runs["clean"]
    per_call = int(st["create_buffer_bytes"].iloc[0])
    assert st[st["extra_pos"] == 1]["buffer_bytes_live"].nunique() == 1
    firsts = st[st["extra_pos"] == 0]
    # the previous call's buffers are destroyed in the next call's first step: all of its bytes
    assert list(firsts["buffer_bytes_destroyed"]) == [0, per_call, 2 * per_call]


def test_drop_undestroyed_destroys_nothing(ending_runs):
    st = ending_runs["drop-undestroyed"]
    assert (st["buffer_destroy"] == 0).all() and (st["buffer_bytes_destroyed"] == 0).all()
    # only a garbage collection can bring the bytes back: live = created - collected
    assert (st["buffer_bytes_live"] == st["buffer_bytes_created"] - st["buffer_bytes_collected"]).all()
    assert st["buffer_bytes_live"].iloc[-1] <= ending_runs["leak"]["buffer_bytes_live"].iloc[-1]
