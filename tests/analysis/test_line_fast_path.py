"""The fast read of a samples.jsonl line (harness/serve/lines.py ``fast_line``: its JSON validated
into a dict in one pass, against TypedDicts converted from the sample models) accepts exactly
what the full path accepts (``from_json`` then harness/store/runfolder.py ``not_a_sample``), with
the same values. Checked on every line of every recorded real run under tests/ and on damaged
copies of their lines (each rule the models hold broken once), so a model changed in a way the
conversion does not carry (a validator, a new container type) fails here, not in a report.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from pydantic_core import from_json

from harness.serve.lines import _LINE_MODELS, may_be_unfaithful, fast_line
from harness.serve.lines import kinds_held_to_objects
from harness.store.runfolder import OBJECT_FIELDS, fast_shape_problem as _shape_problem, not_a_sample

TESTS = Path(__file__).resolve().parents[1]
RECORDED = sorted(TESTS.rglob("samples.jsonl"))


def _full(raw: bytes):
    """``(dict or None, why or None)`` by the full path."""
    try:
        s = from_json(raw, cache_strings="keys")
    except ValueError:
        return None, "not JSON"
    return s, not_a_sample(s, raw)


def _same(a, b) -> bool:
    """Equal values; an integer in a float field comes back a float from the fast path."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
    return a == b


def _lines() -> list[bytes]:
    return [raw for p in RECORDED for raw in p.read_bytes().splitlines(keepends=True) if raw.strip()]


def test_every_recorded_line_takes_the_fast_path_with_the_same_values():
    assert len(RECORDED) >= 20, RECORDED
    lines = _lines()
    assert len(lines) > 5000
    kinds_seen, fast_n = set(), 0
    for raw in lines:
        full, why = _full(raw)
        fast = fast_line(raw)
        if fast is not None:
            fast_n += 1
            kinds_seen.add(fast["kind"])
            assert why is None and _shape_problem(fast) is None or why is not None and _shape_problem(fast) is not None, raw[:300]
            assert _same(fast, full), raw[:300]
        elif why is None and isinstance(full, dict) and full.get("kind") in _LINE_MODELS and not may_be_unfaithful(raw):
            pytest.fail(f"a good line of kind {full.get('kind')} missed the fast path: {raw[:300]!r}")
    # the fast path carries the kinds real runs are made of, and most of their lines
    assert {"step", "process_memory", "env", "done", "cell_status"} <= kinds_seen, kinds_seen
    assert fast_n > 0.9 * len(lines), (fast_n, len(lines))


def _damaged(s: dict) -> list[dict]:
    """Copies of sample ``s``, each breaking one rule its model holds."""
    out = []
    for k, v in s.items():
        if k == "kind":
            continue
        if isinstance(v, bool):
            out.append({**s, k: 1})
        elif isinstance(v, int):
            out += [{**s, k: -1}, {**s, k: 2**53 + 1}, {**s, k: "7"}, {**s, k: True}, {**s, k: 1.5}]
        elif isinstance(v, float):
            out += [{**s, k: -0.5}, {**s, k: "0.5"}, {**s, k: 1e400}]
        elif isinstance(v, str):
            out += [{**s, k: 5}, {**s, k: "x" * 5000}]
        elif isinstance(v, dict) and v:
            first = next(iter(v))
            out += [{**s, k: [1]}, {**s, k: {**v, first: "nope"}}, {**s, k: {**v, first: -3}}, {**s, k: {**v, "zz_unknown": 1}}]
        elif isinstance(v, list):
            out += [{**s, k: {"a": 1}}, {**s, k: v + [{"label": 1}]}]
    out += [{**s, f: [1]} for f in OBJECT_FIELDS] + [{**s, f: 5} for f in OBJECT_FIELDS]
    out += [{**s, "zz_unknown_field": 1}, {k: v for k, v in s.items() if k not in ("step", "wall_ms", "status")}]
    return out


def _text(s: dict) -> bytes:
    text = json.dumps(s, separators=(",", ":"), allow_nan=True).replace("Infinity", "1e400")
    return (text + "\n").encode()


def test_damaged_lines_are_refused_by_the_fast_path_whenever_the_full_path_refuses_them():
    firsts: dict[str, bytes] = {}
    for raw in _lines():
        s = json.loads(raw)
        if isinstance(s, dict) and s.get("kind") in _LINE_MODELS:
            firsts.setdefault(s["kind"], raw)
    assert {"step", "process_memory", "env"} <= set(firsts)
    checked = refused = 0
    for kind, raw in firsts.items():
        for bad in _damaged(json.loads(raw)):
            b = _text(bad)
            full, why = _full(b)
            fast = fast_line(b)
            checked += 1
            if why is not None:
                refused += 1
                assert fast is None or _shape_problem(fast) is not None, (kind, why, b[:400])
            elif fast is not None:
                assert _same(fast, full), b[:400]
    assert checked > 200 and refused > 100, (checked, refused)  # the damage did break rules


def test_kinds_held_to_objects():
    """The kinds whose fast-path lines are not looked at again (harness/store/runfolder.py
    ``fast_shape_problem``) include the bulk of a run, its steps, and never a kind whose model
    lets an undeclared key through (env, and the harness's records such as process_memory:
    their extra keys are unchecked, so ``"counters": 5`` there is looked at again)."""
    held = kinds_held_to_objects(OBJECT_FIELDS)
    assert {"step", "open_step", "done", "error", "log"} <= held, held
    assert not {"env", "process_memory", "worker_heap", "clock_sync", "gc_checkpoint", "cell_status"} & held, held
