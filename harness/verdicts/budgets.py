"""Budgets: assertions on a run's statistics that CI can fail on.

One budget is one line (README.md, "Budgets", has the full grammar)::

    [browser/]workload[/variant][@profile]: [stat(]metric[)] OP limit [after token N]

    ort-decode/bind-group-cache: bind_groups_per_token <= 1 after token 32
    webkit/*: live_bind_groups_max <= 5000
    chromium/decode-loop/reuse: ms_per_token <= 0.95 * fresh
    chromium/decode-loop/reuse@tiny: p90(ms_per_token) < 1.10 * baseline     (compare only)
    */decode-loop/fresh: rss_growth_bytes_per_token_all <= 64KiB

Selector parts are ``fnmatch`` patterns. Three parts are browser/workload/variant; two parts are
browser/workload when the first part matches a browser name (:data:`KNOWN_BROWSERS`), otherwise
workload/variant; one part is a browser when it matches a browser name, otherwise a workload.
``stat`` is ``median``, ``mean``, ``min``, ``max`` or ``pNN``; without it the metric's default
(:func:`harness.stats.metrics.default_stat`). ``limit`` is a number (with ``KiB``/``MiB``/``GiB``/``kB``/
``MB``/``GB`` for byte metrics, ``ms`` for ms metrics) or ``[factor *] variant``: the same
statistic of another variant of the same browser × workload × profile, or of the same cell in
the baseline run (``baseline``, for ``webgpu-harness compare``). ``after token N`` drops tokens
0..N (warm-up) before the statistic is taken.

A budget passes when every group it matches satisfies it (the point estimate against the
limit; the 95% CI is reported beside it). It fails when a matched group fails it, has no data
for the metric, or has a failed cell, and when it matches nothing (a typo in a selector must not
leave CI green) unless it is marked ``optional`` (a trailing ``optional`` on the line, or
``optional = true`` in a ``[[budget]]`` table): an optional budget that matches nothing is
skipped, e.g. ``webkit/*`` on a machine without WebKit. ``baseline`` budgets belong to
``compare``: ``run`` refuses them before anything runs (:func:`check_references`).

Files are TOML (``tomllib``)::

    budgets = ["webkit/*: live_bind_groups_max <= 5000"]

    [[budget]]
    name = "bind group cache works"        # optional; the JUnit testcase name
    check = "ort-decode/bind-group-cache: bind_groups_per_token <= 1 after token 32"
    optional = true                        # skipped, not failed, when it matches nothing

A little over 400 lines: the grammar's checks (each with its own one-line error) and the
evaluation belong together; splitting them would put one budget's rules in two files.
"""

from __future__ import annotations

import math
import operator
import re
import tomllib
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from harness import stats as S
from harness.report import format as F

#: Largest ``after token N``: the most tokens a run may have (harness/cli/run.py --tokens).
MAX_AFTER_TOKEN = 100_000

#: Browser names a selector's first part is recognised as (harness/drive/registry.py's plus
#: families other drivers name their cells by), so ``webkit/*`` parses the same on every machine
#: and the analysing half never needs the browser registry (tests/test_layers.py checks that
#: every registered browser is here).
KNOWN_BROWSERS = {"chromium", "chrome", "edge", "firefox", "webkit", "safari", "dawn"}
OPS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt, "==": operator.eq}
UNITS = {"": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "ms": 1}
BASELINE = "baseline"

_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_NAME = r"[A-Za-z0-9_*?\[\]][A-Za-z0-9_.*?\[\]-]*"
_CHECK = re.compile(
    r"^\s*(?:(?P<stat>[a-z][a-z0-9]*)\s*\(\s*(?P<m1>[A-Za-z0-9_-]+)\s*\)|(?P<m2>[A-Za-z0-9_-]+))"
    r"\s*(?P<op><=|>=|==|<|>)\s*(?P<rhs>.+?)(?:\s+after\s+token\s+(?P<after>\S+))?\s*$")


class BudgetError(ValueError):
    """A malformed budget. ``str()`` is ``<source> line <n>: <what is wrong>``."""

    def __init__(self, source: str, line: int | None, message: str):
        self.source, self.line, self.message = source, line, message
        where = f"{source} line {line}" if line else source
        super().__init__(f"{where}: {message}")


@dataclass
class Budget:
    """One parsed assertion. ``browser``/``workload``/``variant``/``profile`` are fnmatch
    patterns; ``limit`` (a number) or ``ref`` (a variant name or ``baseline``) × ``factor``;
    ``after``: tokens 0..after are dropped (``None``: the run's warm-up)."""

    name: str
    text: str
    browser: str
    workload: str
    variant: str
    profile: str
    stat: str
    metric: str
    op: str
    limit: float | None = None
    ref: str | None = None
    factor: float = 1.0
    after: int | None = None
    source: str = "--budget"
    #: matching nothing skips it instead of failing it
    optional: bool = False

    def matches(self, key: S.GroupKey) -> bool:
        """Whether the selector's patterns match ``key`` (``fnmatch``, case-sensitive)."""
        return all(fnmatchcase(v, p) for v, p in ((key.browser, self.browser), (key.workload, self.workload),
                                                   (key.variant, self.variant), (key.profile, self.profile)))

    @property
    def warmup(self) -> int | None:
        """Warm-up in tokens implied by ``after token N`` (N + 1), ``None`` without it."""
        return None if self.after is None else self.after + 1

    def describe_limit(self) -> str:
        """``<= 5000`` or ``<= 0.95 × fresh``."""
        if self.ref is None:
            return f"{self.op} {F.value(self.limit)}"
        return f"{self.op} {'' if self.factor == 1 else f'{self.factor:g} × '}{self.ref}"


def _is_browser(pattern: str) -> bool:
    return any(fnmatchcase(b, pattern) for b in KNOWN_BROWSERS)


def parse(text: str, source: str = "--budget", line: int | None = None, name: str | None = None) -> Budget:
    """Parse one budget line. Raises :class:`BudgetError` naming ``source``/``line`` and the problem."""
    def bad(msg: str):
        raise BudgetError(source, line, f"{msg} in {text.strip()!r}")

    optional = bool(re.search(r"\s+optional\s*$", text))
    body = re.sub(r"\s+optional\s*$", "", text) if optional else text

    if ":" not in body:
        bad("missing ':' between the selector and the check (SELECTOR: METRIC OP LIMIT)")
    sel, check = body.split(":", 1)
    sel = sel.strip()
    profile = "*"
    if "@" in sel:
        sel, profile = (x.strip() for x in sel.split("@", 1))
    parts = [p.strip() for p in sel.split("/")]
    if not sel or len(parts) > 3 or any(not re.fullmatch(_NAME, p) for p in parts) or not re.fullmatch(_NAME, profile):
        bad(f"selector {sel!r} is not [browser/]workload[/variant][@profile] (names or * patterns)")
    if len(parts) == 3:
        browser, workload, variant = parts
    elif len(parts) == 2:
        browser, workload, variant = (parts[0], parts[1], "*") if _is_browser(parts[0]) else ("*", parts[0], parts[1])
    else:
        browser, workload, variant = (parts[0], "*", "*") if _is_browser(parts[0]) else ("*", parts[0], "*")
    m = _CHECK.match(check)
    if not m:
        bad("check is not METRIC OP LIMIT (OP: <=, <, >=, >, ==)")
    metric = m.group("m1") or m.group("m2")
    if S.metric_kind(metric) is None:
        bad(f"unknown metric {metric!r} (valid: {', '.join(S.valid_metric_names())})")
    stat = m.group("stat") or S.default_stat(metric)
    kind = S.metric_kind(metric)
    valid_stats = ["slope"] if kind == "slope" else [*S.STATS, "pNN"]
    if (kind == "slope" and stat != "slope") or (kind != "slope" and stat not in S.STATS
                                                 and not re.fullmatch(r"p([1-9]|[1-9]\d)", stat)):
        bad(f"unknown statistic {stat!r} for {metric} (valid: {', '.join(valid_stats)})")
    after = None
    if m.group("after") is not None:
        if not m.group("after").isdigit():
            bad(f"'after token' needs a whole number, got {m.group('after')!r}")
        after = int(m.group("after"))
        if after > MAX_AFTER_TOKEN:
            bad(f"'after token' must be at most {MAX_AFTER_TOKEN} (the most tokens a run has), got {after}")
    rhs = m.group("rhs").strip()
    b = Budget(name or text.strip(), text.strip(), browser, workload, variant, profile, stat, metric,
               m.group("op"), after=after, source=f"{source}" + (f" line {line}" if line else ""), optional=optional)
    num = re.fullmatch(rf"({_NUM})\s*([A-Za-z]*)", rhs)
    if num:
        unit = num.group(2)
        if unit not in UNITS:
            bad(f"unknown unit {unit!r} (valid: {', '.join(u for u in UNITS if u)})")
        munit = S.metric_unit(metric)
        if unit == "ms" and munit != "ms" or unit not in ("", "ms") and "bytes" not in munit:
            bad(f"unit {unit!r} does not apply to {metric} ({munit})")
        b.limit = float(num.group(1)) * UNITS[unit]
        if not math.isfinite(b.limit):
            bad(f"limit {rhs!r} is not a finite number")
        return b
    if re.fullmatch(r"[+-]?(?:nan|inf|infinity)\s*[A-Za-z]*", rhs, re.I):  # float() reads them; never a variant
        bad(f"limit {rhs!r} is not a finite number")
    ref = re.fullmatch(rf"(?:({_NUM})\s*\*\s*)?([A-Za-z_][A-Za-z0-9_.-]*)(?:\s*\*\s*({_NUM}))?", rhs)
    if not ref or (ref.group(1) and ref.group(3)):
        bad(f"limit {rhs!r} is not a number (e.g. 5000, 64KiB) or [factor *] variant (e.g. 0.95 * fresh)")
    b.ref = ref.group(2)
    b.factor = float(ref.group(1) or ref.group(3) or 1)
    if not math.isfinite(b.factor):
        bad(f"factor in {rhs!r} is not a finite number")
    return b


def _line_of(raw_lines: list[str], needle: str, default: int | None = None) -> int | None:
    for i, ln in enumerate(raw_lines, 1):
        if needle and needle in ln:
            return i
    return default


def parse_file(path: Path) -> list[Budget]:
    """Budgets of a TOML file (format: module docstring). Raises :class:`BudgetError` naming the
    line: a TOML syntax error, an unknown key, a budget that is not a string, a bad budget line,
    or a file with no budgets."""
    path = Path(path)
    src = str(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BudgetError(src, None, f"cannot read the budget file: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BudgetError(src, None, "not UTF-8 text: a budget file is TOML") from None
    lines = raw.splitlines()
    try:
        doc = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column \d+\)", msg)
        line = int(m.group(1)) if m else (len(lines) if "end of document" in msg else None)
        raise BudgetError(src, line, f"invalid TOML: {re.sub(r' ?[(]at (line|end of document).*[)]', '', msg)}") from None
    out: list[Budget] = []
    for key, val in doc.items():
        kline = _line_of(lines, f"{key}")
        if key == "budgets":
            if not isinstance(val, list) or not all(isinstance(v, str) for v in val):
                raise BudgetError(src, kline, "'budgets' must be an array of strings")
            out += [parse(v, src, _line_of(lines, v, kline)) for v in val]
        elif key == "budget":
            if not isinstance(val, list) or not all(isinstance(v, dict) for v in val):
                raise BudgetError(src, kline, "'budget' must be an array of tables: [[budget]]")
            for t in val:
                unknown = set(t) - {"name", "check", "optional"}
                if unknown:
                    k = sorted(unknown)[0]
                    raise BudgetError(src, _line_of(lines, k, kline), f"unknown key {k!r} in [[budget]] (valid: name, check, optional)")
                if not isinstance(t.get("optional", False), bool):
                    raise BudgetError(src, _line_of(lines, "optional", kline), "optional must be true or false")
                if not isinstance(t.get("check"), str):
                    raise BudgetError(src, _line_of(lines, str(t.get("name", "")), kline),
                                      "[[budget]] needs check = \"SELECTOR: METRIC OP LIMIT\"")
                name = t.get("name")
                b = parse(t["check"], src, _line_of(lines, t["check"], kline), str(name) if name is not None else None)
                b.optional = b.optional or t.get("optional", False)
                out.append(b)
        else:
            raise BudgetError(src, kline, f"unknown key {key!r} (valid: budgets, [[budget]])")
    if not out:
        raise BudgetError(src, None, "no budgets found (write budgets = [\"...\"] or [[budget]] tables)")
    return out


def load(values: list[str]) -> list[Budget]:
    """``--budget`` values: a path ending in ``.toml`` is a file, anything else one budget line."""
    out: list[Budget] = []
    for v in values:
        if v.strip().endswith(".toml"):
            out += parse_file(Path(v.strip()))
        elif ":" not in v and Path(v.strip()).exists():  # a path, not a budget line
            raise BudgetError(v.strip(), None, f"is a {'folder' if Path(v.strip()).is_dir() else 'file'}, not a "
                                               "budget: a budget file is TOML and ends in .toml")
        else:
            out.append(parse(v))
    names = [b.name for b in out]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise BudgetError("--budget", None, f"two budgets are named {dup!r}; names must be unique")
    return out


# ----------------------------------------------------------------------------------------------
# evaluation


@dataclass
class CheckResult:
    """One budget on one group. ``value``/``ci_*``: the measured statistic; ``limit``: the bound
    it was compared with (``factor × ref_value`` for a reference); ``ratio``/``ratio_ci_*``:
    value ÷ ref_value with the CI of that ratio, for references."""

    group: str
    passed: bool
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    unit: str = ""
    limit: float | None = None
    ref_value: float | None = None
    ratio: float | None = None
    ratio_ci_low: float | None = None
    ratio_ci_high: float | None = None
    n: int = 0
    n_reps: int = 0
    message: str = ""


@dataclass
class BudgetResult:
    """A budget's verdict: ``passed``, ``failed`` or ``skipped`` (an optional budget that matched nothing)."""

    budget: Budget
    status: str
    checks: list[CheckResult] = field(default_factory=list)
    message: str = ""

    def to_dict(self) -> dict:
        """JSON-ready dict (``stats.json`` → ``budgets``)."""
        return {"name": self.budget.name, "budget": self.budget.text, "source": self.budget.source,
                "optional": self.budget.optional,
                "status": self.status, "message": self.message,
                "checks": [{k: S.clean(v) for k, v in asdict(c).items()} for c in self.checks]}


def _ci(lo, hi, unit: str = "") -> str:
    return F.interval(lo, hi, unit)


def _check(b: Budget, key: S.GroupKey, run: S.RunStats, baseline: S.RunStats | None) -> CheckResult:
    label = key.label
    failed = run.groups[key].failed
    if failed:
        reasons = {c.cell: c.reason for c in run.cells if c.cell in failed}
        return CheckResult(label, False, message=f"{label}: cell {failed[0]} failed ({reasons.get(failed[0]) or 'no reason'})")
    cells = run.ok_cells(key)
    warmup = b.warmup if b.warmup is not None else run.warmup
    est = run.estimate(key, b.metric, warmup, b.stat)  # computed once, shared with findings and differences
    what = f"{b.stat}({b.metric})" + (f" after token {b.after}" if b.after is not None else "")
    if est is not None and est.value is None and est.basis == "too-few":
        # a required budget the data cannot decide fails, saying what is missing
        return CheckResult(label, False, message=f"{label}: {b.metric} not decided: {est.ci_method}")
    if est is None or est.value is None:
        return CheckResult(label, False, message=f"{label}: no data for {b.metric}")
    res = CheckResult(label, False, est.value, est.ci_low, est.ci_high, est.unit, n=est.n, n_reps=est.n_reps)
    if b.ref is None:
        res.limit = b.limit
    else:
        if b.ref == BASELINE:
            if baseline is None:
                res.message = f"{label}: 'baseline' needs a baseline run (webgpu-harness compare RUN_A RUN_B)"
                return res
            src, ref_key = baseline, key
        else:
            src, ref_key = run, key.with_variant(b.ref)
        ref_cells = src.ok_cells(ref_key)
        ref = src.estimate(ref_key, b.metric, warmup, b.stat)
        if ref is None or ref.value is None:
            where = "the baseline run" if b.ref == BASELINE else "this run"
            res.message = f"{label}: no ok cell of {ref_key.label} in {where} to compare with"
            return res
        res.ref_value = ref.value
        res.limit = b.factor * ref.value
        d = S.difference(ref_cells, cells, b.metric, warmup, b.stat, run.confidence, ea=ref, eb=est)
        if d is not None and d.rel is not None:
            res.ratio = d.rel + 1
            if d.rel_low is not None:
                res.ratio_ci_low, res.ratio_ci_high = d.rel_low + 1, d.rel_high + 1
    res.passed = bool(OPS[b.op](res.value, res.limit))
    verdict = "ok" if res.passed else "FAILS"
    u = res.unit
    shown_unit = "" if "bytes" in u and abs(res.value) >= 1024 else f" {u}"
    text = f"{label}: {what} = {F.value(res.value, u)}{_ci(res.ci_low, res.ci_high, u)}{shown_unit}".rstrip()
    if b.ref is not None:
        ratio = f"; ratio to {b.ref} {res.ratio:.3f}{_ci(res.ratio_ci_low, res.ratio_ci_high)}" if res.ratio is not None else ""
        text += f" vs {b.ref} {F.value(res.ref_value, u)}{ratio}; limit {b.op} {F.value(res.limit, u)}"
    else:
        text += f"; limit {b.op} {F.value(res.limit, u)}"
    straddles = res.ci_low is not None and (res.ci_low <= res.limit <= res.ci_high) and res.ci_low != res.ci_high
    res.message = f"{text} → {verdict}" + (" (the 95% CI contains the limit)" if straddles else "")
    return res


def evaluate(budgets: list[Budget], run: S.RunStats, baseline: S.RunStats | None = None) -> list[BudgetResult]:
    """Verdict of every budget on ``run`` (``baseline``: run A of ``compare``, for ``baseline``
    references). Groups with only skipped cells are not matched."""
    out = []
    for b in budgets:
        keys = [k for k, g in run.groups.items() if b.matches(k) and (g.cells or g.failed)
                # a per-step metric of cells split by a list parameter's values is checked per value
                and not (k in run.split and S.metric_kind(b.metric) == "token")]
        if not keys:  # a typo must not pass; an optional budget is skipped
            out.append(BudgetResult(b, "skipped", [], "matched no measured cell (optional)") if b.optional else
                       BudgetResult(b, "failed", [], "matched no measured cell: check the selector (mark the "
                                                     "budget optional when that is expected)"))
            continue
        checks = [_check(b, k, run, baseline) for k in keys]
        bad = [c for c in checks if not c.passed]
        status = "failed" if bad else "passed"
        msg = "; ".join(c.message for c in (bad or checks))
        out.append(BudgetResult(b, status, checks, msg))
    return out


def failed(results: list[BudgetResult]) -> list[BudgetResult]:
    """The results whose status is ``failed``."""
    return [r for r in results if r.status == "failed"]


def check_references(budgets: list[Budget], workloads) -> None:
    """Before a run: a budget compared with another variant (``<= 0.95 * fresh``) must name a
    variant of a workload the budget selects and have a positive factor; a ``baseline`` budget
    belongs to ``compare`` and is refused. ``workloads``: the selected workloads (:class:`harness.workloads.Workload`).
    Raises :class:`BudgetError` naming the budget."""
    for b in budgets:
        if b.ref is None:
            continue
        if b.ref == BASELINE:
            raise BudgetError(b.source, None, f"{b.text!r} compares with 'baseline': baseline budgets belong to "
                                              "`webgpu-harness compare RUN_A RUN_B --budget ...` (a run has no baseline)")
        if not b.factor > 0:
            raise BudgetError(b.source, None, f"{b.text!r}: the factor must be > 0 (got {b.factor})")
        selected = [w for w in workloads if fnmatchcase(w.name, b.workload)]
        if selected and not any(b.ref in w.variants for w in selected):
            valid = sorted({v for w in selected for v in w.variants})
            raise BudgetError(b.source, None, f"{b.text!r}: {b.ref!r} is not a variant of "
                                              f"{', '.join(w.name for w in selected)} (valid: {', '.join(valid)}, "
                                              "or baseline in compare)")
