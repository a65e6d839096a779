"""Reuse distances → hit rate at every capacity (harness/stats/workloads/cache_working_set.py):
pure logic, checked against an LRU cache simulated lookup by lookup on key sequences shaped like
an engine's (a fixed set of nodes, some binding buffers that rotate through a pool)."""

from __future__ import annotations

import random
from collections import OrderedDict

import pytest

from harness.stats.workloads.cache_working_set import capacity_for, curve, hit_rate, steady, sweep_check


def _sequence(tokens=40, nodes=60, rotating=8, pool=5, seed=3):
    """Per token, `nodes` lookups; the first `rotating` bind a buffer taken round-robin from a
    pool of `pool` (ORT's rotating KV buffers), the rest the same buffers every token."""
    rng = random.Random(seed)
    order = list(range(nodes))
    seq = []
    for t in range(tokens):
        rng.shuffle(order) if t == 0 else None
        for n in order:
            seq.append(f"n{n}|b{(t + n) % pool}" if n < rotating else f"n{n}")
    return seq


def _distances(seq):
    stack, hist, cold = [], {}, 0
    for k in seq:
        if k in stack:
            d = stack.index(k)
            hist[d] = hist.get(d, 0) + 1
            stack.remove(k)
        else:
            cold += 1
        stack.insert(0, k)
    return hist, cold


def _lru_hits(seq, capacity):
    cache, hits = OrderedDict(), 0
    for k in seq:
        if k in cache:
            hits += 1
            cache.move_to_end(k)
        else:
            cache[k] = True
            if len(cache) > capacity:
                cache.popitem(last=False)
    return hits


@pytest.mark.parametrize("capacity", [1, 8, 52, 60, 61, 67, 68, 70, 100, 300])
def test_hit_rate_from_distances_equals_a_simulated_lru_cache(capacity):
    seq = _sequence()
    hist, cold = _distances(seq)
    assert cold == 60 - 8 + 8 * 5  # every (node, buffer) once
    assert hit_rate(hist, len(seq), capacity) == _lru_hits(seq, capacity) / len(seq)


def test_capacity_for_99_percent_is_the_smallest_capacity_that_reaches_it():
    seq = _sequence(tokens=400)
    hist, _ = _distances(seq)
    need = capacity_for(hist, len(seq), 0.99)
    assert _lru_hits(seq, need) / len(seq) >= 0.99 > _lru_hits(seq, need - 1) / len(seq)
    points = dict(curve(hist, len(seq), [need]))
    assert points[need] >= 0.99 and points[1] < 0.99
    # too many first lookups: no capacity reaches the target
    assert capacity_for(hist, len(seq), 1.0) is None


def test_steady_state_subtracts_the_warmup_histogram():
    seq = _sequence(tokens=10)
    warm_hist, warm_cold = _distances(seq[:60])
    end_hist, end_cold = _distances(seq)
    s = steady({"lookups": 60, "cold": warm_cold, "distances": [[d, n] for d, n in warm_hist.items()]},
               {"lookups": len(seq), "cold": end_cold, "distances": [[d, n] for d, n in end_hist.items()]})
    assert s["lookups"] == len(seq) - 60 and s["cold"] == end_cold - warm_cold
    assert sum(s["hist"].values()) + s["cold"] == s["lookups"]
    with pytest.raises(ValueError):
        steady({"lookups": 10**6, "cold": 0, "distances": []}, {"lookups": 5, "cold": 5, "distances": []})


def test_sweep_check_agreement():
    pts = [{"capacity": c, "measured": m, "predicted": p, "capacity_99": 700}
           for c, m, p in [(256, 0.80, 0.801), (512, 0.95, 0.95), (1024, 0.995, 0.996), (2048, 1.0, 1.0)]]
    c = sweep_check(pts)
    assert (c["measured_first"], c["predicted_first"], c["predicted_capacity"], c["agrees"]) == (1024, 1024, 700, True)
    assert c["max_abs_error"] == pytest.approx(0.001)
    pts[2]["measured"] = 0.98
    assert sweep_check(pts)["agrees"] is False
