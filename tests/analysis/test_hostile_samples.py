"""Sample lines whose values break the rules they were written under (an adversarial tester's
folders, round 2), on small copies of a recorded real run: non-finite numbers, strings where
numbers belong, negative or huge step numbers, a manifest emptied of its cells. Each damaged line
is refused at read time by the server's own models (harness/serve/lines.py ``line_problem``),
named ("line N: why") and makes its cell incomplete; nothing raises a traceback. The real CLI
runs in-process; nothing starts a browser."""

from __future__ import annotations

import json
import shutil
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import tables as T
from harness.cli import app
from harness.store.runfolder import read_manifest, scan_samples
from harness.store.settle import settle

RECORDED = Path(__file__).resolve().parent / "runs" / "chromium-decode-loop"


def _copy(tmp_path: Path, name: str = "run") -> Path:
    d = tmp_path / name
    shutil.copytree(RECORDED, d)
    return d


def _cli(*argv):
    r = CliRunner().invoke(app, [str(a) for a in argv])
    return r, [x for x in r.stderr.splitlines() if x.strip()]


def _damage(d: Path, change, where=lambda s: s.get("kind") == "step" and s.get("step") == 5) -> list[tuple[int, str]]:
    """Apply ``change`` to every line ``where`` picks; return (line number from 1, cell) of each."""
    lines = (d / "samples.jsonl").read_text().splitlines()
    hit = []
    for i, ln in enumerate(lines):
        s = json.loads(ln)
        if where(s):
            change(s)
            lines[i] = json.dumps(s)  # allow_nan: NaN/Infinity written as bare tokens, as the tester did
            hit.append((i + 1, s["cell"]))
    (d / "samples.jsonl").write_text("\n".join(lines) + "\n")
    assert hit
    return hit


def _cells(d: Path) -> dict:
    return {c: (s, r) for c, s, r in T.build(d).summary[["cell", "status", "reason"]].itertuples(index=False)}


def _no_traceback(tmp_path: Path, d: Path) -> None:
    for argv in (("report", d), ("compare", RECORDED, d, "-o", tmp_path / "cmp"), ("merge", d, "-o", tmp_path / "m")):
        r, _ = _cli(*argv)
        assert "Traceback" not in r.output + r.stderr, (argv[0], r.output, r.stderr)
        if argv[0] == "compare" and r.exit_code == 2:  # every cell of the damaged run failed: nothing to compare, said why
            assert "has no ok cells (" in r.output + r.stderr and "not a sample" in r.output + r.stderr, r.output
        else:
            assert r.exit_code in (0, 1), (argv[0], r.output, r.stderr)
        assert not isinstance(r.exception, (ValueError, OverflowError, TypeError, KeyError)), r.exception


@pytest.mark.parametrize("field,value,said", [
    ("counters.createBindGroup", float("nan"), "finite"),
    ("counters.dispatchWorkgroups", float("-inf"), "finite"),
    ("wall_ms", float("nan"), "finite"),
    ("cpu_ms", float("inf"), "finite"),
    ("t_ms", float("nan"), "finite"),
    ("token", float("nan"), "token"),
    ("step", -3, "greater than or equal to 0"),
    ("step", 9007199254740991, "less than or equal to 10000000"),
])
def test_a_step_with_a_value_the_server_would_refuse_is_a_named_bad_line_and_its_cell_incomplete(tmp_path, field, value, said):
    d = _copy(tmp_path)

    def change(s):
        *path, last = field.split(".")
        target = s
        for k in path:
            target = target[k]
        target[last] = value

    hit = _damage(d, change)
    _, bad = scan_samples(d)
    assert [b.line for b in bad] == [n for n, _ in hit] and all(said in b.why for b in bad), bad
    got = _cells(d)
    for n, cell in hit:
        assert got[cell][0] == "incomplete" and f"line {n} is not a sample" in got[cell][1], got[cell]
    assert all(s == "ok" for c, (s, _) in got.items() if c not in {c for _, c in hit})


def test_nan_counters_and_a_string_rss_never_give_a_traceback(tmp_path):
    d = _copy(tmp_path)
    _damage(d, lambda s: s["counters"].update(createBindGroup=float("nan"), submit=float("-inf")))
    pm = _damage(d, lambda s: s.update(rss_bytes="lots"), where=lambda s: s.get("kind") == "process_memory")
    _, bad = scan_samples(d)
    assert any(b.line == pm[0][0] and b.why.startswith("rss_bytes:") for b in bad), bad
    _no_traceback(tmp_path, d)


def test_every_step_negative_leaves_no_cell_ok(tmp_path):
    d = _copy(tmp_path)
    _damage(d, lambda s: s.update(step=-1 - s["step"]), where=lambda s: s.get("kind") == "step")
    got = _cells(d)
    assert got and all(s != "ok" and "not a sample (step:" in r for s, r in got.values()), got


def test_a_step_numbered_ten_million_is_incomplete_said_as_a_range_without_a_list_of_every_number(tmp_path):
    d = _copy(tmp_path)
    hit = _damage(d, lambda s: s.update(step=10_000_000))  # the largest the server accepts
    manifest, (samples, bad) = read_manifest(d), scan_samples(d)
    assert bad == []
    tracemalloc.start()
    got = settle(manifest["cells"], samples, bad)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1_000_000, peak  # a set of 10 M ints was ~1.25 GB
    status, reason = got[hit[0][1]]
    assert status == "incomplete" and "step(s) 5, 16-9999999 missing" in reason, reason


def test_a_manifest_emptied_of_its_cells_is_one_line_exit_2(tmp_path):
    d = _copy(tmp_path)
    m = json.loads((d / "manifest.json").read_text())
    m["cells"] = []
    (d / "manifest.json").write_text(json.dumps(m))
    for argv in (("report", d), ("merge", d, "-o", tmp_path / "m")):
        r, lines = _cli(*argv)
        assert r.exit_code == 2 and len(lines) == 1, (r.exit_code, r.stderr)
        assert "lists no cells but samples.jsonl holds samples of cell" in lines[0]
    assert not (d / "report.html").exists()


@pytest.mark.parametrize("kind", [["step"], {"a": 1}, 7, None])
def test_a_kind_that_is_not_a_string_is_a_named_bad_line_never_a_traceback(tmp_path, kind):
    """An adversary's line ``{"kind": ["step"], …}`` crashed report, compare and merge with
    ``unhashable type: 'list'`` (looking its model up by kind)."""
    d = _copy(tmp_path)
    lines = (d / "samples.jsonl").read_text().splitlines()
    cell = json.loads(lines[40])["cell"]
    lines.insert(40, json.dumps({"kind": kind, "cell": cell, "seq": 10**6}))
    (d / "samples.jsonl").write_text("\n".join(lines) + "\n")
    samples, bad = scan_samples(d)
    if kind is None:  # "kind": null is a line without a kind (as before): kept, ignored by the tables
        assert bad == []
    else:
        said = {list: "array", dict: "object", int: "number"}[type(kind)]
        assert [(b.line, b.why) for b in bad] == [(41, f"kind is a JSON {said}, not a string")]
    _no_traceback(tmp_path, d)
