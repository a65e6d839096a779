"""Which configurations two runs could have in common, from their manifests alone (no tables,
no statistics, no pandas): ``compare`` says "no cells in common" at once, before either run is
analysed (harness/verdicts/compare.py makes the full match of ok cells after the analysis)."""

from __future__ import annotations

from pathlib import Path


class NoCommonCells(ValueError):
    """The two runs share no configuration; the message lists what each has."""


def run_names(a: Path, b: Path) -> tuple[str, str]:
    """The two runs' labels in a comparison: their folder names (``A:``/``B:`` first when equal)."""
    names = (Path(a).resolve().name, Path(b).resolve().name)
    return (f"A:{names[0]}", f"B:{names[1]}") if names[0] == names[1] else names


def _label(cell: dict) -> str:
    """A manifest cell's configuration as harness/stats/cells.py ``GroupKey.label`` writes it
    (``chromium/decode-loop/fresh@tiny``, ``[key=value]`` for a sweep point, ``machine:`` first)."""
    base = f"{cell.get('browser')}/{cell.get('workload')}/{cell.get('variant')}@{cell.get('profile') or 'default'}"
    sweep = cell.get("sweep") or {}
    if sweep:
        base += "[" + ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in sweep.items()) + "]"
    return f"{cell['machine']}:{base}" if cell.get("machine") else base


def _loose(cell: dict) -> tuple:
    """What a match needs at the least: browser × workload × variant × profile (the full match
    also pairs configurations that differ only in their parameters, and tells machines apart)."""
    return (str(cell.get("browser")), str(cell.get("workload")), str(cell.get("variant")),
            str(cell.get("profile") or "default"))


def check_common(a_manifest: dict, b_manifest: dict, a_name: str = "A", b_name: str = "B") -> None:
    """Raise :class:`NoCommonCells` when no cell of run A (any status) shares browser, workload,
    variant and profile with a cell of run B: then no configuration can match, whatever the
    analysis finds. Passing says only that a match is possible (ok cells are matched after the
    analysis)."""
    a_cells, b_cells = a_manifest.get("cells") or [], b_manifest.get("cells") or []
    if {_loose(c) for c in a_cells} & {_loose(c) for c in b_cells}:
        return

    def has(cells: list[dict]) -> str:
        return ", ".join(dict.fromkeys(_label(c) for c in cells)) or "no cells"

    raise NoCommonCells(f"runs have no cells in common (browser × workload × variant × profile × parameters): "
                        f"{a_name} has {has(a_cells)}; {b_name} has {has(b_cells)}")
