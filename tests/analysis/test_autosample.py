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
    # a time is resolved by its interval across repetitions (reps_low/high, relative to a = 10 ms)
    d = S.Difference("ms_per_token", "ms", "median", "a", "b", 10, 8, -2, -2.5, -1.5, -0.2, -0.25, -0.15, "x", True,
                     2, 2, -2.5, -1.5)
    assert A.unresolved([d], conds) == []                       # clears 0 and ±5%
    d.reps_low, d.reps_high = -0.4, 0.1
    assert len(A.unresolved([d], conds)) == 1                  # straddles 0% only
    assert "contains +0%" in A.unresolved([d], conds)[0]
    d.reps_low, d.reps_high = -2.5, -0.3
    assert [u.split()[-1] for u in A.unresolved([d], conds)] == ["-5%"]
    # the within-run interval alone (one repetition a side) resolves nothing
    one = S.Difference("ms_per_token", "ms", "median", "a", "b", 10, 8, -2, -2.5, -1.5, -0.2, -0.25, -0.15, "x", None,
                       1, 1, evidence="1 repetition: within-run only")
    assert len(A.unresolved([one], conds)) == 3 and "no CI across repetitions" in A.unresolved([one], conds)[0]


def test_decide_stops_when_resolved_after_two_rounds_or_at_the_timeout():
    conds = A.parse_conditions("0%")
    d = S.Difference("ms_per_token", "ms", "median", "a", "b", 10, 8, -2, -2.5, -1.5, -0.2, -0.25, -0.15, "x", True,
                     2, 2, -2.5, -1.5)
    assert not A.decide([d], conds, 1, 0.0, 60).stop                   # resolved, but one round only
    assert A.decide([d], conds, 2, 0.0, 60).stop
    d.reps_low, d.reps_high = -1.0, 1.0
    assert not A.decide([d], conds, 5, 10.0, 60).stop
    assert "--timeout" in A.decide([d], conds, 5, 61.0, 60).reason
    assert not A.decide([d], conds, 1, 61.0, 60).stop                  # at least two rounds, timeout or not
    assert "no difference to sample" in A.decide([], conds, 1, 0.0, 60).reason
