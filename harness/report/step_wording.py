"""A run's findings in the unit of its steps. An app's step is what ``--step-on`` ended
(harness/own_terms.py ``STEP_UNITS``: ``app step (--step-on)``), not a token: its findings say
"createBindGroup calls per step", "KiB/step", "near step N", as the console's "bind groups/step"
does; so does every workload whose step is not a token (ort-run, upload, lifecycle,
dispatch-overhead), and :func:`per_step` words their table cells (summary.md, report.html). The finding functions (harness/report/findings.py, memory_findings.py) speak of tokens;
this rewrites the findings of such workloads after them, and names the command that made a run
folder (summary.md's heading)."""

from __future__ import annotations

import re
from dataclasses import replace

from harness.own_terms import STEP_UNITS
from harness.report.finding import Finding, Inputs

#: Workloads whose steps are not tokens (harness/own_terms.py ``STEP_UNITS``: ort-run's
#: session.run, upload's uploads, lifecycle's page loads, an app's steps…) → the word their
#: findings, tables and chart labels use.
STEP_WORDS = {w: "step" for w in STEP_UNITS}
#: Commands that write a run folder (manifest ``argv[1]``).
RUN_COMMANDS = ("run", "app", "serve", "merge", "native")
_TOKEN = re.compile(r"\btoken(s?)\b")


def run_command(manifest: dict) -> str:
    """The command that made a run folder: ``app`` for an app run (``parameters.apps``), else the
    manifest's ``argv[1]`` when it is one of :data:`RUN_COMMANDS`, else ``run``."""
    if "apps" in (manifest.get("parameters") or {}):
        return "app"
    argv = manifest.get("argv") or []
    return argv[1] if len(argv) > 1 and argv[1] in RUN_COMMANDS else "run"


def step_word(workloads) -> str:
    """``step`` when every one of ``workloads`` has steps that are not tokens (an app run), else ``token``."""
    words = {STEP_WORDS.get(w, "token") for w in workloads}
    return words.pop() if len(words) == 1 else "token"


def in_steps(findings: list[Finding], inp: Inputs) -> list[Finding]:
    """``findings`` with "token(s)" (and units ``…/token``) written as each one's step word, for
    the findings scoped to a group of a :data:`STEP_WORDS` workload (matched by :meth:`Inputs.scope`);
    the others unchanged."""
    words = {inp.scope(g): STEP_WORDS[g.key.workload] for g in inp.run.groups.values()
             if g.key.workload in STEP_WORDS}
    out = []
    for f in findings:
        word = words.get(f.scope)
        if word is None:
            out.append(f)
            continue
        parts = [_TOKEN.sub(lambda m: word + m.group(1), p) if isinstance(p, str)
                 else replace(p, unit=p.unit.replace("/token", f"/{word}")) for p in f.parts]
        out.append(replace(f, parts=parts))
    return out


_RATE = re.compile(r"(?<=[ /])token(s?)\b")


def per_step(text: str, workload: str | None) -> str:
    """``text`` (a formatted estimate, a unit, a label) in the step word of ``workload``: ``rose 7
    bind groups/token`` → ``rose 7 bind groups/step`` for a :data:`STEP_WORDS` workload (the
    metric names ``*_per_token`` are kept: they are column names); unchanged for a decoder's."""
    word = STEP_WORDS.get(workload or "")
    return _RATE.sub(lambda m: word + m.group(1), text) if word and isinstance(text, str) else text
