"""Where browsers run and where the harness serves them, validated before anything launches
(the part of :mod:`harness.plan` for browsers behind an endpoint and for ``--https``):
``--webdriver-url`` / ``--capabilities``, ``--connect``, ``--cdp-url``, ``--host``, ``--port``,
``--public-url``, ``--https``, ``--cert``/``--key``. Every check raises
:class:`harness.plan.PlanError` (one line naming the option and the valid choices).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from harness.plan import PlanError, check_range, split_names


def resolve_remote(*, browsers: Iterable[str] | None, webdriver_url: str | None, capabilities: Iterable[Path] | None,
                   connect: str | None, cdp_url: str | None, headed: bool, browser_args: list[str],
                   browser_path: str | None, https: bool) -> tuple[list[str], dict[str, Any]]:
    """Browsers behind an endpoint (``--webdriver-url`` + ``--capabilities``, ``--connect``,
    ``--cdp-url``): ``(browser labels, {label: RemoteTarget})``, or ``([], {})`` when none is
    given (browsers are then launched here; :func:`resolve_browsers`). Raises :class:`PlanError`."""
    from harness.drive.remote import TargetError, targets

    names = [] if browsers is None else split_names(browsers, "--browser")
    try:
        remote = targets(browsers=names, webdriver_url=webdriver_url, capability_files=[Path(c) for c in capabilities or []],
                         connect=connect, cdp_url=cdp_url, headed=headed, args=list(browser_args),
                         browser_path=browser_path, insecure_certs=https)
    except TargetError as exc:
        raise PlanError(str(exc)) from None
    return list(remote), remote


def check_serving(host: str, port: int | None, public_url: str | None, https: bool,
                  cert: Path | None, key: Path | None) -> tuple[int, tuple[Path, Path] | None]:
    """Where the harness serves: ``(port, (cert, key) or None)``. The port is ``port``, else the
    ``--public-url``'s, else 0 (a free one). ``--cert``/``--key`` go together, need ``--https``
    and must be readable files. Raises :class:`PlanError`."""
    from urllib.parse import urlsplit

    if not host or any(ch in host for ch in "/ "):
        raise PlanError(f"--host {host!r} is not an address to bind (e.g. 127.0.0.1, 0.0.0.0, ::)")
    import socket

    try:  # an address this machine can listen on, checked before any folder is made or browser started
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
            s.bind((host, 0))
    except (OSError, OverflowError) as exc:
        raise PlanError(f"--host {host!r}: this machine cannot listen there ({getattr(exc, 'strerror', None) or exc}; "
                        "e.g. 127.0.0.1, 0.0.0.0, ::)") from None
    if public_url is not None:
        parts = urlsplit(public_url)
        try:
            public_port = parts.port
        except ValueError:
            public_port = -1
        if parts.scheme not in ("http", "https") or not parts.hostname or public_port == -1 or parts.path not in ("", "/"):
            raise PlanError(f"--public-url {public_url!r} must be http(s)://HOST[:PORT] (where the browser reaches the harness)")
        if port is None and public_port:
            port = public_port
    check_range(port or 0, 0, 65535, "--port")
    if (cert is None) != (key is None):
        raise PlanError("--cert and --key go together (PEM certificate and its private key)")
    if cert is not None and not https:
        raise PlanError("--cert/--key need --https")
    for opt, f in (("--cert", cert), ("--key", key)):
        if f is not None and not Path(f).is_file():
            raise PlanError(f"{opt} {f}: no such file")
    if cert is not None:
        import ssl

        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(str(cert), str(key))
        except (ssl.SSLError, OSError) as exc:
            raise PlanError(f"--cert {cert} / --key {key}: not a PEM certificate and its key ({exc})") from None
    return port or 0, (Path(cert), Path(key)) if cert is not None else None


def insecure_context_warning(base_urls: list[str]) -> str | None:
    """A warning when a browser is sent to an http URL that is not loopback: such a page is not a
    secure context (HTML spec "potentially trustworthy URL"), so it has no WebGPU
    (``--webgpu auto`` then falls back to the emulation), no cross-origin isolation and no
    ``measureUserAgentSpecificMemory``. None when every URL is https or loopback."""
    import ipaddress
    from urllib.parse import urlsplit

    def trustworthy(url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme == "https" or parts.hostname in ("localhost", None) or (parts.hostname or "").endswith(".localhost"):
            return True
        try:
            return ipaddress.ip_address(parts.hostname).is_loopback
        except ValueError:
            return False

    bad = [u for u in base_urls if not trustworthy(u)]
    if not bad:
        return None
    return (f"{bad[0]} is not a secure context for a browser there: no WebGPU (--webgpu auto would emulate it), "
            "no cross-origin isolation; add --https")
