"""What ``webgpu-harness app`` measures in a user's own app, validated before anything launches.

A cell of an app run is app × browser × injection path × repetition. It reuses the run's plan
(:class:`harness.plan.RunPlan`: browsers, repetitions, memory sampling, emulation, budgets) and
maps onto the run folder's cell fields so that tables, statistics, budgets and the report need
nothing new: ``workload`` is ``app``, ``variant`` the app's name (from its URL, or ``NAME=URL``),
``profile`` the injection path (``cdp`` or ``proxy``). Budgets then read
``chromium/app/transformers@cdp: bind_groups_per_token <= 30``.

Every check raises :class:`harness.plan.PlanError` (one line naming the valid choices); an app
that cannot be reached is not bad input but a failed cell (the runner's job).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import urlsplit

from harness.plan import Cell, PlanError, RunPlan, split_names

#: The workload name of every app cell (manifest ``workload``).
APP_WORKLOAD = "app"
#: Injection paths (web/inject/README.md): ``cdp`` = Playwright init script + DevTools Fetch
#: interception (harness/drive/inject.py), ``proxy`` = the recording reverse proxy
#: (harness/serve/proxy.py).
INJECT_PATHS = ("cdp", "proxy")
#: What each browser family can use, preferred first (``--inject auto`` takes the first). Only
#: Chromium speaks the DevTools protocol; WebKitGTK and Safari are driven through WebDriver.
INJECT_SUPPORT = {"chromium": ("cdp", "proxy")}
DEFAULT_INJECT_SUPPORT = ("proxy",)
#: Page actions, applied in the order given (--wait-for, --click, --fill).
ACTION_OPTIONS = ("--wait-for", "--click", "--fill")
#: The function a --script file must define: ``drive(page)``, page = the driver's page object.
SCRIPT_FUNCTION = "drive"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class AppTarget:
    """One app: ``name`` (the cells' variant), ``url`` as given (http/https)."""

    name: str
    url: str


@dataclass(frozen=True)
class Action:
    """One page action: ``kind`` (``wait-for``, ``click``, ``fill``), a CSS ``selector`` or
    ``text=TEXT``, and for ``fill`` the ``text`` typed."""

    kind: str
    selector: str
    text: str | None = None

    def describe(self) -> str:
        """``--fill '#prompt=hello'``: the option as it was given."""
        value = self.selector if self.text is None else f"{self.selector}={self.text}"
        return f"--{self.kind} {value!r}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")[:64] or "app"


def check_url(url: str) -> str:
    """An app URL: http(s) with a host. Returns it; raises :class:`PlanError`."""
    parts = urlsplit(url or "")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PlanError(f"app URL {url!r} is not http:// or https:// with a host (e.g. http://127.0.0.1:8100/)")
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise PlanError(f"app URL {url!r} has a bad port") from None
    return url


def default_name(url: str) -> str:
    """The name of an app from its URL: the last path segment without its extension
    (``/transformers/`` → ``transformers``; ``/demo/index.html`` → ``demo``), else host-port."""
    parts = urlsplit(url)
    segs = [s for s in parts.path.split("/") if s]
    if segs and segs[-1].startswith("index.") and len(segs) > 1:
        segs.pop()
    if segs:
        return _slug(segs[-1].rsplit(".", 1)[0] if "." in segs[-1] else segs[-1])
    return _slug(f"{parts.hostname}-{parts.port or parts.scheme}")


def parse_apps(values: Iterable[str]) -> list[AppTarget]:
    """Positional ``URL`` or ``NAME=URL`` items → apps with unique names. A name defaults to the
    last segment of the URL's path (``/transformers/`` → ``transformers``), else its host and
    port. Raises :class:`PlanError` (no URL, a bad URL or name, a repeated name)."""
    apps: list[AppTarget] = []
    for item in values or []:
        name, url = None, item
        head, sep, tail = item.partition("=")
        if sep and "://" not in head and tail.strip().lower().startswith(("http://", "https://")):
            name, url = head.strip(), tail.strip()
            if not _NAME.match(name):
                raise PlanError(f"app name {name!r} must be letters, digits, '.', '_' or '-' (at most 64)")
        check_url(url)
        if name is None:
            name = default_name(url)
            base, n = name, 2
            while any(a.name == name for a in apps):
                name, n = f"{base}-{n}", n + 1
        elif any(a.name == name for a in apps):
            raise PlanError(f"app name {name!r} is given twice")
        apps.append(AppTarget(name, url))
    if not apps:
        raise PlanError("give the app's URL, e.g. webgpu-harness app http://127.0.0.1:8100/")
    return apps


def _split_fill(value: str) -> tuple[str, str] | None:
    """``SELECTOR=TEXT`` split at the first ``=`` outside ``[...]``, ``(...)`` and quotes, after a
    leading ``text=`` (``input[name=q]=hello`` → ``input[name=q]``, ``hello``)."""
    depth, quote = 0, None
    start = len("text=") if value.startswith("text=") else 0
    for i in range(start, len(value)):
        ch = value[i]
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth = max(0, depth - 1)
        elif ch == "=" and depth == 0:
            return value[:i], value[i + 1:]
    return None


def parse_actions(ordered: Iterable[tuple[str, str]]) -> list[Action]:
    """``[(option, value), ...]`` in command-line order → :class:`Action` list. Raises
    :class:`PlanError` on an empty selector or a --fill without ``=``."""
    out = []
    for option, value in ordered:
        if option not in ACTION_OPTIONS:
            raise PlanError(f"unknown page action {option} (valid: {', '.join(ACTION_OPTIONS)})")
        kind = option[2:]
        value = value or ""
        if kind == "fill":
            split = _split_fill(value)
            if split is None or not split[0].strip():
                raise PlanError(f"--fill {value!r} is not SELECTOR=TEXT (e.g. --fill '#prompt=Hello')")
            out.append(Action(kind, split[0].strip(), split[1]))
            continue
        if not value.strip() or value.strip() == "text=":
            raise PlanError(f"{option} needs a CSS selector or text=TEXT (got {value!r})")
        out.append(Action(kind, value.strip()))
    return out


def check_script(path: Path | None) -> Path | None:
    """A --script file: exists, is Python, defines ``drive(page)`` at top level. Read, never run
    here. Raises :class:`PlanError`."""
    if path is None:
        return None
    path = Path(path)
    if not path.is_file():
        raise PlanError(f"--script {path}: no such file")
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
        raise PlanError(f"--script {path} is not Python: {str(exc).splitlines()[0]}") from None
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if SCRIPT_FUNCTION not in names:
        raise PlanError(f"--script {path} defines no top-level function {SCRIPT_FUNCTION}(page) "
                        f"(page: the Playwright page, or the Selenium driver for WebKit/Safari)")
    return path.resolve()


def app_browsers() -> list[str]:
    """The ``--browser`` names ``app`` accepts: every family that can open a web page (not dawn:
    native Dawn in Node has no page, ``opens_web_apps = False``)."""
    from harness.drive.registry import BROWSERS

    return [b for b, family in BROWSERS.items() if getattr(family, "opens_web_apps", True)]


def check_app_browsers(values: Iterable[str] | None) -> None:
    """Raise :class:`PlanError` when a ``--browser`` given to ``app`` cannot open a web app
    (dawn), naming the valid ones; unknown names are left to :func:`harness.plan.resolve_browsers`."""
    from harness.drive.registry import BROWSERS

    valid = app_browsers()
    for b in split_names(values, "--browser") if values is not None else []:
        if b in BROWSERS and b not in valid:
            raise PlanError(f"--browser {b} cannot open a web app (no page: native Dawn in Node); "
                            f"valid for app: {', '.join(valid)}")


def resolve_inject(values: Iterable[str] | None, browsers: list[str]) -> dict[str, list[str]]:
    """``--inject auto|cdp|proxy`` (comma-separated, repeatable) → the paths of each browser.
    ``auto`` is ``cdp`` for Chromium and ``proxy`` for the others. Raises :class:`PlanError`
    for an unknown path or one a chosen browser cannot use."""
    wanted = split_names(values, "--inject") or ["auto"]
    for w in wanted:
        if w not in ("auto", *INJECT_PATHS):
            raise PlanError(f"unknown --inject {w!r} (valid: auto, {', '.join(INJECT_PATHS)})")
    out: dict[str, list[str]] = {}
    for b in browsers:
        supported = INJECT_SUPPORT.get(b, DEFAULT_INJECT_SUPPORT)
        chosen = list(dict.fromkeys(supported[0] if w == "auto" else w for w in wanted))
        bad = [c for c in chosen if c not in supported]
        if bad:
            raise PlanError(f"--inject {bad[0]} needs Chromium's DevTools protocol; {b} is driven through "
                            f"WebDriver (valid for {b}: {', '.join(supported)}, or auto)")
        out[b] = chosen
    return out


def check_positive(value: float | None, option: str, hi: float = 86_400) -> None:
    """Raise :class:`PlanError` unless ``value`` is None or in (0, hi]."""
    if value is not None and not (isinstance(value, (int, float)) and 0 < value <= hi):
        raise PlanError(f"{option} must be > 0 and at most {hi:g} (got {value})")


def check_ending(step_on: str, steps: int | None, duration_s: float | None) -> None:
    """A cell must be able to end: ``--step-on interval:MS`` ends a step every MS ms for as long as
    the app lives, so ``--idle`` (no step for a while) never comes; it needs ``--steps`` or
    ``--duration``. Raises :class:`PlanError`."""
    if step_on.startswith("interval:") and not steps and not duration_s:
        raise PlanError(f"--step-on {step_on} ends a step every {step_on.split(':', 1)[1]} ms for as long as the app "
                        f"runs, so no cell would ever end: give --steps N or --duration SECONDS with it")


@dataclass
class AppCell(Cell):
    """A cell of an app run: the run's cell fields (RESULTS.md) plus what the app was and what
    the probes found in it. ``tokens`` is ``--steps`` (or the steps measured, when not given).
    Set by the runner: ``app_title`` (document.title), ``step_kind`` (the triggers that ended
    the measured realm's steps, e.g. ``mapAsync``), the measured realm (``realm`` id,
    ``realm_kind``, ``realm_url``, ``script_type``), ``realms`` (every page and worker global that
    reported), ``workers_not_instrumented``, ``frames_not_instrumented`` and ``warnings``."""

    app_url: str = ""
    app_title: str = ""
    inject: str = ""
    step_on: str = ""
    step_kind: str = ""
    realm: str = ""
    realm_kind: str = ""
    realm_url: str = ""
    script_type: str = ""
    realms: list[dict[str, Any]] = field(default_factory=list)
    workers_not_instrumented: list[dict[str, Any]] = field(default_factory=list)
    #: frames the bootstrap could not enter or entered late (web/inject/frames.js)
    frames_not_instrumented: list[dict[str, Any]] = field(default_factory=list)
    #: what makes the measurement partial or eventful, one line each (app_runner ``measurement_warnings``)
    warnings: list[str] = field(default_factory=list)


#: ``--idle auto`` (the default): a cell ends when no step came for :data:`IDLE_FACTOR` × the
#: longest wait for a step so far (the wait from the page actions to the first step included),
#: at least :data:`IDLE_MIN_S` and at most :data:`IDLE_MAX_S` seconds. A fast app (a step every
#: few ms, as the ones the tests serve) ends 5 s after its last step instead of 30, and far fewer
#: memory samples land after it; an app that was slow to reach a step (model load, pipeline
#: compiles on a CPU adapter) still gets up to 30 s between steps, the old fixed default.
IDLE_MIN_S, IDLE_MAX_S, IDLE_FACTOR = 5.0, 30.0, 3.0


def idle_limit(idle_s: float | None, longest_wait_s: float) -> float:
    """Seconds without a step that end a cell: ``idle_s`` (``--idle S``) when given, else (auto)
    ``IDLE_FACTOR × longest_wait_s`` within [IDLE_MIN_S, IDLE_MAX_S]."""
    if idle_s is not None:
        return float(idle_s)
    return min(max(IDLE_FACTOR * max(longest_wait_s, 0.0), IDLE_MIN_S), IDLE_MAX_S)


def parse_idle(text: str | None) -> float | None:
    """``--idle``: ``auto`` (or not given) → None; else seconds > 0 and at most a day. Raises
    :class:`PlanError` naming the valid forms."""
    if text is None or str(text).strip().lower() == "auto":
        return None
    try:
        v = float(text)
    except ValueError:
        raise PlanError(f"--idle {text!r} is not a number of seconds or auto") from None
    check_positive(v, "--idle")
    return v


@dataclass
class AppPlan(RunPlan):
    """A :class:`RunPlan` whose cells are apps (no workloads). ``steps``/``duration_s`` end a
    cell; without them it ends ``idle_s`` seconds after the app's last step (None: auto,
    :func:`idle_limit`). ``start_timeout_s``
    is how long a cell waits for the first step after the page actions; ``action_timeout_s`` how
    long each action waits for its selector."""

    apps: list[AppTarget] = field(default_factory=list)
    inject: dict[str, list[str]] = field(default_factory=dict)
    step_on: str = "mapAsync"
    actions: list[Action] = field(default_factory=list)
    script: Path | None = None
    steps: int | None = None
    duration_s: float | None = None
    idle_s: float | None = None
    action_timeout_s: float = 30.0

    def repetition_cells(self, browser: str, rep: int) -> list[Cell]:
        out: list[Cell] = []
        for app in self.apps:
            for path in self.inject.get(browser, list(DEFAULT_INJECT_SUPPORT)):
                out.append(AppCell(f"{browser}.{APP_WORKLOAD}.{app.name}.{path}.r{rep}", browser, APP_WORKLOAD,
                                   app.name, path, self.steps or 0, rep, 0,
                                   {"url": app.url, "step_on": self.step_on}, app_url=app.url, inject=path,
                                   step_on=self.step_on))
        return out

    def parameters(self) -> dict[str, Any]:
        base = super().parameters()
        for key in ("workloads", "variants", "profiles", "tokens", "seed", "params"):
            base.pop(key, None)
        return {**base, "apps": [{"name": a.name, "url": a.url} for a in self.apps], "inject": self.inject,
                "step_on": self.step_on, "actions": [a.describe() for a in self.actions],
                "script": str(self.script) if self.script else None, "steps": self.steps,
                "duration_s": self.duration_s, "idle_s": self.idle_s, "start_timeout_s": self.start_timeout_s,
                "action_timeout_s": self.action_timeout_s}
