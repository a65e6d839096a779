"""steps.csv's columns from a run's ``step`` samples, built column by column (harness/tables.py
``build`` makes its step table from them)."""

from __future__ import annotations

import functools
import itertools
import operator
import re

import numpy as np

from harness.placement import COUNTER_COLUMNS  # probe counter name → steps.csv column (web/probes/catalog.js)

#: Columns from the emulated WebGPU's ledger (web/emulation/memory-model.js); empty when real.
EMULATION_COLUMNS = ["modeled_native_bytes", "native_bind_groups_live", "native_bind_groups_released",
                     "modeled_bytes_per_compute_bind_group", "modeled_buffer_bytes", "buffer_contents_js_bytes",
                     # failure modes (web/emulation/README.md): cumulative, modeled
                     "out_of_memory_errors", "command_buffers_rejected", "dispatches_dropped"]
CELL_KEYS = ["cell", "browser", "workload", "variant", "profile", "repetition"]


@functools.lru_cache(maxsize=4096)
def _snake(name: str) -> str:
    """``sizeBytes`` → ``size_bytes`` (an extra key, once per distinct key: a run repeats them per step)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@functools.lru_cache(maxsize=4096)
def _extra_column(name: str) -> str:
    """A step's ``extra`` key → its steps.csv column: ``sizeBytes`` → ``extra_size_bytes``."""
    return f"extra_{_snake(name)}"


#: A key a step sample lacks: what ``pd.DataFrame`` of row dicts puts in such a cell, so a column
#: built by :func:`step_columns` has the dtype the row dicts gave it.
_MISSING = float("nan")


def _columns(dicts: list[dict]) -> dict[str, list | np.ndarray]:
    """Key → its values down ``dicts`` (a list ``len(dicts)`` long, NaN where a dict lacks the key;
    an int64 array when every dict has every key with an integer: :func:`_int_matrix`) for every
    key some dict has, in sorted order."""
    keys = sorted(set().union(*dicts))
    every = bool(dicts) and set(map(len, dicts)) == {len(keys)}  # every dict has every key
    whole = _int_matrix(dicts, keys) if every else None
    if whole is not None:
        return whole
    if every:
        return {k: [d[k] for d in dicts] for k in keys}
    return {k: [d.get(k, _MISSING) for d in dicts] for k in keys}


def _int_matrix(dicts: list[dict], keys: list[str]) -> dict[str, np.ndarray] | None:
    """When every value of ``dicts`` (each with every one of ``keys``) is a Python int (a run's
    counters and live objects): key → its int64 column, read in one pass (``itemgetter`` over
    the rows into one array, a third faster than a list per key); else None."""
    if not keys:
        return None
    get = operator.itemgetter(*keys)
    flat = list(itertools.chain.from_iterable(map(get, dicts))) if len(keys) > 1 else list(map(get, dicts))
    if set(map(type, flat)) != {int}:
        return None
    matrix = np.array(flat, dtype=np.int64).reshape(len(dicts), len(keys))
    return {k: matrix[:, j] for j, k in enumerate(keys)}


def step_columns(samples: list[dict], keys: list[dict]) -> dict[str, list | np.ndarray]:
    """steps.csv's columns (lists, or int64 arrays: :func:`_columns`) from ``step`` samples and each one's :data:`CELL_KEYS`
    values (both in file order, ``len(samples) == len(keys)``): the sample's fields, its counters
    renamed (:data:`COUNTER_COLUMNS`; a counter this harness does not know is left out), its
    live objects, its emulation values (:data:`EMULATION_COLUMNS`) and its ``extra`` keys
    (``extra_<snake_case>``). A column is made only when some sample has the key, and a sample
    without it has NaN there, as row dicts would give (counters and live objects are null when
    the probes were off, --no-probes: left empty, not 0). The four groups' names are disjoint
    (tests/analysis/test_step_columns.py). Built column by column: one dict per row took twice
    as long for 80,000 steps. ``end_s`` is :func:`harness.placement.place_steps`'."""
    cols: dict[str, list] = {k: [kk[k] for kk in keys] for k in CELL_KEYS}
    cols["step"] = [s["step"] for s in samples]
    for k in ("token", "logits_hash", "cpu_ms", "wall_ms", "received_s"):
        cols[k] = [s.get(k) for s in samples]
    def group(field: str) -> dict[str, list | np.ndarray]:
        return _columns([s.get(field) or {} for s in samples])

    cols.update({COUNTER_COLUMNS[n]: c for n, c in group("counters").items() if n in COUNTER_COLUMNS})
    cols.update(group("live"))
    cols.update({n: c for n, c in group("emulation").items() if n in EMULATION_COLUMNS})
    extras = [s.get("extra") or {} for s in samples]
    by_column: dict[str, list[str]] = {}
    for name, column in _columns(extras).items():
        by_column.setdefault(_extra_column(name), []).append(name)
        cols[_extra_column(name)] = column
    for column, names in by_column.items():
        if len(names) > 1:  # two keys of one column (``sizeBytes``, ``size_bytes``): the later in each sample's order
            cols[column] = [next((v for k, v in reversed(d.items()) if _extra_column(k) == column), _MISSING)
                            for d in extras]
    return cols


def as_arrays(columns: dict[str, list | np.ndarray]) -> dict[str, np.ndarray | list]:
    """``columns`` with each list of Python ints made an int64 array, and each list of ints and
    floats (NaN for a missing key among them) a float64 array: what ``pd.DataFrame`` would infer
    for them, in a third of its time; any other list (strings, None, booleans: a bool is an int
    to numpy, not to pandas) is left for pandas to infer."""
    out: dict[str, np.ndarray | list] = {}
    for name, values in columns.items():
        if isinstance(values, np.ndarray):  # made an array already (:func:`_int_matrix`)
            out[name] = values
            continue
        types = set(map(type, values))
        if types and types <= {int}:
            out[name] = np.array(values, dtype=np.int64)
        elif types and types <= {int, float}:
            out[name] = np.array(values, dtype=np.float64)
        else:
            out[name] = values
    return out
