"""``webgpu-harness compare RUN_A RUN_B``: the difference B − A of every matched configuration.

Configurations (groups of :mod:`harness.stats`: browser × workload × variant × profile ×
parameters, the repetitions pooled) are matched by that key — plus the machine label when a
merged run holds the same configuration from several machines. Configurations left unmatched
that differ only in their parameters (e.g. run A with ``--param max_pending_dispatches=1``, run
B with ``=16``) are matched with each other when each has exactly one such partner, and flagged
with the parameters that differ: comparing them is the point of a parameter change. For each match and each metric
both runs have: A's and B's estimate with 95% CIs and the difference with its CI
(:func:`harness.stats.difference`: two-sample bootstrap for per-token metrics, Welch's t for
per-repetition ones). A match whose environment differs (browser version, adapter, WebGPU
real/emulated, OS, CPU) is flagged: its differences may come from the environment.

The comparison's files (``compare.json``, ``compare.html``, ``differences.csv``, ``stats.json``,
``summary.md``, ``junit.xml``) are written by harness/pipeline.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness import stats as S
from harness.verdicts.matching import NoCommonCells  # noqa: F401 (raised here too; the module's API)

#: Environment facts whose difference flags a match.
ENV_KEYS = ("browser_version", "adapter", "webgpu", "os", "cpu")


@dataclass
class Match:
    """One configuration present in both runs."""

    label: str
    a: S.GroupStats
    b: S.GroupStats
    env_differs: list[str]
    differences: list[S.Difference]
    #: ``["max_pending_dispatches 1 → 16"]`` when the two configurations differ in parameters
    params_differ: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-ready dict of the match (``compare.json`` → ``matches``)."""
        return {"group": self.label, "env_a": self.a.env, "env_b": self.b.env, "env_differs": self.env_differs,
                "params_differ": self.params_differ,
                "a": {m: e.to_dict() for m, e in self.a.metrics.items()},
                "b": {m: e.to_dict() for m, e in self.b.metrics.items()},
                "differences": [d.to_dict() for d in self.differences]}


@dataclass
class Comparison:
    """Result of :func:`compare`. ``a_name``/``b_name``: the runs' folder names (labels of the
    differences); ``only_a``/``only_b``: configurations found in one run only."""

    a_dir: str
    b_dir: str
    a_name: str
    b_name: str
    a_stats: S.RunStats
    b_stats: S.RunStats
    matches: list[Match]
    only_a: list[str]
    only_b: list[str]
    a_manifest: dict = field(repr=False, default_factory=dict)
    b_manifest: dict = field(repr=False, default_factory=dict)
    #: configurations with ok cells in A whose every cell in B did not end ok: label → what B's
    #: cells ended as (``failed (interrupted (Ctrl-C or SIGTERM) before this cell finished; …)``);
    #: ``failed_a`` the other way round. Not in ``only_a``/``only_b``: the configuration was run.
    failed_b: dict[str, str] = field(default_factory=dict)
    failed_a: dict[str, str] = field(default_factory=dict)

    @property
    def differences(self) -> list[S.Difference]:
        """Every match's differences, in order."""
        return [d for m in self.matches for d in m.differences]

    def to_dict(self) -> dict:
        """``compare.json``'s body (without budgets)."""
        def run(name, d, man):
            return {"name": name, "dir": d, **{k: man.get(k) for k in ("created", "git_commit", "harness_version",
                                                                     "os", "cpu", "browsers")}}
        return {"a": run(self.a_name, self.a_dir, self.a_manifest), "b": run(self.b_name, self.b_dir, self.b_manifest),
                "warmup_steps": self.a_stats.warmup, "confidence": self.a_stats.confidence,
                "matches": [m.to_dict() for m in self.matches], "only_in_a": self.only_a, "only_in_b": self.only_b,
                "failed_in_a": self.failed_a, "failed_in_b": self.failed_b,
                "significant": sum(1 for d in self.differences if d.significant)}


def _match_key(k: S.GroupKey, with_machine: bool) -> tuple:
    return (k.browser, k.workload, k.variant, k.profile, k.params, k.part) + ((k.machine,) if with_machine else ())


def params_differences(a: S.GroupKey, b: S.GroupKey) -> list[str]:
    """``["max_pending_dispatches 1 → 16"]``: parameters whose values differ between two keys."""
    import json

    pa, pb = json.loads(a.params or "{}"), json.loads(b.params or "{}")
    return [f"{k} {pa.get(k, '—')} → {pb.get(k, '—')}" for k in sorted(set(pa) | set(pb)) if pa.get(k) != pb.get(k)]


def _loose_key(k: S.GroupKey, with_machine: bool) -> tuple:
    """A configuration's key less its parameters."""
    return (k.browser, k.workload, k.variant, k.profile, k.part) + ((k.machine,) if with_machine else ())


def _loose_pairs(ka: dict, kb: dict, with_machine: bool) -> list[tuple[tuple, tuple]]:
    """Unmatched keys of A and B that differ only in parameters, one partner on each side."""
    def loose(k: S.GroupKey) -> tuple:
        return _loose_key(k, with_machine)

    left_a = [m for m in ka if m not in kb]
    left_b = [m for m in kb if m not in ka]
    pairs = []
    for ma in left_a:
        mates = [mb for mb in left_b if loose(kb[mb]) == loose(ka[ma])]
        same = [m for m in left_a if loose(ka[m]) == loose(ka[ma])]
        if len(mates) == 1 and len(same) == 1:
            pairs.append((ma, mates[0]))
    return pairs


def _needs_machine(run: S.RunStats) -> bool:
    keys = [_match_key(k, False) for k, g in run.groups.items() if g.cells]
    return len(keys) != len(set(keys))


def env_differences(a: S.GroupStats, b: S.GroupStats) -> list[str]:
    """``["browser_version 156.0.1 → 157.0.2", ...]`` for every :data:`ENV_KEYS` entry whose
    values differ between the two groups."""
    out = []
    for k in ENV_KEYS:
        va, vb = a.env.get(k, []), b.env.get(k, [])
        if sorted(va) != sorted(vb):
            out.append(f"{k} {' / '.join(va) or '?'} → {' / '.join(vb) or '?'}")
    return out


def ended_as(run: S.RunStats, tables, keys: list[S.GroupKey], machine: bool) -> dict[S.GroupKey, str]:
    """Each of ``keys`` (configurations of the other run) → how the cells of this run's same
    configuration ended when none ended ok: ``failed (interrupted …)`` (summary.csv ``status``
    and ``reason``, distinct ones joined). The same configuration: the same match key, else the one
    that differs only in parameters when there is exactly one."""
    s = tables.summary
    ended = {}
    for k, g in run.groups.items():
        if g.cells or not g.failed:
            continue
        rows = s[s["cell"].isin(g.failed)]
        said = list(dict.fromkeys(f"{r['status']} ({r['reason']})" if isinstance(r.get("reason"), str) and r["reason"]
                                  else str(r["status"]) for _, r in rows.iterrows()))
        ended[k] = "; ".join(said) or "failed"
    out = {}
    for k in keys:
        same = [e for e in ended if _match_key(e, machine) == _match_key(k, machine)]
        same = same or [e for e in ended if _loose_key(e, machine) == _loose_key(k, machine)]
        if len(same) == 1:
            out[k] = ended[same[0]]
    return out


def _none_ok(run) -> str:
    """``no ok cells (cell: status: reason; …)``: why a run has nothing to compare, its first cells' outcomes."""
    said = [f"{c.cell}: {c.status}" + (f": {c.reason[:160]}" if c.reason else "") for c in run.cells[:3]]
    more = f"; {len(run.cells) - 3} more" if len(run.cells) > 3 else ""
    return "no ok cells" + (f" ({'; '.join(said)}{more})" if said else "")


def compare(a_tables, b_tables, a_name: str = "A", b_name: str = "B", warmup: int = S.DEFAULT_WARMUP,
            a_dir: str = "", b_dir: str = "") -> Comparison:
    """Compare two runs' :class:`harness.tables.Tables` (B − A). Raises :class:`NoCommonCells`
    when no configuration with ok cells is in both."""
    sa = S.compute(a_tables, warmup, differences=False)
    sb = S.compute(b_tables, warmup, differences=False)
    machine = _needs_machine(sa) or _needs_machine(sb)
    ka = {_match_key(k, machine): k for k, g in sa.groups.items() if g.cells}
    kb = {_match_key(k, machine): k for k, g in sb.groups.items() if g.cells}
    common = [(k, k) for k in ka if k in kb] + _loose_pairs(ka, kb, machine)
    if not common:
        raise NoCommonCells(
            f"runs have no cells in common (browser × workload × variant × profile × parameters): "
            f"{a_name} has {', '.join(sa.groups[k].key.label for k in ka.values()) or _none_ok(sa)}; "
            f"{b_name} has {', '.join(sb.groups[k].key.label for k in kb.values()) or _none_ok(sb)}")
    matches = []
    for mka, mkb in common:
        ga, gb = sa.groups[ka[mka]], sb.groups[kb[mkb]]
        ca, cb = sa.ok_cells(ka[mka]), sb.ok_cells(kb[mkb])
        names = [m for m in ga.metrics if m in gb.metrics]
        diffs = [d for d in (S.difference(ca, cb, m, warmup, a_label=f"{a_name}:{ga.key.label}",
                                          b_label=f"{b_name}:{gb.key.label}", ea=ga.metrics[m], eb=gb.metrics[m])
                             for m in names) if d is not None]
        pdiff = params_differences(ga.key, gb.key)
        label = gb.key.label + (f" [parameters {'; '.join(pdiff)}]" if pdiff else "")
        matches.append(Match(label, ga, gb, env_differences(ga, gb), diffs, pdiff))
    S.holm([d for m in matches for d in m.differences])  # the comparison's measured verdicts, corrected together
    used_a, used_b = {m for m, _ in common}, {m for _, m in common}
    ended_b = ended_as(sb, b_tables, [ka[k] for k in ka if k not in used_a], machine)
    ended_a = ended_as(sa, a_tables, [kb[k] for k in kb if k not in used_b], machine)
    return Comparison(str(a_dir), str(b_dir), a_name, b_name,
                      sa, sb, matches,
                      [sa.groups[ka[k]].key.label for k in ka if k not in used_a and ka[k] not in ended_b],
                      [sb.groups[kb[k]].key.label for k in kb if k not in used_b and kb[k] not in ended_a],
                      a_tables.manifest, b_tables.manifest,
                      {sa.groups[k].key.label: how for k, how in ended_b.items()},
                      {sb.groups[k].key.label: how for k, how in ended_a.items()})
