"""steps.csv and memory.csv written by pyarrow (harness/csvfiles.py) read back as the same tables
as pandas' own ``to_csv`` gives: on every recorded real run of tests/analysis/runs, and on a frame
of the awkward values (booleans, a column of numbers and strings, a comma, nullable integers)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from harness import tables as T
from harness.csvfiles import write_csv

RUNS = sorted(p.parent for p in (Path(__file__).resolve().parent / "runs").glob("*/manifest.json"))


def _both(df: pd.DataFrame, tmp_path: Path) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    write_csv(df, tmp_path / "arrow.csv")
    df.to_csv(tmp_path / "pandas.csv", index=False)
    return (pd.read_csv(tmp_path / "arrow.csv", low_memory=False), pd.read_csv(tmp_path / "pandas.csv", low_memory=False),
            (tmp_path / "arrow.csv").read_text())


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_a_recorded_runs_long_tables_read_back_as_pandas_writes_them(run, tmp_path):
    t = T.build(run)
    assert len(t.steps) > 0
    for df in (t.steps, t.memory):
        arrow, pandas, text = _both(df, tmp_path)
        assert list(arrow.columns) == list(df.columns)
        pd.testing.assert_frame_equal(arrow, pandas, check_dtype=False)
        assert text.splitlines()[0] == ",".join(df.columns)  # the header as pandas writes it


def test_awkward_values_read_back_the_same(tmp_path):
    df = pd.DataFrame({"n": [1.0, None, 3.5], "s": ["x", "y,z", None], "b": [True, False, True],
                       "mixed": [1, "s", None], "pid": pd.array([1, None, 3], dtype="Int64"), "big": [2**40, 0, 7]})
    arrow, pandas, text = _both(df, tmp_path)
    pd.testing.assert_frame_equal(arrow, pandas, check_dtype=False)
    assert '"y,z"' in text and "True" in text and "1099511627776" in text
    lone = pd.DataFrame({"a": [1.0, None, 3.5]})  # a lone column's missing value is not a blank line
    arrow, pandas, _ = _both(lone, tmp_path)
    assert len(arrow) == 3
    pd.testing.assert_frame_equal(arrow, pandas, check_dtype=False)
    empty = pd.DataFrame(columns=["cell", "step"])
    arrow, pandas, text = _both(empty, tmp_path)
    assert text == "cell,step\n" and list(arrow.columns) == ["cell", "step"] and len(arrow) == 0
