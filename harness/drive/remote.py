"""Transport for browsers the harness does not launch: a W3C WebDriver endpoint
(``--webdriver-url``: Selenium Grid 4, Appium, a cloud device farm, chromedriver,
WebKitWebDriver or a safaridriver on another Mac), a Playwright server (``--connect ws://``:
``playwright run-server`` / ``launch-server``) or a Chromium's DevTools endpoint
(``--cdp-url http://``).

What can be measured depends on where the browser runs. The WebGPU counters, steps and the
page's ``measureUserAgentSpecificMemory`` come from the page and work everywhere. Per-process
memory needs the processes: when the endpoint is on this machine the session finds them
(:mod:`harness.drive.remote_processes`); otherwise memory is recorded as "not measurable
remotely", never as 0. A Playwright/CDP Chromium also gives the worker's JS heap through the
DevTools protocol, wherever it runs.

:func:`targets` turns the command line into :class:`RemoteTarget` s (pure; raises
:class:`TargetError`); :class:`RemoteDriver` is the browser family every target is driven by.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from harness.drive import remote_processes as rp
from harness.drive.base import BrowserDriver, Located, ProcessInfo
from harness.drive.chromium import CHROMIUM_FLAGS
from harness.drive.playwright import PlaywrightSession
from harness.drive.webdriver import COMMAND_TIMEOUT_S, WebDriverSession

#: W3C WebDriver §7.2 standard capability names; any other key needs a vendor prefix (``x:y``).
STANDARD_CAPABILITIES = ("browserName", "browserVersion", "platformName", "acceptInsecureCerts", "pageLoadStrategy",
                         "proxy", "setWindowRect", "timeouts", "strictFileInteractability",
                         "unhandledPromptBehavior", "userAgent", "webSocketUrl")
#: A capability read by the harness and never sent: the browser label of a capabilities file.
LABEL_CAPABILITY = "webgpu-harness:label"
#: WebDriver ``browserName`` → harness browser label.
BROWSER_LABELS = {"chrome": "chrome", "chromium": "chromium", "microsoftedge": "edge", "msedge": "edge",
                  "safari": "safari", "safari technology preview": "safari", "minibrowser": "webkit",
                  "webkitgtk": "webkit", "firefox": "firefox"}
#: Browser labels each kind of endpoint can drive with default settings.
PLAYWRIGHT_BROWSERS = ("chromium", "chrome", "webkit")
#: Seconds between liveness checks of a remote WebDriver session (one cheap command each).
PING_S = 10.0


class TargetError(ValueError):
    """Bad remote-browser options (one line naming the option and the valid choices)."""


@dataclass
class RemoteTarget:
    """One browser reached through an endpoint. ``kind``: ``webdriver``, ``playwright`` or
    ``cdp``; ``browser``: the cells' browser label; ``capabilities``: what a WebDriver new-session
    request sends; ``launch_options``: what a Playwright server launches
    (``x-playwright-launch-options``); ``engine``: Playwright's browser type."""

    kind: str
    url: str
    browser: str
    capabilities: dict = field(default_factory=dict)
    launch_options: dict = field(default_factory=dict)
    engine: str = "chromium"

    @property
    def driver(self) -> str:
        """How it is driven, as recorded in the manifest (``driver``)."""
        return {"webdriver": "webdriver-remote", "playwright": "playwright-remote", "cdp": "cdp-remote"}[self.kind]


def check_url(url: str, option: str, schemes: tuple[str, ...]) -> str:
    """``url`` when it is an absolute URL with one of ``schemes`` and a host; raises
    :class:`TargetError` otherwise."""
    parts = urlsplit(url or "")
    if parts.scheme not in schemes or not parts.hostname:
        raise TargetError(f"{option} {url!r} is not a {' or '.join(s + '://' for s in schemes)} URL with a host")
    try:
        parts.port
    except ValueError:
        raise TargetError(f"{option} {url!r} has a bad port") from None
    return url.rstrip("/") if parts.path in ("", "/") else url


def load_capabilities(path: Path) -> dict:
    """A W3C capabilities file: a JSON object of capabilities, or ``{"alwaysMatch": {...}}``, or
    ``{"capabilities": {"alwaysMatch": {...}}}``. Keys other than the standard ones
    (:data:`STANDARD_CAPABILITIES`) need a vendor prefix (``goog:chromeOptions``,
    ``appium:deviceName``, ``bstack:options``...). Raises :class:`TargetError`."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise TargetError(f"--capabilities {path}: cannot read it ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise TargetError(f"--capabilities {path}: not JSON ({exc})") from None
    if isinstance(data, dict) and isinstance(data.get("capabilities"), dict):
        data = data["capabilities"]
    if isinstance(data, dict) and "firstMatch" in data:
        raise TargetError(f"--capabilities {path}: firstMatch is not supported; give one capability set per file "
                          "(repeat --capabilities for several browsers)")
    if isinstance(data, dict) and isinstance(data.get("alwaysMatch"), dict):
        data = data["alwaysMatch"]
    if not isinstance(data, dict) or not data:
        raise TargetError(f"--capabilities {path}: expected a JSON object of W3C capabilities")
    bad = [k for k in data if ":" not in k and k not in STANDARD_CAPABILITIES]
    if bad:
        raise TargetError(f"--capabilities {path}: {bad[0]!r} is neither a standard capability "
                          f"({', '.join(STANDARD_CAPABILITIES)}) nor vendor-prefixed (e.g. goog:chromeOptions)")
    return data


def browser_label(caps: dict) -> str:
    """The cells' browser label for a capability set: its ``webgpu-harness:label``, else
    :data:`BROWSER_LABELS` of its ``browserName``, else ``remote``. Raises :class:`TargetError`
    on a label that cannot be part of a cell id."""
    label = caps.get(LABEL_CAPABILITY) or BROWSER_LABELS.get(str(caps.get("browserName", "")).lower(), "")
    label = label or re.sub(r"[^a-z0-9_-]+", "-", str(caps.get("browserName", "")).lower()).strip("-") or "remote"
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", label):
        raise TargetError(f"{LABEL_CAPABILITY} {label!r} must be 1-40 letters, digits, '-' or '_'")
    return label


def default_capabilities(browser: str, headed: bool, args: list[str], browser_path: str | None,
                         insecure_certs: bool) -> dict:
    """Capabilities for ``--browser NAME`` without a capabilities file: Chrome/Chromium with the
    harness's WebGPU flags (harness/drive/chromium.py, headless unless ``headed``), WebKitGTK's
    MiniBrowser in automation mode, Safari as it is; ``args``: the user's extra flags.
    ``browser_path`` is the browser's path on the remote machine.
    Raises :class:`TargetError` for a browser with no defaults."""
    caps: dict = {"acceptInsecureCerts": True} if insecure_certs else {}
    if browser in ("chromium", "chrome", "edge"):
        # --no-sandbox as Playwright launches it locally (its chromiumSandbox defaults to false)
        opts: dict = {"args": (["--headless=new"] if not headed else []) + ["--no-sandbox", *CHROMIUM_FLAGS, *args]}
        if browser_path:
            opts["binary"] = browser_path
        key = "ms:edgeOptions" if browser == "edge" else "goog:chromeOptions"
        return {**caps, "browserName": {"edge": "MicrosoftEdge"}.get(browser, "chrome"), key: opts}
    if browser == "webkit":
        opts = {"args": ["--automation", *args]}
        if browser_path:
            opts["binary"] = browser_path
        return {**caps, "browserName": "MiniBrowser", "webkitgtk:browserOptions": opts}
    if browser == "safari":
        return {**caps, "browserName": "safari"}
    raise TargetError(f"--browser {browser} has no default capabilities; give --capabilities FILE.json "
                      "(defaults exist for chromium, chrome, edge, webkit, safari)")


def targets(*, browsers: list[str], webdriver_url: str | None, capability_files: list[Path], connect: str | None,
            cdp_url: str | None, headed: bool, args: list[str], browser_path: str | None,
            insecure_certs: bool = False) -> dict[str, RemoteTarget]:
    """The remote browsers a run drives, by browser label (empty when no endpoint is given).

    One endpoint per run. With ``--webdriver-url``, every ``--capabilities`` file is one browser
    (labelled by :func:`browser_label`) and every ``--browser`` without a file gets
    :func:`default_capabilities`; with ``--connect``/``--cdp-url``, ``--browser`` names the
    browser type (default chromium). Raises :class:`TargetError`."""
    given = [n for n, v in (("--webdriver-url", webdriver_url), ("--connect", connect), ("--cdp-url", cdp_url)) if v]
    if len(given) > 1:
        raise TargetError(f"{' and '.join(given)}: give one remote endpoint per run (merge runs to combine them)")
    if capability_files and not webdriver_url:
        raise TargetError("--capabilities needs --webdriver-url (it is sent in the WebDriver new-session request)")
    if not given:
        return {}
    out: dict[str, RemoteTarget] = {}
    if browser_path and len(browsers) + len(capability_files) != 1:
        raise TargetError("--browser-path needs exactly one --browser (the browser's path on the remote machine)")
    if webdriver_url:
        url = check_url(webdriver_url, "--webdriver-url", ("http", "https"))
        for f in capability_files:
            caps = load_capabilities(f)
            label = browser_label(caps)
            if label in out:
                raise TargetError(f"two capability sets for browser {label!r}; set \"{LABEL_CAPABILITY}\" in one of them")
            out[label] = RemoteTarget("webdriver", url, label, {k: v for k, v in caps.items() if k != LABEL_CAPABILITY})
        for b in browsers if (browsers or capability_files) else ["chromium"]:
            if b not in out:
                out[b] = RemoteTarget("webdriver", url, b, default_capabilities(b, headed, args, browser_path, insecure_certs))
        return out
    kind, url = ("playwright", check_url(connect, "--connect", ("ws", "wss"))) if connect else \
        ("cdp", check_url(cdp_url, "--cdp-url", ("http", "https", "ws", "wss")))
    names = browsers or ["chromium"]
    valid = PLAYWRIGHT_BROWSERS if kind == "playwright" else ("chromium", "chrome")
    bad = [b for b in names if b not in valid]
    if bad or len(names) > 1:
        raise TargetError(f"{'--connect' if connect else '--cdp-url'} drives one browser: --browser "
                          f"{bad[0] if bad else ','.join(names)} (valid: {', '.join(valid)})")
    b = names[0]
    launch = {"headless": not headed, "args": (CHROMIUM_FLAGS if b != "webkit" else []) + args}
    if browser_path:
        launch["executablePath"] = browser_path
    elif b == "chrome":
        launch["channel"] = "chrome"
    engine = "webkit" if b == "webkit" else "chromium"
    return {b: RemoteTarget(kind, url, b, launch_options=launch if kind == "playwright" else {}, engine=engine)}


class RemoteWebDriverSession(WebDriverSession):
    """A session on a remote WebDriver endpoint. Never kills anything: the browser is the
    endpoint's. Liveness: a cheap command every :data:`PING_S` (and the step timeout)."""

    def __init__(self, driver, target: RemoteTarget, before: tuple[set[int], float] = (set(), 0.0)):
        super().__init__(driver, target.browser)
        caps = driver.capabilities
        self.platform = str(caps.get("platformName") or caps.get("platform") or "")
        self._finder = rp.webdriver_finder(target.url, caps, before)
        self.process_scope, self.unmeasurable = self._finder.scope, self._finder.why
        self._last_ping = time.monotonic()

    def open(self, url: str) -> None:
        super().open(url)
        self._finder.locate()
        self.process_scope, self.unmeasurable = self._finder.scope, self._finder.why

    def processes(self) -> list[ProcessInfo]:
        return self._finder.processes()

    def dead(self) -> str | None:
        if self._death is None and time.monotonic() - self._last_ping > PING_S:
            self._last_ping = time.monotonic()
            try:
                self._call(lambda: self._driver.current_url)
            except Exception:
                pass
        return self._death


class RemotePlaywrightSession(PlaywrightSession):
    """A browser behind a Playwright server or a DevTools endpoint. Its processes are the ones
    Chromium lists (``SystemInfo.getProcessInfo``) when they are on this machine."""

    def __init__(self, located: Located, target: RemoteTarget, connect):
        super().__init__(located, False, [], engine=target.engine, connect=connect)
        self._kind = target.kind
        self._finder = rp.cdp_finder(target.url, self._cdp)
        self.process_scope, self.unmeasurable = self._finder.scope, self._finder.why

    def open(self, url: str) -> None:
        super().open(url)
        self._finder.locate()
        self.process_scope, self.unmeasurable = self._finder.scope, self._finder.why

    def processes(self) -> list[ProcessInfo]:
        return self._finder.processes()

    def dead(self) -> str | None:
        return self._death

    def close(self) -> None:
        # a DevTools endpoint's browser is not ours to close: only our context, then disconnect
        steps = [lambda: self._context and self._context.close()]
        if self._kind != "cdp":
            steps.append(lambda: self._browser.close())
        for step in steps + [lambda: self._pw.stop()]:
            try:
                step()
            except Exception:
                pass


class RemoteDriver(BrowserDriver):
    """The family of every remote target: ``locate`` records the endpoint, ``launch`` opens a
    session on it (a WebDriver new session, a Playwright ``connect`` or ``connect_over_cdp``)."""

    description = "a browser behind a WebDriver, Playwright or DevTools endpoint"

    def __init__(self, target: RemoteTarget):
        self.target = target
        self.name = target.browser

    @property
    def forces_collections(self) -> bool:
        """A Chromium behind a Playwright server or a DevTools endpoint: a DevTools protocol
        session reaches its worker; a WebDriver endpoint or a remote WebKit: no."""
        return self.target.kind in ("playwright", "cdp") and self.target.engine == "chromium"

    def locate(self, browser_path: str | None = None) -> Located:
        t = self.target
        sent = t.capabilities if t.kind == "webdriver" else t.launch_options
        return Located(t.browser, browser_path or "", t.driver, [f"{t.kind} endpoint {t.url}"], endpoint=t.url,
                       capabilities=sent)

    def launch(self, located: Located, headed: bool = False, extra_args=None, without_args=None):
        t = self.target
        if t.kind == "webdriver":
            before = rp.before_session(t.url, t.capabilities)
            return RemoteWebDriverSession(_new_webdriver_session(t), t, before)
        if t.kind == "playwright":
            headers = {"x-playwright-launch-options": json.dumps(t.launch_options)}

            def connect(pw):
                return getattr(pw, t.engine).connect(t.url, headers=headers, timeout=COMMAND_TIMEOUT_S * 1000)
        else:
            def connect(pw):
                return pw.chromium.connect_over_cdp(t.url, timeout=COMMAND_TIMEOUT_S * 1000)
        return RemotePlaywrightSession(located, t, connect)


def _new_webdriver_session(t: RemoteTarget):
    """A new WebDriver session at ``t.url`` with ``t.capabilities`` (alwaysMatch), bounded by
    :data:`COMMAND_TIMEOUT_S` × 3 (a grid may queue the request while a node starts the browser)."""
    from selenium import webdriver
    from selenium.webdriver.common.options import ArgOptions
    from selenium.webdriver.remote.client_config import ClientConfig

    opts = ArgOptions()
    for key, value in t.capabilities.items():
        opts.set_capability(key, value)
    config = ClientConfig(remote_server_addr=t.url, timeout=COMMAND_TIMEOUT_S * 3)
    try:
        return webdriver.Remote(command_executor=t.url, options=opts, client_config=config)
    except Exception as exc:
        raise RuntimeError(f"WebDriver endpoint {t.url} refused a session for {t.browser}: "
                           f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
