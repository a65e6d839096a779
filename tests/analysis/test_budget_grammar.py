"""Budget grammar and files (harness/verdicts/budgets.py): parsing only, no run needed."""

from __future__ import annotations

import pytest

from harness.verdicts import budgets as B


@pytest.mark.parametrize("text, expect", [
    ("ort-decode/bind-group-cache: bind_groups_per_token <= 1 after token 32",
     dict(browser="*", workload="ort-decode", variant="bind-group-cache", stat="median", limit=1, after=32)),
    ("webkit/*: live_bind_groups_max <= 5000", dict(browser="webkit", workload="*", variant="*", stat="mean", limit=5000)),
    ("chromium/decode-loop/reuse: ms_per_token <= 0.95 * fresh",
     dict(browser="chromium", workload="decode-loop", variant="reuse", ref="fresh", factor=0.95, limit=None)),
    ("decode-loop/reuse@tiny: p90(ms_per_token) < baseline * 1.1",
     dict(workload="decode-loop", variant="reuse", profile="tiny", stat="p90", op="<", ref="baseline", factor=1.1)),
    ("*/decode-loop: rss_growth_bytes_per_token_renderer <= 64KiB", dict(browser="*", workload="decode-loop",
                                                                           stat="slope", limit=65536)),
    ("chromium: max(bind_groups_per_token) <= 1", dict(browser="chromium", workload="*", stat="max")),
    ("decode-loop: extra_bind_group_cache_misses == 0", dict(workload="decode-loop", op="==", limit=0)),
])
def test_grammar(text, expect):
    b = B.parse(text)
    for k, v in expect.items():
        assert getattr(b, k) == v, (k, getattr(b, k))


@pytest.mark.parametrize("text, message", [
    ("decode-loop bind_groups_per_token <= 1", "missing ':'"),
    ("decode-loop: bindgroups <= 1", "unknown metric 'bindgroups' (valid: ms_per_token"),
    ("decode-loop: average(ms_per_token) <= 1", "unknown statistic 'average'"),
    ("decode-loop: ms_per_token =< 1", "check is not METRIC OP LIMIT"),
    ("decode-loop: ms_per_token <= 3MiB", "unit 'MiB' does not apply to ms_per_token"),
    ("decode-loop: ms_per_token <= 1 after token x", "'after token' needs a whole number"),
    ("a/b/c/d: ms_per_token <= 1", "is not [browser/]workload[/variant][@profile]"),
    ("decode-loop: max(live_bind_groups_growth_per_token) <= 1", "valid: slope"),
    # float() reads these: never a variant named "nan" (compared later, exit 1)
    ("chromium: ms_per_token <= nan", "limit 'nan' is not a finite number"),
    ("chromium: ms_per_token <= inf", "limit 'inf' is not a finite number"),
    ("chromium: ms_per_token <= -Infinity", "limit '-Infinity' is not a finite number"),
    ("chromium: ms_per_token <= NaN ms", "limit 'NaN ms' is not a finite number"),
    ("chromium: ms_per_token <= 1e999", "limit '1e999' is not a finite number"),
])
def test_bad_budget_lines_name_what_is_wrong(text, message):
    with pytest.raises(B.BudgetError) as exc:
        B.parse(text, "budgets.toml", 7)
    assert str(exc.value).startswith("budgets.toml line 7: ") and message in str(exc.value)


def test_toml_file_with_both_forms(tmp_path):
    f = tmp_path / "b.toml"
    f.write_text('budgets = ["webkit/*: live_bind_groups_max <= 5000"]\n\n[[budget]]\nname = "cache"\n'
                 'check = "decode-loop/reuse: bind_groups_per_token <= 1 after token 0"\n')
    got = B.load([str(f), "decode-loop: submits_per_token <= 8"])
    assert [b.name for b in got] == ["webkit/*: live_bind_groups_max <= 5000", "cache", "decode-loop: submits_per_token <= 8"]
    assert got[1].source.endswith("b.toml line 5")




# ------------------------------------------------------------- verdicts on a recorded real run

RECORDED = __import__("pathlib").Path(__file__).resolve().parent / "runs" / "chromium-decode-loop"


@pytest.fixture(scope="module")
def recorded_stats():
    from harness import stats as S
    from harness import tables as T

    return S.compute(T.build(RECORDED))


def test_a_budget_that_matches_nothing_fails_unless_optional(recorded_stats):
    typo, optional = B.parse("decode-lop/reuse: bind_groups_per_token <= 1"), \
        B.parse("webkit/*: live_bind_groups_max <= 5000 optional")
    assert optional.optional and not typo.optional and optional.metric == "live_bind_groups_max"
    got = {r.budget.text: r for r in B.evaluate([typo, optional], recorded_stats)}
    assert got[typo.text].status == "failed" and "matched no measured cell" in got[typo.text].message
    assert got[optional.text].status == "skipped"
    assert B.failed(list(got.values())) == [got[typo.text]]


def test_optional_in_a_toml_table(tmp_path):
    f = tmp_path / "b.toml"
    f.write_text('[[budget]]\ncheck = "webkit/*: live_bind_groups_max <= 5000"\noptional = true\n')
    assert B.load([str(f)])[0].optional
    f.write_text('[[budget]]\ncheck = "webkit/*: live_bind_groups_max <= 5000"\noptional = "yes"\n')
    with pytest.raises(B.BudgetError, match="optional must be true or false"):
        B.load([str(f)])


def test_run_refuses_baseline_budgets_up_front():
    from harness.workloads import discover

    b = B.parse("decode-loop/reuse: ms_per_token <= 1.05 * baseline")
    with pytest.raises(B.BudgetError, match="baseline budgets belong to `webgpu-harness compare"):
        B.check_references([b], [discover()["decode-loop"]])
