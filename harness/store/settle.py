"""Each cell's status as its samples carry it (``report``, ``merge``, harness/tables.py): the
manifest's word is not taken alone, so a damaged or edited folder reads incomplete or failed,
never ok."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.store.runfolder import BadLine


def _said(bad: list[BadLine], limit: int = 3) -> str:
    lines = ", ".join(str(b.line) for b in bad[:limit]) + (f" and {len(bad) - limit} more" if len(bad) > limit else "")
    return f"samples.jsonl line{'s' if len(bad) > 1 else ''} {lines} {'are' if len(bad) > 1 else 'is'} not a sample ({bad[0].why})"


def settle(cells: list[dict[str, Any]], samples: list[dict[str, Any]], bad: list[BadLine]) -> dict[str, tuple[str, str]]:
    """Each cell's status and reason as its samples carry them, for re-analysis (``report``,
    ``merge``), which never takes the manifest's word alone:

    - ``pending`` (the harness was killed, or still runs): ``failed``, the steps kept said;
    - a cell the manifest calls ``ok`` with no step in samples.jsonl: ``failed``; with steps but
      no ``done`` sample (a workload's; an app's cells end without one): ``incomplete``; with
      step numbers missing in the middle: ``incomplete``;
    - the harness's last ``cell_status`` record of a cell, when it is worse than the manifest's;
    - a line that is not a sample (:class:`BadLine`, given to the cells around it): an ``ok``
      cell becomes ``incomplete`` with the line named; any other keeps its status, the line said.

    Returns cell id → (status, reason) for every cell of ``cells`` (manifest cells)."""
    steps: dict[str, set[int]] = {}
    done: set[str] = set()
    recorded: dict[str, tuple[str, str]] = {}
    by_id = {c.get("cell"): c for c in cells}
    for s in samples:
        cid = s.get("cell")
        kind = s.get("kind")
        if kind == "step":
            c = by_id.get(cid)
            if c is not None and c.get("realm") and s.get("realm") != c["realm"]:
                continue  # an app cell: its measured realm's steps
            steps.setdefault(cid, set()).add(s["step"])
        elif kind == "done":
            done.add(cid)
        elif kind == "cell_status" and isinstance(s.get("status"), str):
            recorded[cid] = (s["status"], str(s.get("reason") or ""))
    bad_of: dict[str, list[BadLine]] = {}
    for b in bad:
        for cid in b.cells or list(by_id):  # a line no cell can be told from: every cell's
            bad_of.setdefault(cid, []).append(b)
    out: dict[str, tuple[str, str]] = {}
    for c in cells:
        cid = c.get("cell")
        status, reason = str(c.get("status") or "pending"), str(c.get("reason") or "")
        got = steps.get(cid, set())
        n = len(got)
        if status == "pending":
            status, reason = "failed", (f"not finished when this folder was analysed (the harness was killed, or is "
                                        f"still running); {n} steps were received and kept")
        rec = recorded.get(cid)
        if rec is not None and status == "ok" and rec[0] not in ("ok", "pending"):
            status, reason = rec[0], rec[1] or reason
        lines = bad_of.get(cid, [])
        if status == "ok":
            app = bool(c.get("app_url"))
            if n == 0:
                status = "failed"
                reason = ("the manifest says ok but samples.jsonl holds no step of this cell"
                          + ("" if app or cid in done else " and no done sample"))
            elif not app and cid not in done:
                status, reason = "incomplete", (f"the manifest says ok but samples.jsonl holds no done sample of this "
                                                f"cell; {n} steps were read")
            else:
                missing = _gaps(got)
                if missing:
                    status, reason = "incomplete", (f"step(s) {_ranges(missing)} missing from samples.jsonl; "
                                                    f"{n} steps were read")
            if lines:
                said = f"{_said(lines)}; it may have held this cell's samples"
                if status == "ok":
                    status, reason = "incomplete", f"{said}; {n} steps were read"
                else:
                    reason = f"{reason}; {said}"
        elif lines:
            reason = f"{reason}; {_said(lines)}" if reason else _said(lines)
        out[cid] = (status, reason)
    return out


def _gaps(got: set[int]) -> list[tuple[int, int]]:
    """The runs of step numbers missing from 0…max(``got``), as (first, last) pairs, in
    O(n log n) of the steps read: a huge step number costs nothing (never a list of every
    number below it)."""
    out: list[tuple[int, int]] = []
    expected = 0
    for k in sorted(got):
        if k > expected:
            out.append((expected, k - 1))
        expected = max(expected, k + 1)
    return out


def _ranges(gaps: list[tuple[int, int]]) -> str:
    """``[(3, 5), (9, 9)]`` → ``"3-5, 9"`` (at most 6 ranges, then how many more)."""
    parts = [str(a) if a == b else f"{a}-{b}" for a, b in gaps[:6]]
    return ", ".join(parts) + (f" and {len(gaps) - 6} more ranges" if len(gaps) > 6 else "")
