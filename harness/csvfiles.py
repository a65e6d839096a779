"""Long tables as CSV files, written by pyarrow's C++ CSV writer (steps.csv and memory.csv:
harness/tables.py ``write``). ``DataFrame.to_csv`` took 2.1 s of a 16 cells × 5,000 tokens
report here (80,000 rows × 92 columns); this takes 0.27 s (issue 19, item 2)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def _csv_column(s: pd.Series):
    """One column as an Arrow array of integers, floats or strings (missing values null): a
    column of booleans, of mixed types (an ``extra_*`` key that is a number in one step and a
    string in another) or of anything else becomes the strings pandas would write (``True``)."""
    import pyarrow as pa

    try:
        arr = pa.array(s, from_pandas=True)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        arr = None
    if arr is not None and (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)
                            or pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)
                            or pa.types.is_null(arr.type)):
        return arr
    return pa.array([None if v is None or v is pd.NA or (isinstance(v, float) and v != v) else str(v) for v in s],
                    type=pa.string())


def write_csv(df: pd.DataFrame, path: Path) -> None:
    """``df`` as CSV at ``path`` (no index), by pyarrow's C++ writer (~8× faster than
    ``DataFrame.to_csv``). Read back by ``pandas.read_csv`` it is the same table: missing
    values are empty fields, the header is pandas' (quoted only where a name needs it), values
    are quoted only when one of the file needs it (then every string is), a float prints
    without a trailing ``.0`` (``12`` for 12.0) and booleans as ``True``/``False``."""
    if len(df.columns) < 2 or not df.columns.is_unique:  # a lone column's missing value would be a blank
        df.to_csv(path, index=False)                     # line, which readers skip: pandas quotes it
        return
    import csv
    import io

    import pyarrow as pa
    import pyarrow.csv as pc

    table = pa.table({str(c): _csv_column(df[c]) for c in df.columns})
    head = io.StringIO()
    csv.writer(head, lineterminator="\n").writerow([str(c) for c in df.columns])
    body = io.BytesIO()
    if table.num_rows:
        try:
            pc.write_csv(table, body, pc.WriteOptions(include_header=False, quoting_style="none"))
        except pa.ArrowInvalid:  # a value holds a comma, quote or line break: quote the strings
            body = io.BytesIO()
            pc.write_csv(table, body, pc.WriteOptions(include_header=False, quoting_style="needed"))
    with open(path, "wb") as fh:
        fh.write(head.getvalue().encode("utf-8"))
        fh.write(body.getvalue())
