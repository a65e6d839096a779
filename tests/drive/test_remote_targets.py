"""The pure parts of remote browsers, phones and Chrome: options → targets, capability files,
labels, which endpoint is this machine, user agents → platform, Chrome's channel paths, and the
certificate cache (real certificates made with cryptography). No browser is started here; the
endpoints themselves are exercised in tests/e2e/test_remote.py and test_serve_https.py."""

from __future__ import annotations

import json
import ssl

import pytest

from harness.drive import remote
from harness.drive.chrome import channel_paths
from harness.drive.remote_processes import is_local
from harness.drive.runner import platform_from_user_agent
from harness.plan import PlanError
from harness.reach import check_serving


def targets(**kw):
    base = dict(browsers=[], webdriver_url=None, capability_files=[], connect=None, cdp_url=None, headed=False,
                args=[], browser_path=None)
    return remote.targets(**{**base, **kw})


def test_webdriver_defaults_and_capability_files(tmp_path):
    phone = tmp_path / "iphone.json"
    phone.write_text(json.dumps({"capabilities": {"alwaysMatch": {
        "platformName": "iOS", "browserName": "Safari", "appium:automationName": "XCUITest",
        "webgpu-harness:label": "iphone15"}}}))
    got = targets(browsers=["chromium"], webdriver_url="http://grid:4444/", capability_files=[phone])
    assert list(got) == ["iphone15", "chromium"]
    assert got["iphone15"].capabilities == {"platformName": "iOS", "browserName": "Safari",
                                            "appium:automationName": "XCUITest"}  # the label is not sent
    chrome = got["chromium"].capabilities
    assert chrome["browserName"] == "chrome" and "--enable-unsafe-webgpu" in chrome["goog:chromeOptions"]["args"]
    assert got["chromium"].url == "http://grid:4444" and got["chromium"].driver == "webdriver-remote"
    assert targets(browsers=["webkit"], webdriver_url="http://h:1")["webkit"].capabilities == {
        "browserName": "MiniBrowser", "webkitgtk:browserOptions": {"args": ["--automation"]}}
    assert targets(browsers=["safari"], webdriver_url="http://h:1", insecure_certs=True)["safari"].capabilities == {
        "acceptInsecureCerts": True, "browserName": "safari"}


def test_playwright_and_cdp_targets():
    t = targets(browsers=["chrome"], connect="ws://h:3000/")["chrome"]
    assert (t.kind, t.engine, t.launch_options["channel"], t.launch_options["headless"]) == ("playwright", "chromium", "chrome", True)
    assert "--enable-unsafe-webgpu" in t.launch_options["args"]
    wk = targets(browsers=["webkit"], connect="ws://h:3000/")["webkit"]
    assert wk.engine == "webkit" and wk.launch_options["args"] == []
    assert targets(cdp_url="http://h:9222")["chromium"].kind == "cdp"


@pytest.mark.parametrize("kw, words", [
    (dict(connect="http://h:1"), "not a ws:// or wss:// URL"),
    (dict(webdriver_url="h:4444"), "not a http:// or https:// URL"),
    (dict(webdriver_url="http://h:1", cdp_url="http://h:2"), "one remote endpoint per run"),
    (dict(cdp_url="http://h:2", browsers=["webkit"]), "valid: chromium, chrome"),
    (dict(connect="ws://h:1", browsers=["chromium", "webkit"]), "drives one browser"),
    (dict(webdriver_url="http://h:1", browsers=["firefox"]), "no default capabilities"),
    (dict(webdriver_url="http://h:1", browsers=["chromium", "webkit"], browser_path="/x"), "exactly one --browser"),
])
def test_bad_targets(kw, words):
    with pytest.raises(remote.TargetError, match=words.replace("(", r"\(").replace(")", r"\)")):
        targets(**kw)


@pytest.mark.parametrize("data, words", [
    ({"browserName": "chrome", "chromeOptions": {}}, "'chromeOptions' is neither"),
    ({"firstMatch": [{}]}, "firstMatch is not supported"),
    ([], "expected a JSON object"),
    ({"browserName": "safari", "webgpu-harness:label": "my phone"}, "must be 1-40 letters"),
])
def test_bad_capability_files(tmp_path, data, words):
    f = tmp_path / "c.json"
    f.write_text(json.dumps(data))
    with pytest.raises(remote.TargetError, match=words):
        targets(webdriver_url="http://h:1", capability_files=[f])


def test_two_sets_for_one_browser_need_labels(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text('{"browserName": "safari"}')
    b.write_text('{"browserName": "safari"}')
    with pytest.raises(remote.TargetError, match="two capability sets"):
        targets(webdriver_url="http://h:1", capability_files=[a, b])


@pytest.mark.parametrize("caps, label", [
    ({"browserName": "chrome"}, "chrome"), ({"browserName": "MicrosoftEdge"}, "edge"),
    ({"browserName": "Safari"}, "safari"), ({"browserName": "MiniBrowser"}, "webkit"),
    ({"platformName": "iOS", "appium:automationName": "safari"}, "remote"),
])
def test_browser_labels(caps, label):
    assert remote.browser_label(caps) == label


def test_which_endpoints_are_this_machine():
    from harness.serve.urls import lan_addresses

    assert is_local("http://127.0.0.1:4444") and is_local("ws://localhost:3000/") and is_local("http://[::1]:9222")
    assert all(is_local(f"http://{a}:4444") for a in lan_addresses())
    assert not is_local("http://192.0.2.200:4444") or "192.0.2.200" in lan_addresses()  # TEST-NET-1, not ours
    assert not is_local("http://no-such-host.invalid:4444")


@pytest.mark.parametrize("ua, platform", [
    ("Mozilla/5.0 (iPhone; CPU iPhone OS 18_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
     "Version/18.2 Mobile/15E148 Safari/604.1", "iOS 18.2 (iPhone)"),
    ("Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15", "iPadOS 17.0 (iPad)"),
    ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/131.0 Mobile Safari/537.36",
     "Android 14 (Pixel 8)"),
    ("Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 Chrome/131.0 Mobile Safari/537.36", "Android 10"),
    ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 Version/26.0 Safari/605.1.15", "macOS"),
    ("", ""),
])
def test_platform_from_user_agent(ua, platform):
    assert platform_from_user_agent(ua) == platform


def test_chrome_channel_paths():
    assert channel_paths("Darwin") == ["/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"]
    assert channel_paths("Linux") == ["/opt/google/chrome/chrome"]
    win = channel_paths("Windows", {"LOCALAPPDATA": r"C:\Users\u\AppData\Local", "PROGRAMFILES": r"C:\Program Files",
                                    "HOMEDRIVE": "C:"})
    assert win == [r"C:\Users\u\AppData\Local\Google\Chrome\Application\chrome.exe",
                   r"C:\Program Files\Google\Chrome\Application\chrome.exe",
                   r"C:\Program Files\Google\Chrome\Application\chrome.exe",
                   r"C:\Program Files (x86)\Google\Chrome\Application\chrome.exe"]


@pytest.mark.parametrize("args, words", [
    (("127.0.0.1", None, "127.0.0.1:8000", False, None, None), "must be http(s)://HOST"),
    (("127.0.0.1", None, None, False, "c.pem", None), "--cert and --key go together"),
    (("127.0.0.1", None, None, False, "c.pem", "k.pem"), "need --https"),
    (("127.0.0.1", 70000, None, False, None, None), "--port must be between"),
    (("a b", None, None, False, None, None), "not an address"),
])
def test_bad_serving_options(args, words):
    with pytest.raises(PlanError, match=words.replace("(", r"\(").replace(")", r"\)")):
        check_serving(*args)


def test_public_url_gives_the_port():
    assert check_serving("127.0.0.1", None, "https://bs-local.com:8765", True, None, None) == (8765, None)
    assert check_serving("127.0.0.1", 9000, "https://bs-local.com:8765", True, None, None) == (9000, None)


def test_certificates_are_made_once_and_renewed_for_a_new_name(tmp_path):
    from cryptography import x509

    from harness.serve import tls

    first = tls.ensure(["localhost", "127.0.0.1"], tmp_path)
    assert first.made == ["certificate authority", "server certificate"]
    again = tls.ensure(["localhost", "127.0.0.1"], tmp_path)
    assert again.made == [] and again.spki_sha256() == first.spki_sha256()
    moved = tls.ensure(["localhost", "127.0.0.1", "192.0.2.7"], tmp_path)  # a new address: new server cert, same CA
    assert moved.made == ["server certificate"] and "192.0.2.7" in moved.names
    cert = x509.load_pem_x509_certificate(moved.cert.read_bytes())
    ca = x509.load_pem_x509_certificate(moved.ca.read_bytes())
    cert.verify_directly_issued_by(ca)
    days = (cert.not_valid_after_utc - cert.not_valid_before_utc).days
    assert days <= 825 and cert.signature_hash_algorithm.name == "sha256"  # Apple's limits (support.apple.com/103769)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    assert (tmp_path / "key.pem").stat().st_mode & 0o077 == 0
    ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(moved.cert, moved.key)


def test_http_beyond_loopback_is_warned_about():
    from harness.reach import insecure_context_warning

    assert "not a secure context" in insecure_context_warning(["http://192.0.2.2:8765"])
    assert insecure_context_warning(["https://192.0.2.2:8765", "http://127.0.0.1:1", "http://localhost:2",
                                     "http://[::1]:3"]) is None
