"""Auto-sampling's stopping rule (harness/verdicts/autosample.py), tachometer's conditions."""

from __future__ import annotations

import pytest

from harness import stats as S
from harness.verdicts import autosample as A


def test_auto_sample_conditions_follow_tachometer():
    conds = A.parse_conditions("0%, 5%")
    assert [c.thresholds() for c in conds] == [[0.0], [-0.05, 0.05]]
    assert A.parse_conditions("-10%")[0].thresholds() == [-0.1]
    assert A.parse_conditions("0.5ms")[0].relative is False
    with pytest.raises(ValueError, match="not N% or Nms"):
        A.parse_conditions("fast")
    d = S.Difference("ms_per_token", "ms", "median", "a", "b", 10, 8, -2, -2.5, -1.5, -0.2, -0.25, -0.15, "x", True)
    assert A.unresolved([d], conds) == []                       # clears 0 and ±5%
    d.rel_low, d.rel_high = -0.04, 0.01
    assert len(A.unresolved([d], conds)) == 1                  # straddles 0% only
    assert "contains +0%" in A.unresolved([d], conds)[0]
    d.rel_low, d.rel_high = -0.25, -0.03
    assert [u.split()[-1] for u in A.unresolved([d], conds)] == ["-5%"]


def test_decide_stops_when_resolved_after_two_rounds_or_at_the_timeout():
    conds = A.parse_conditions("0%")
    d = S.Difference("ms_per_token", "ms", "median", "a", "b", 10, 8, -2, -2.5, -1.5, -0.2, -0.25, -0.15, "x", True)
    assert not A.decide([d], conds, 1, 0.0, 60).stop                   # resolved, but one round only
    assert A.decide([d], conds, 2, 0.0, 60).stop
    d.rel_low, d.rel_high = -0.1, 0.1
    assert not A.decide([d], conds, 5, 10.0, 60).stop
    assert "--timeout" in A.decide([d], conds, 5, 61.0, 60).reason
    assert not A.decide([d], conds, 1, 61.0, 60).stop                  # at least two rounds, timeout or not
    assert "no difference to sample" in A.decide([], conds, 1, 0.0, 60).reason
