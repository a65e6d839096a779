"""macOS platform logic on real recorded macOS outputs (tests/drive/mac-recorded/, each file
names its public source): Safari's process classification, telling the automation tab's content
process apart, and physical footprint parsing. Nothing here runs on a Mac; what these tests
cover is the pure logic over what macOS prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.drive import macos
from harness.probe import footprint

REC = Path(__file__).parent / "mac-recorded"


def text(name: str) -> str:
    return (REC / name).read_text()


def test_stp_webcontent_rows_are_launchd_children_classified_by_path():
    rows = macos.parse_ps_ef(text("ps-stp-webcontent-fastfetch-984.txt"))
    assert [(p.pid, p.ppid) for p in rows] == [(38866, 1), (38990, 1)]
    # parent is launchd: a process-tree walk from safaridriver would never reach them
    assert all(p.label == "WebContent" for p in rows)
    assert all(p.build == "Safari Technology Preview" for p in rows)
    assert rows[0].path.endswith("/com.apple.WebKit.WebContent.xpc/Contents/MacOS/com.apple.WebKit.WebContent")


@pytest.mark.parametrize("path, label", [
    ("/System/Library/Frameworks/WebKit.framework/Versions/A/XPCServices/com.apple.WebKit.GPU.xpc/Contents/MacOS/"
     "com.apple.WebKit.GPU", "GPU"),
    ("/System/Volumes/Preboot/Cryptexes/OS/System/Library/Frameworks/WebKit.framework/Versions/A/XPCServices/"
     "com.apple.WebKit.Networking.xpc/Contents/MacOS/com.apple.WebKit.Networking", "Networking"),
    ("com.apple.WebKit.WebContent.CaptivePortal", "WebContent"),
    ("com.apple.WebKit", "WebKit"),                     # the kernel's 16-character p_comm: service unknown
    ("/Applications/Safari.app/Contents/MacOS/Safari", "Safari"),
    ("/usr/bin/safaridriver", "safaridriver"),
    ("com.apple.WebKit.WebContentX", None),
    ("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", None),
])
def test_classify_by_executable(path, label):
    assert macos.classify(path) == label


def test_process_names_in_recorded_logs_and_footprint_are_webcontent():
    head = footprint.parse_footprint(text("footprint-webcontent-webkit-docs.txt"))[0]
    jetsam = json.loads("\n".join(line for line in text("jetsam-webcontent-focus-ios-3673.json").splitlines()
                                  if not line.startswith("//")).rstrip().rstrip(","))
    log = text("webcontent-log-footprint-safaristand-42.txt").splitlines()[2].split("\t")[2]
    assert {macos.classify(n) for n in (head["name"], jetsam["name"], log)} == {"WebContent"}


def test_the_new_content_process_is_the_automation_tabs():
    rows = macos.parse_ps_ef(text("ps-stp-webcontent-fastfetch-984.txt"))
    # 38866 existed before the WebDriver session (another tab); 38990 appeared with it
    sel = macos.select_session(rows, before={38866}, build="Safari Technology Preview")
    assert sel.content == [38990]
    assert sel.labels == {38866: macos.OTHER_CONTENT, 38990: "WebContent"}
    assert "1 WebContent process(es) new" in sel.how
    # the system Safari's session ignores STP's WebKit entirely
    assert macos.select_session(rows, before=set(), build="system").labels == {}


def test_prewarmed_content_process_younger_than_the_session_counts_as_new():
    a, b = macos.parse_ps_ef(text("ps-stp-webcontent-fastfetch-984.txt"))
    rows = [macos.MacProcess(a.pid, 1, a.path, create_time=100.0), macos.MacProcess(b.pid, 1, b.path, create_time=205.0)]
    # both listed before the first page opened, but b was started (prewarmed) after the session began at 200 s
    sel = macos.select_session(rows, before={a.pid, b.pid}, session_start=200.0, build="Safari Technology Preview")
    assert sel.content == [b.pid]


def test_responsibility_drops_other_apps_web_views():
    a, b = macos.parse_ps_ef(text("ps-stp-webcontent-fastfetch-984.txt"))
    ui = macos.MacProcess(500, 1, "/Applications/Safari Technology Preview.app/Contents/MacOS/Safari Technology Preview")
    rows = [ui, macos.MacProcess(a.pid, 1, a.path, responsible_pid=777),   # Mail's web view, say
            macos.MacProcess(b.pid, 1, b.path, responsible_pid=500)]
    sel = macos.select_session(rows, before={500}, build="Safari Technology Preview")
    assert sel.labels == {500: "Safari", b.pid: "WebContent"} and sel.content == [b.pid]


def test_no_new_content_process_is_said_not_guessed():
    rows = macos.parse_ps_ef(text("ps-stp-webcontent-fastfetch-984.txt"))
    sel = macos.select_session(rows, before={38866, 38990}, build="Safari Technology Preview")
    assert sel.content == [38866, 38990] and sel.how.startswith("could not tell the automation tab apart")


def test_footprint_output_of_a_webcontent_process():
    (p,) = footprint.parse_footprint(text("footprint-webcontent-webkit-docs.txt"))
    assert p == {"name": "com.apple.WebKit.WebContent", "pid": 27416, "footprint_bytes": 142 * 2**20,
                 "phys_footprint_bytes": 142 * 2**20, "peak_bytes": 424 * 2**20}


def test_footprint_and_rss_of_one_process_differ():
    """The recorded issue shows `ps` RSS 9120 KiB and `footprint` 42 MB for one process: RSS is
    not the number jetsam uses."""
    rec = text("footprint-and-ps-ruby-process-metrics-3.txt")
    (p,) = footprint.parse_footprint(rec)
    rss_kib = int(next(line for line in rec.splitlines() if line.startswith(" 3644")).split()[6])
    assert p["pid"] == 3644 and p["footprint_bytes"] == 42 * 2**20
    assert rss_kib == 9120 and p["footprint_bytes"] / (rss_kib * 1024) == pytest.approx(4.72, abs=0.01)


def test_vmmap_header():
    h = footprint.parse_vmmap_header(text("vmmap-header-go-pprof.txt"))
    assert h == {"name": "gopls", "pid": 53799, "footprint_bytes": round(1.2 * 2**30), "peak_bytes": round(1.2 * 2**30)}


@pytest.mark.parametrize("s, n", [("0 B", 0), ("9664 KB", 9664 * 1024), ("253904480 B", 253904480),
                                  ("2192K", 2192 * 1024), ("115.1M", round(115.1 * 2**20))])
def test_sizes(s, n):
    assert footprint.parse_size(s) == n


def test_rusage_offsets_read_the_struct_fields():
    buf = bytearray(footprint.RUSAGE_V4_SIZE)
    buf[72:80] = (123_456_789).to_bytes(8, "little")
    buf[240:248] = (987_654_321).to_bytes(8, "little")
    assert footprint.unpack_rusage_v4(bytes(buf)) == (123_456_789, 987_654_321)
    with pytest.raises(ValueError):
        footprint.unpack_rusage_v4(bytes(100))
