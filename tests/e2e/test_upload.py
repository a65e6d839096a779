"""upload: the three upload paths (four variants) in Chromium (real WebGPU) and WebKitGTK
(emulated WebGPU, which really moves bytes): every upload verified, and the probe's counters per
step exactly the path's calls — buffers created and destroyed per upload path."""

from __future__ import annotations

import pytest

from conftest import load_run, run_cli

pytestmark = pytest.mark.full   # browser runs of its own: make test-full

PATHS = ["write-buffer", "staging-ring", "mapped-at-creation", "map-async-write"]
SIZES = [4096, 65536]
ROUNDS, RING = 2, 2
#: per-upload (createBuffer, destroy, mapAsync incl. the verify readback, writeBuffer, submits incl. verify)
CALLS = {"write-buffer": (0, 0, 1, 1, 1), "staging-ring": (0, 0, 2, 0, 2),
         "mapped-at-creation": (1, 1, 1, 0, 2), "map-async-write": (1, 1, 2, 0, 2)}


def _upload_run(tmp_path_factory, browser):
    d = tmp_path_factory.mktemp(f"upload-{browser}") / "run"
    cli = run_cli("run", "--browser", browser, "--workload", "upload", "--tokens", str(ROUNDS),
                  "--param", "sizes=" + ",".join(map(str, SIZES)), "--param", f"ring={RING}", run_dir=d)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return load_run(cli)


@pytest.fixture(scope="module")
def chromium_run(tmp_path_factory):
    return _upload_run(tmp_path_factory, "chromium")


def _check_counts(run):
    assert set(run.summary["status"]) == {"ok"}, run.summary[["cell", "status", "reason"]]
    for path in PATHS:
        st = run.cell_steps(path)
        assert len(st) == ROUNDS * len(SIZES)
        assert st["extra_size_bytes"].tolist() == SIZES * ROUNDS
        assert (st["extra_verify_ok"] == 1).all()
        got = st[["create_buffer", "buffer_destroy", "map_async", "write_buffer", "submit"]]
        assert (got.values == CALLS[path]).all(), (path, got)
        assert (st["create_buffer"] == st["extra_expected_create_buffer"]).all()
        assert (st["buffer_destroy"] == st["extra_expected_buffer_destroy"]).all()
        assert (st["map_async"] == st["extra_expected_map_async"]).all()
        assert (st["submit"] == st["extra_expected_submits"]).all()
        assert (st["write_buffer_bytes"] == st["extra_expected_write_buffer_bytes"]).all()
        # the workload's staging ledger: what each path allocates and frees per upload
        per_upload = path in ("mapped-at-creation", "map-async-write")
        assert (st["extra_staging_bytes_created"] == (st["extra_size_bytes"] if per_upload else 0)).all()
        assert (st["extra_staging_bytes_destroyed"] == st["extra_staging_bytes_created"]).all()
        assert (st["extra_staging_bytes_alive"] == (RING * max(SIZES) if path == "staging-ring" else 0)).all()
    # every path delivered the same stamped bytes
    hashes = {p: run.cell_steps(p)["logits_hash"].tolist() for p in PATHS}
    assert len({tuple(h) for h in hashes.values()}) == 1


def test_chromium_counts_per_upload_path(chromium_run):
    _check_counts(chromium_run)
    assert (chromium_run.summary["webgpu"] == "real").all()
    assert set(chromium_run.summary["tokens_identical"]) == {"yes"}


def test_chromium_per_upload_buffers_stay_live_until_collected(chromium_run):
    """A destroyed staging buffer's JS wrapper lives until GC: buffers_live climbs by one per upload
    on the per-upload paths (unless a collection ran) and never on the ring."""
    for path in ("mapped-at-creation", "map-async-write"):
        st = chromium_run.cell_steps(path)
        grew = st["buffers_live"].diff().dropna()
        assert ((grew == 1) | (st["buffers_collected"].diff().dropna() > 0)).all(), st[["step", "buffers_live"]]
    ring = chromium_run.cell_steps("staging-ring")
    assert ring["buffers_created"].nunique() == 1


def test_webkit_emulated_counts_per_upload_path(tmp_path_factory):
    run = _upload_run(tmp_path_factory, "webkit")
    assert (run.summary["webgpu"] == "emulated").all()
    _check_counts(run)
