"""``webgpu-harness compare RUN_A RUN_B``: the difference B − A of every matched configuration.

Configurations (groups of :mod:`harness.stats`: browser × workload × variant × profile ×
parameters, the repetitions pooled) are matched by that key — plus the machine label when a
merged run holds the same configuration from several machines. For each match and each metric
both runs have: A's and B's estimate with 95% CIs and the difference with its CI
(:func:`harness.stats.difference`: two-sample bootstrap for per-token metrics, Welch's t for
per-repetition ones). A match whose environment differs (browser version, adapter, WebGPU
real/emulated, OS, CPU) is flagged: its differences may come from the environment.

Writes ``compare.json``, ``compare.html`` (one offline file), ``differences.csv``,
``stats.json`` and ``summary.md`` (plus ``junit.xml`` with budgets) into the output folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from harness import stats as S
from harness.ci_outputs import fmt_diff, fmt_estimate, fmt_value

#: Environment facts whose difference flags a match.
ENV_KEYS = ("browser_version", "adapter", "webgpu", "os", "cpu")


class NoCommonCells(ValueError):
    """The two runs share no configuration; the message lists what each has."""


@dataclass
class Match:
    """One configuration present in both runs."""

    label: str
    a: S.GroupStats
    b: S.GroupStats
    env_differs: list[str]
    differences: list[S.Difference]

    def to_dict(self) -> dict:
        """JSON-ready dict of the match (``compare.json`` → ``matches``)."""
        return {"group": self.label, "env_a": self.a.env, "env_b": self.b.env, "env_differs": self.env_differs,
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
                "significant": sum(1 for d in self.differences if d.significant)}


def _match_key(k: S.GroupKey, with_machine: bool) -> tuple:
    return (k.browser, k.workload, k.variant, k.profile, k.params) + ((k.machine,) if with_machine else ())


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


def compare(a_tables, b_tables, a_name: str = "A", b_name: str = "B", warmup: int = S.DEFAULT_WARMUP,
            a_dir: str = "", b_dir: str = "") -> Comparison:
    """Compare two runs' :class:`harness.tables.Tables` (B − A). Raises :class:`NoCommonCells`
    when no configuration with ok cells is in both."""
    sa = S.compute(a_tables, warmup, differences=False)
    sb = S.compute(b_tables, warmup, differences=False)
    machine = _needs_machine(sa) or _needs_machine(sb)
    ka = {_match_key(k, machine): k for k, g in sa.groups.items() if g.cells}
    kb = {_match_key(k, machine): k for k, g in sb.groups.items() if g.cells}
    common = [k for k in ka if k in kb]
    if not common:
        raise NoCommonCells(
            f"runs have no cells in common (browser × workload × variant × profile × parameters): "
            f"{a_name} has {', '.join(sa.groups[k].key.label for k in ka.values()) or 'no ok cells'}; "
            f"{b_name} has {', '.join(sb.groups[k].key.label for k in kb.values()) or 'no ok cells'}")
    matches = []
    for mk in common:
        ga, gb = sa.groups[ka[mk]], sb.groups[kb[mk]]
        ca, cb = sa.ok_cells(ka[mk]), sb.ok_cells(kb[mk])
        names = [m for m in ga.metrics if m in gb.metrics]
        diffs = [d for d in (S.difference(ca, cb, m, warmup, a_label=f"{a_name}:{ga.key.label}",
                                          b_label=f"{b_name}:{gb.key.label}") for m in names) if d is not None]
        matches.append(Match(gb.key.label, ga, gb, env_differences(ga, gb), diffs))
    return Comparison(str(a_dir), str(b_dir), a_name, b_name,
                      sa, sb, matches,
                      [sa.groups[ka[k]].key.label for k in ka if k not in kb],
                      [sb.groups[kb[k]].key.label for k in kb if k not in ka],
                      a_tables.manifest, b_tables.manifest)


_HTML = jinja2.Environment(autoescape=True).from_string("""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>webgpu-harness compare — {{ c.b_name }} vs {{ c.a_name }}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em 2em; color: #222; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: .25em .5em; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
.sig { font-weight: bold; color: #b3261e; } .better { font-weight: bold; color: #176e2c; }
.flag { color: #8a6d00; } .ok { color: #176e2c; } .failed { color: #b3261e; font-weight: bold; }
.note { color: #555; font-size: 90%; max-width: 70em; }
</style></head><body>
<h1>webgpu-harness compare</h1>
<p class="note">B − A for every configuration in both runs, 95% CIs (per-token metrics: medians after {{ c.a_stats.warmup }} warm-up
token(s), two-sample bootstrap; per-repetition metrics: means, Welch's t; growth: Theil–Sen). <b>Bold</b>: the CI of the
difference excludes 0. <span class="flag">⚑</span>: the environment differs, so a difference may come from it.</p>
<table>
<tr><th></th><th class="l">run</th><th class="l">created</th><th class="l">commit</th><th class="l">OS</th><th class="l">CPU</th></tr>
{% for tag, name, d, m in [("A", c.a_name, c.a_dir, c.a_manifest), ("B", c.b_name, c.b_dir, c.b_manifest)] %}
<tr><th>{{ tag }}</th><td class="l">{{ name }}<br><span class="note">{{ d }}</span></td><td class="l">{{ m.created }}</td>
<td class="l"><code>{{ m.git_commit }}</code></td><td class="l">{{ m.os }}</td><td class="l">{{ m.cpu }}</td></tr>{% endfor %}
</table>
<p>{{ nsig }} significant difference{{ "s" if nsig != 1 }} in {{ c.matches|length }} matched configuration{{ "s" if c.matches|length != 1 }}.
{% if c.only_a %}Only in A: {{ c.only_a|join(", ") }}. {% endif %}{% if c.only_b %}Only in B: {{ c.only_b|join(", ") }}.{% endif %}</p>
{% if budgets %}<h2>Budgets</h2><table><tr><th class="l">result</th><th class="l">budget</th><th class="l">measured (95% CI) and limit</th></tr>
{% for b in budgets %}<tr><td class="l {{ {'passed': 'ok', 'failed': 'failed', 'skipped': 'flag'}[b.status] }}">{{ b.status }}</td><td class="l"><code>{{ b.budget.text }}</code></td>
<td class="l">{% for ch in b.checks %}<div class="{{ 'ok' if ch.passed else 'failed' }}">{{ ch.message }}</div>{% else %}{{ b.message }}{% endfor %}</td></tr>{% endfor %}</table>{% endif %}
{% for m in c.matches %}
<h2>{{ m.label }}{% if m.env_differs %} <span class="flag">⚑ environment differs</span>{% endif %}</h2>
{% if m.env_differs %}<p class="flag">{{ m.env_differs|join("; ") }}</p>{% endif %}
<p class="note">A: {{ m.a.cells|length }} repetition(s) · {% for k, v in m.a.env.items() %}{{ k }} {{ v|join(" / ") }}{{ "; " if not loop.last }}{% endfor %}<br>
B: {{ m.b.cells|length }} repetition(s) · {% for k, v in m.b.env.items() %}{{ k }} {{ v|join(" / ") }}{{ "; " if not loop.last }}{% endfor %}</p>
<table><tr><th class="l">metric</th><th>A [95% CI]</th><th>B [95% CI]</th><th>B − A [95% CI] (relative)</th><th class="l">CI method</th></tr>
{% for d in m.differences %}<tr><td class="l">{{ d.metric }} <span class="note">({{ d.stat }}, {{ d.unit }})</span></td>
<td>{{ est(m.a.metrics[d.metric]) }}</td><td>{{ est(m.b.metrics[d.metric]) }}</td>
<td class="{{ 'sig' if d.significant }}">{{ dif(d) }}</td><td class="l">{{ d.ci_method }}</td></tr>{% endfor %}
</table>
{% endfor %}
<script type="application/json" id="compare-data">{{ data|safe }}</script>
</body></html>
""")


def render_html(c: Comparison, path: Path, budgets: list | None = None) -> Path:
    """Write the comparison as one offline HTML file (its data also embedded as JSON in
    ``<script id="compare-data">``)."""
    data = json.dumps({**c.to_dict(), "budgets": [b.to_dict() for b in budgets or []]}, default=str).replace("</", "<\\/")
    html = _HTML.render(c=c, budgets=budgets or [], nsig=sum(1 for d in c.differences if d.significant),
                        est=fmt_estimate, dif=fmt_diff, val=fmt_value, data=data)
    Path(path).write_text(html, encoding="utf-8")
    return Path(path)
