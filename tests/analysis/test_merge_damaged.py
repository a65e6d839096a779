"""``merge`` of run folders a crash left behind (recorded real runs, copied and damaged the way
a killed harness damages them): a torn last line is dropped and said, a torn line in the middle
is left out and said in the status of the cells it may have held — the same status ``report``
gives the folder (issue 23: report and merge agree) —, a cell left ``pending`` becomes ``failed``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.store.merge import merge

RECORDED = Path(__file__).resolve().parent / "runs" / "chromium-decode-loop"


def _copy(tmp_path: Path, name: str) -> Path:
    d = tmp_path / name
    shutil.copytree(RECORDED, d)
    return d


def test_a_killed_run_merges_with_its_unfinished_cell_failed_and_its_torn_last_line_said(tmp_path):
    d = _copy(tmp_path, "killed")
    manifest = json.loads((d / "manifest.json").read_text())
    manifest["cells"][-1]["status"] = "pending"   # what a SIGKILLed harness leaves
    (d / "manifest.json").write_text(json.dumps(manifest))
    lines = (d / "samples.jsonl").read_text().splitlines()
    (d / "samples.jsonl").write_text("\n".join(lines) + "\n" + lines[-1][: len(lines[-1]) // 2])
    out = merge([d], tmp_path / "merged", argv=["test"])
    statuses = [c["status"] for c in out["cells"]]
    assert "pending" not in statuses
    last = out["cells"][-1]
    assert last["status"] == "failed" and "killed" in last["reason"]
    assert out["merged_from"][0]["torn_last_line_dropped"] is True
    assert len((tmp_path / "merged" / "samples.jsonl").read_text().splitlines()) == len(lines)


def test_a_torn_line_in_the_middle_is_named_and_merge_and_report_agree(tmp_path):
    # was: an error (MergeError). Issue 23 asks report and merge of one folder to agree, and
    # report says such a folder is incomplete naming the line: merge now says the same.
    from harness import tables as T

    d = _copy(tmp_path, "torn")
    lines = (d / "samples.jsonl").read_text().splitlines()
    cell = json.loads(lines[5])["cell"]
    lines[5] = lines[5][:20]
    (d / "samples.jsonl").write_text("\n".join(lines) + "\n")
    out = merge([d], tmp_path / "merged", argv=["test"])
    merged = {c["cell"].split(":", 1)[1]: c for c in out["cells"]}
    assert merged[cell]["status"] == "incomplete"
    assert "samples.jsonl line 6 is not a sample (not JSON (torn or edited))" in merged[cell]["reason"]
    assert out["merged_from"][0]["lines_left_out"] == ["line 6: not JSON (torn or edited)"]
    report = T.build(d).summary.set_index("cell")
    for cid, c in merged.items():
        assert (report.loc[cid, "status"], report.loc[cid, "reason"]) == (c["status"], c["reason"])
    # the merged folder itself reads the same (its samples are clean, its statuses carried)
    again = T.build(tmp_path / "merged").summary.set_index("cell")
    assert again.loc[f"torn:{cell}", "status"] == "incomplete"
    assert len((tmp_path / "merged" / "samples.jsonl").read_text().splitlines()) == len(lines) - 1
    # JSON that is not a sample (null, an array) and bytes that are not UTF-8: the same, named
    for i, (bad, why) in enumerate(((b"null", "a JSON null, not an object"), (b"[1,2]", "a JSON array, not an object"),
                                    (b"\xff\xfe", "bytes that are not UTF-8 (damaged)"))):
        raw = (d / "samples.jsonl").read_bytes().split(b"\n")
        raw[5] = bad
        (d / "samples.jsonl").write_bytes(b"\n".join(raw))
        out = merge([d], tmp_path / f"merged{i}", argv=["test"])
        c = next(c for c in out["cells"] if c["cell"].endswith(cell))
        assert c["status"] == "incomplete" and f"samples.jsonl line 6 is not a sample ({why})" in c["reason"]
        assert T.build(d).summary.set_index("cell").loc[cell, "reason"] == c["reason"]


def test_report_of_a_killed_or_damaged_folder_says_what_happened(tmp_path):
    # `report` on what a SIGKILLed harness leaves (a cell still pending), with delivery events
    # and lines that are not samples: the cell is failed with its steps kept, every event is in words
    from harness import tables as T

    d = _copy(tmp_path, "damaged")
    manifest = json.loads((d / "manifest.json").read_text())
    pending = manifest["cells"][-1]
    pending["status"], pending["reason"] = "pending", ""
    (d / "manifest.json").write_text(json.dumps(manifest))
    cell = pending["cell"]
    steps = sum(1 for ln in (d / "samples.jsonl").read_text().splitlines()
                if json.loads(ln).get("cell") == cell and json.loads(ln).get("kind") == "step")
    extra = [{"kind": "gap", "src": "w-1", "first_n": 7, "last_n": 9, "cell": cell, "seq": 10**6},
             {"kind": "process_exit", "pid": 4242, "process_type": "gpu-process", "step": 5, "cell": cell, "seq": 10**6 + 1},
             {"kind": "refused", "src": "w-1", "n": 12, "sample_kind": "step", "reason": "step: repeats 4", "cell": cell,
              "seq": 10**6 + 2}]
    with (d / "samples.jsonl").open("a") as fh:
        fh.write("\n".join(json.dumps(x) for x in extra) + "\nnull\n" + '{"kind": "step", "step": 3, "extra": "x"}\n')
    t = T.build(d)
    row = t.summary.set_index("cell").loc[cell]
    assert row["status"] == "failed" and row["reason"].startswith("not finished when this folder was analysed")
    assert f"{steps} steps were received and kept" in row["reason"] and steps > 0
    said = t.events["message"].tolist()
    assert "samples n=7–9 of sender w-1 never arrived" in said
    assert "gpu-process (pid 4242) exited after step 5" in said
    assert "refused a step sample (n=12, sender w-1): step: repeats 4" in said
    n = len((d / "samples.jsonl").read_text().splitlines())
    assert f"samples.jsonl line {n - 1}: a JSON null, not an object: left out" in said
    assert f"samples.jsonl line {n}: extra not an object: left out" in said


def test_merge_copies_each_line_as_written(tmp_path):
    """A merged samples.jsonl holds each source line's values and key order as written (``46``
    stays ``46`` in a float field, ``kind`` where it was), not the validated dict the analysis
    reads (an adversary found 796 of 917 merged lines reordered)."""
    d = _copy(tmp_path, "src")
    lines = (d / "samples.jsonl").read_text().splitlines()
    i = next(k for k, ln in enumerate(lines) if '"kind":"step"' in ln.replace(" ", ""))
    s = json.loads(lines[i])
    s["wall_ms"] = 46
    lines[i] = json.dumps(s)
    (d / "samples.jsonl").write_text("\n".join(lines) + "\n")
    merge([d], tmp_path / "merged", argv=["test"])
    merged = [json.loads(x) for x in (tmp_path / "merged" / "samples.jsonl").read_text().splitlines()]
    src = [json.loads(x) for x in lines]
    assert len(merged) == len(src)
    ignore = {"cell", "seq"}  # renamed and renumbered by the merge
    for a, b in zip(src, merged):
        assert [k for k in a if k not in ignore] == [k for k in b if k not in ignore]
        assert all(type(a[k]) is type(b[k]) and a[k] == b[k] for k in a if k not in ignore)
    assert merged[i]["wall_ms"] == 46 and isinstance(merged[i]["wall_ms"], int)
