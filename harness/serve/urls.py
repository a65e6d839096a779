"""The URLs the harness gives browsers: where the runner page of a cell is, and which base URLs
reach the server from this machine and from others.

Every URL a browser is sent to or a person is shown goes through :func:`runner_url` (one place
to add what a URL must carry, such as an access token).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import quote

#: Addresses that mean "every interface" when bound.
WILDCARDS = ("0.0.0.0", "::", "")


def runner_url(base: str, cell: str, token: str | None = None) -> str:
    """The runner page of ``cell`` under ``base`` (``scheme://host:port``, no trailing slash),
    with the run's ``token`` (harness/serve/access.py: the page passes it on to every API call)."""
    tail = f"&token={quote(token, safe='')}" if token else ""
    return f"{base.rstrip('/')}/web/runner.html?cell={quote(cell, safe='')}{tail}"


def index_url(base: str, token: str | None = None) -> str:
    """The index page under ``base``: every cell of a ``serve``, linked (with the run's token)."""
    return f"{base.rstrip('/')}/" + (f"?token={quote(token, safe='')}" if token else "")


def base_url(scheme: str, host: str, port: int) -> str:
    """``scheme://host:port`` with IPv6 literals bracketed."""
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def local_base(scheme: str, host: str, port: int) -> str:
    """The base URL a browser on this machine uses: loopback when bound to every interface
    (browsers refuse to load pages from 0.0.0.0)."""
    if host in WILDCARDS:
        host = "::1" if host == "::" else "127.0.0.1"
    return base_url(scheme, host, port)


def lan_addresses() -> list[str]:
    """This machine's non-loopback, non-link-local IPv4 addresses (psutil), in interface order."""
    import psutil

    out = []
    for addrs in psutil.net_if_addrs().values():
        for a in addrs:
            if a.family == socket.AF_INET:
                ip = ipaddress.ip_address(a.address)
                if not (ip.is_loopback or ip.is_link_local) and a.address not in out:
                    out.append(a.address)
    return out


def reachable_bases(scheme: str, host: str, port: int) -> list[str]:
    """Base URLs other machines (a phone on the same network) can try: every LAN address when
    bound to every interface, else the bound address; [] when bound to loopback only."""
    if host in WILDCARDS:
        return [base_url(scheme, a, port) for a in lan_addresses()]
    try:
        if ipaddress.ip_address(host).is_loopback:
            return []
    except ValueError:
        if host == "localhost":
            return []
    return [base_url(scheme, host, port)]
