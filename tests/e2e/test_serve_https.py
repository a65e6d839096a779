"""`serve --https` as a phone uses it: bound beyond loopback, a generated certificate authority
and server certificate, the URL printed with its QR code; a real Chromium that trusts only that
server key opens the printed URL and gets a secure, cross-origin isolated page with WebGPU, and
its samples land in the same tables as a driven browser's."""

from __future__ import annotations

import pytest

import re
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request

from conftest import REPO, load_run

pytestmark = pytest.mark.full   # browser runs of its own: make test-full


def test_serve_https_for_a_phone(tmp_path):
    from harness.drive.chromium import ChromiumDriver
    from harness.serve import tls
    from harness.serve.urls import lan_addresses

    lan = (lan_addresses() or ["127.0.0.1"])[0]
    host = "0.0.0.0" if lan != "127.0.0.1" else "127.0.0.1"
    d, certs_dir = tmp_path / "s", tmp_path / "tls"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "serve", "--https", "--host", host, "--label", "phone",
                             "-w", "decode-loop", "-p", "tiny", "-v", "fresh", "-n", "3", "-o", str(d)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**__import__("os").environ, "WEBGPU_HARNESS_TLS_DIR": str(certs_dir)})
    lines, url = [], None
    deadline = time.monotonic() + 90
    while url is None or not any(ch in lines[-1] for ch in "\u2580\u2584\u2588"):  # until the QR code's rows
        line = proc.stdout.readline()
        assert line and time.monotonic() < deadline, "".join(lines) + proc.stderr.read()
        lines.append(line)
        m = re.search(r"(https://[\d.]+:\d+/web/runner\.html\?cell=\S+)", line)
        url = url or (m and m.group(1))
    printed = "".join(lines)
    # the phone's address, not loopback; the only cell's URL is the QR code's
    assert url.startswith(f"https://{lan}:") and f"scan to open {url}" in printed
    port = int(re.search(r":(\d+)/", url).group(1))

    # TLS: the server certificate chains to the generated authority and names the LAN address
    certs = tls.ensure(tls.names_for(host), certs_dir)
    assert certs.made == [] and lan in certs.names      # serve made them; they are reused, not remade
    ok = ssl.create_default_context(cafile=str(certs.ca))
    with socket.create_connection((lan, port), timeout=10) as raw, ok.wrap_socket(raw, server_hostname=lan) as s:
        assert s.version() in ("TLSv1.2", "TLSv1.3")
    try:
        with socket.create_connection((lan, port), timeout=10) as raw, \
                ssl.create_default_context().wrap_socket(raw, server_hostname=lan):
            raise AssertionError("a client without the authority must not trust the server")
    except ssl.SSLCertVerificationError:
        pass
    der = urllib.request.urlopen(f"https://{lan}:{port}{tls.CA_ROUTE}", context=ok, timeout=10).read()
    assert der == tls.ca_der(certs.ca)

    # a browser that trusts exactly this server key (as a phone that installed the authority)
    driver = ChromiumDriver()
    session = driver.launch(driver.locate(), extra_args=[f"--ignore-certificate-errors-spki-list={certs.spki_sha256()}"])
    try:
        session.open(url)
        page = session.evaluate("({secure: isSecureContext, coi: crossOriginIsolated, gpu: !!navigator.gpu})")
        deadline = time.monotonic() + 120
        while '"kind":"done"' not in (d / "samples.jsonl").read_text():
            assert time.monotonic() < deadline, (d / "samples.jsonl").read_text()[-2000:]
            session.pump(0.2)
    finally:
        session.close()
    assert page == {"secure": True, "coi": True, "gpu": True}
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, out + err

    run = load_run(type("R", (), {"run_dir": d, "stdout": out, "stderr": err})())
    row = run.cell("fresh")
    assert (row["status"], row["steps_received"], row["bind_groups_per_token"], row["dispatches_per_token"]) == \
        ("ok", 3, 42, 42)
    c = run.manifest["cells"][0]
    assert (c["browser"], c["driver"], c["endpoint"], c["platform"], c["webgpu"]) == \
        ("phone", "manual", f"https://{lan}:{port}", "Linux", "real")
    # memory: the page's own (measureUserAgentSpecificMemory), never per-process zeros
    assert c["memory"].startswith("not measurable remotely")
    assert set(run.memory["source"]) <= {"uasm"} and (run.memory["js_heap_bytes"] > 0).all()
    assert "opened by hand (serve)" in (d / "report.html").read_text()
