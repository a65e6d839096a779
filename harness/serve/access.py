"""Who may talk to the harness server: the run's token, the Host names it answers to, and the
warning printed when it listens beyond this machine.

- Every run (``run``, ``serve``) makes one random token (:func:`new_token`, 128 bits from
  :mod:`secrets`). The runner page gets it in its URL (:func:`runner_url`), hands it to the
  worker, and every config read and sample post carries it (``X-Harness-Token`` header, or a
  ``token`` query parameter for plain GETs such as a ``--model`` file). Requests without it are
  answered 403.
- The server answers only Host names of the address it is bound to (:func:`allowed_hosts`;
  Starlette's ``TrustedHostMiddleware``): a page of another site whose name resolves to
  127.0.0.1 (DNS rebinding) gets 400.
- Binding beyond loopback happens only when asked (``serve --host``) and prints
  :func:`public_warning`.
"""

from __future__ import annotations

import ipaddress
import secrets
import socket

#: Header the sink and the runner page send the token in.
TOKEN_HEADER = "X-Harness-Token"
#: Query parameter that carries the token in page URLs and plain GETs.
TOKEN_PARAM = "token"


def new_token() -> str:
    """A fresh random token for one run (URL-safe, 22 characters, 128 bits)."""
    return secrets.token_urlsafe(16)


def token_ok(given: str | None, token: str | None) -> bool:
    """Whether ``given`` is the run's ``token`` (constant-time); True when the run has none."""
    if token is None:
        return True
    return given is not None and secrets.compare_digest(given.encode(), token.encode())


def runner_url(base_url: str, cell: str, token: str | None) -> str:
    """The runner page of ``cell`` with the token: harness/serve/urls.py ``runner_url`` (the one
    place every URL a browser gets or a person sees is made: run, serve, QR codes)."""
    from harness.serve import urls

    return urls.runner_url(base_url, cell, token)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(bound: str, public_urls: list[str] | tuple = ()) -> list[str]:
    """Host names (no port) the server bound to ``bound`` answers. Loopback: ``127.0.0.1``,
    ``localhost``, ``::1``. A wildcard bind (``0.0.0.0``, ``::``) adds this machine's addresses
    and host names; another address adds itself; each of ``public_urls`` (``--public-url``: a
    tunnel, a name) adds its host."""
    from urllib.parse import urlsplit

    names = {"127.0.0.1", "localhost", "::1", "[::1]"}
    names.update(h for h in (urlsplit(u).hostname for u in public_urls if u) if h)
    if is_loopback(bound):
        return sorted(names)
    names.add(bound.strip("[]"))
    if bound in ("0.0.0.0", "::", ""):
        try:
            import psutil

            for addrs in psutil.net_if_addrs().values():
                for a in addrs:
                    if a.family in (socket.AF_INET, socket.AF_INET6):
                        ip = a.address.split("%", 1)[0]
                        names.update({ip, f"[{ip}]"} if ":" in ip else {ip})
        except Exception:  # no psutil data: the host names below still work
            pass
        for name in (socket.gethostname(), socket.getfqdn()):
            if name:
                names.update({name, f"{name}.local"})
    return sorted(names)


def public_warning(host: str) -> str | None:
    """The line to print when binding ``host`` exposes the server beyond this machine, else None."""
    if is_loopback(host):
        return None
    return (f"warning: serving on {host}, beyond this machine: anyone who can reach it and has a URL "
            "printed here (it carries the run's token) can read the cells' configuration and post samples")
