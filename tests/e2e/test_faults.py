"""Fault injection on real browsers: processes killed under a running cell, and signals to the
harness. Every run uses decode-loop's test-only parameters (workloads/decode-loop/README.md) so
the fault lands at a known step: ``test_hang_at_step=k`` stops the worker after steps 0..k-1
(it stays responsive, so a kill then finds every step delivered). Each test asserts the exit
code, the reason (naming the process that died), that the steps the summary counts are the
steps in samples.jsonl, that no process the harness started is left (by pid, every pid seen
during the run), and that the harness's pid file is gone (the next run starts clean).

Runs are shared where they can be: one Chromium run of three cells takes three faults, one
WebKitGTK run of four cells takes four. Tiny profile, a few tokens."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from conftest import REPO, CliResult, load_run, run_cli

pytestmark = pytest.mark.full   # browser runs of its own: make test-full

HANG = 12   # the worker hangs after steps 0..HANG-1


class Harness:
    """A ``webgpu-harness run`` in a subprocess, with every process under it remembered."""

    def __init__(self, run_dir: Path, *args: str):
        self.run_dir = run_dir
        cmd = [sys.executable, "-m", "harness", "run", "--workload", "decode-loop", "--profile", "tiny",
               *args, "--output", str(run_dir)]
        self.proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "COLUMNS": "200"})
        self.seen: dict[int, str] = {}

    def look(self) -> list[psutil.Process]:
        try:
            kids = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.Error:
            return []
        for p in kids:
            try:
                self.seen.setdefault(p.pid, " ".join(p.cmdline())[:160])
            except psutil.Error:
                pass
        return kids

    def samples(self) -> list[dict]:
        path = self.run_dir / "samples.jsonl"
        out = []
        if path.exists():
            for line in path.read_text().splitlines():
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out

    def steps(self, variant: str) -> list[int]:
        return [s["step"] for s in self.samples() if s["kind"] == "step" and f".{variant}." in s["cell"]]

    def ended(self, variant: str) -> bool:
        return any(s["kind"] == "cell_status" and f".{variant}." in s["cell"] for s in self.samples())

    def wait(self, cond, what: str, timeout_s: float = 240) -> None:
        deadline = time.monotonic() + timeout_s
        while not cond():
            self.look()
            if self.proc.poll() is not None:
                out, err = self.proc.communicate()
                pytest.fail(f"harness exited ({self.proc.returncode}) while waiting for {what}\n{out[-2000:]}\n{err[-3000:]}")
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.1)
        self.look()

    def find(self, match) -> list[psutil.Process]:
        out = []
        for p in self.look():
            try:
                if match(p.name(), p.cmdline()):
                    out.append(p)
            except psutil.Error:
                pass
        return out

    def kill(self, match, what: str) -> list[int]:
        procs = self.find(match)
        assert procs, f"no {what} under the harness: {sorted(self.seen.values())}"
        for p in procs:
            os.kill(p.pid, signal.SIGKILL)
        return [p.pid for p in procs]

    def finish(self, timeout_s: float = 300) -> CliResult:
        while self.proc.poll() is None:
            self.look()
            time.sleep(0.2)
            timeout_s -= 0.2
            if timeout_s < 0:
                self.proc.kill()
                pytest.fail("the harness did not finish")
        out, err = self.proc.communicate()
        return CliResult(self.proc.returncode, out, err, self.run_dir)

    def assert_clean(self) -> None:
        """Nothing the harness started runs any more, and its pid file is gone."""
        deadline = time.monotonic() + 10
        left = {}
        while time.monotonic() < deadline:
            left = {pid: cmd for pid, cmd in self.seen.items() if _running(pid, cmd)}
            if not left:
                break
            time.sleep(0.2)
        assert not left, f"left running: {left}"
        from harness.drive.reaper import state_dir

        assert not (state_dir() / f"{self.proc.pid}.json").exists()


def _running(pid: int, cmd: str) -> bool:
    try:
        p = psutil.Process(pid)
        return p.status() != psutil.STATUS_ZOMBIE and " ".join(p.cmdline())[:160] == cmd
    except psutil.Error:
        return False


def _chrome(kind: str, sub: str | None = None):
    def match(name, args):
        return (f"--type={kind}" in args and (sub is None or any(a == f"--utility-sub-type={sub}" for a in args))
                and "--extension-process" not in args)
    return match


def _chrome_browser(name, args):
    return "chrom" in name.lower() and not any(a.startswith("--type=") for a in args)


def _webkit(name_prefix: str):
    return lambda name, args: name.startswith(name_prefix[:15])


def _page_web_process(name, args):
    return name.startswith("WebKitWebProces")  # filtered to the worker's host in the test


def _steps_match(run, cli, variant):
    cell = run.cell(variant)
    in_file = [s for s in (json.loads(x) for x in (cli.run_dir / "samples.jsonl").read_text().splitlines())
               if s["kind"] == "step" and s["cell"] == cell["cell"]]
    assert cell["steps_received"] == len(in_file) == len(run.cell_steps(variant))
    return [s["step"] for s in in_file]


def _kinds(cli, variant, kind):
    out = []
    for line in (cli.run_dir / "samples.jsonl").read_text().splitlines():
        s = json.loads(line)
        if s["kind"] == kind and f".{variant}." in s["cell"]:
            out.append(s)
    return out


# ------------------------------------------------------------------------------------ Chromium

def test_chromium_network_gpu_and_renderer_kills(tmp_path):
    """fresh: the network service killed mid-run: every step still arrives (the sink retries).
    reuse: the GPU process killed while the worker waits: the reason names it first.
    fused: the renderer killed while steps are produced: the steps received count up from 0
    without a hole, and at most the batch in flight was lost."""
    h = Harness(tmp_path / "run", "--browser", "chromium", "--variant", "fresh,reuse,fused", "--tokens", "40",
                "--param", f"test_hang_at_step={HANG}", "--step-timeout-s", "8")
    h.wait(lambda: len(h.steps("fresh")) >= 3, "3 steps of fresh")
    h.kill(_chrome("utility", "network.mojom.NetworkService"), "network service")
    h.wait(lambda: h.ended("fresh"), "fresh to end")
    h.wait(lambda: len(h.steps("reuse")) >= HANG, f"{HANG} steps of reuse")
    h.kill(_chrome("gpu-process"), "GPU process")
    h.wait(lambda: h.ended("reuse"), "reuse to end")
    h.wait(lambda: len(h.steps("fused")) >= 4, "4 steps of fused")
    at_kill = len(h.steps("fused"))
    h.kill(_chrome("renderer"), "renderer")
    cli = h.finish()
    assert cli.returncode == 1, cli.stdout + cli.stderr
    run = load_run(cli)

    fresh = run.cell("fresh")
    assert _steps_match(run, cli, "fresh") == list(range(HANG)), fresh["reason"]   # nothing lost
    assert fresh["status"] == "failed" and "timed out: no progress" in fresh["reason"]
    assert "NetworkService" in fresh["reason"] and "processes alive: " in fresh["reason"]
    assert not _kinds(cli, "fresh", "gap") and not _kinds(cli, "fresh", "refused")

    reuse = run.cell("reuse")
    assert _steps_match(run, cli, "reuse") == list(range(HANG))
    assert reuse["status"] in ("failed", "device-lost")
    assert reuse["reason"].startswith("gpu-process (pid "), reuse["reason"]
    assert any(e["process_type"] == "gpu-process" for e in _kinds(cli, "reuse", "process_exit"))

    fused = run.cell("fused")
    got = _steps_match(run, cli, "fused")
    assert fused["status"] == "failed" and "renderer" in fused["reason"], fused["reason"]
    assert got == list(range(len(got))) and len(got) >= at_kill
    # the bound of RESULTS.md: a crash loses at most what was unanswered (the batch in flight and those behind it)
    assert max(s["queue"] for s in _kinds(cli, "fused", "step")) <= 512
    h.assert_clean()


def test_chromium_driver_and_browser_kills_then_sigterm(tmp_path):
    """fresh: Playwright's node driver killed; reuse (a new browser): the browser process killed;
    fused: SIGTERM to the harness: exit 130, the report of what was received still written."""
    h = Harness(tmp_path / "run", "--browser", "chromium", "--variant", "fresh,reuse,fused", "--tokens", "20",
                "--param", "test_hang_at_step=4", "--step-timeout-s", "60")
    h.wait(lambda: len(h.steps("fresh")) >= 4, "4 steps of fresh")
    h.kill(lambda name, args: name == "node" or (args and args[0].endswith("/node")), "Playwright driver")
    h.wait(lambda: h.ended("fresh"), "fresh to end", timeout_s=90)
    h.wait(lambda: len(h.steps("reuse")) >= 4, "4 steps of reuse")
    h.kill(_chrome_browser, "browser process")
    h.wait(lambda: len(h.steps("fused")) >= 4, "4 steps of fused")
    h.proc.send_signal(signal.SIGTERM)
    cli = h.finish()
    assert cli.returncode == 130, cli.stdout + cli.stderr
    assert "Traceback" not in cli.stderr
    run = load_run(cli)
    for v in ("fresh", "reuse", "fused"):
        assert _steps_match(run, cli, v) == [0, 1, 2, 3]
    assert "Playwright's driver (node, pid" in run.cell("fresh")["reason"], run.cell("fresh")["reason"]
    assert "browser process (pid" in run.cell("reuse")["reason"], run.cell("reuse")["reason"]
    assert run.cell("fused")["reason"].startswith("interrupted"), run.cell("fused")["reason"]
    assert (cli.run_dir / "report.html").exists()
    h.assert_clean()


def test_ctrl_c_twice_still_writes_the_report(tmp_path):
    h = Harness(tmp_path / "run", "--browser", "chromium", "--variant", "fresh", "--tokens", "20",
                "--param", "test_hang_at_step=3", "--step-timeout-s", "60")
    h.wait(lambda: len(h.steps("fresh")) >= 3, "3 steps")
    h.proc.send_signal(signal.SIGINT)
    time.sleep(0.3)   # the second one lands while the harness closes the browser and writes
    h.proc.send_signal(signal.SIGINT)
    cli = h.finish()
    assert cli.returncode == 130, cli.stdout + cli.stderr
    assert "interrupted: partial results and report in" in cli.stderr
    assert "Traceback" not in cli.stderr
    run = load_run(cli)
    assert (cli.run_dir / "report.html").exists() and (cli.run_dir / "junit.xml").exists()
    cell = run.cell("fresh")
    assert cell["status"] == "failed" and cell["reason"].startswith("interrupted")
    assert _steps_match(run, cli, "fresh") == [0, 1, 2]
    # through a pipe the cell cut short says how it ended too (harness/cli/progress.py Lines.close)
    assert "[1/1] chromium decode-loop/fresh [tiny]: failed: 3 of 20 steps in " in cli.stdout, cli.stdout
    h.assert_clean()


# ------------------------------------------------------------------------------------- WebKit

def test_webkit_page_process_network_xvfb_and_driver_kills(tmp_path):
    """fresh: the web process hosting the page killed: noticed at once, not after a timeout.
    reuse: the network process killed mid-run: every step arrives. fused: Xvfb killed.
    fused-reuse: WebKitWebDriver killed."""
    from harness.drive.processes import thread_names

    h = Harness(tmp_path / "run", "--browser", "webkit", "--variant", "fresh,reuse,fused,fused-reuse", "--tokens", "20",
                "--param", "test_hang_at_step=4", "--step-timeout-s", "10")
    h.wait(lambda: len(h.steps("fresh")) >= 4, "4 steps of fresh")
    page = [p for p in h.find(_page_web_process) if "WebCore: Worker" in thread_names(p)]
    assert len(page) == 1, "one web process runs the worker"
    os.kill(page[0].pid, signal.SIGKILL)
    killed_at = time.monotonic()
    h.wait(lambda: h.ended("fresh"), "fresh to end", timeout_s=60)
    noticed_s = time.monotonic() - killed_at
    h.wait(lambda: len(h.steps("reuse")) >= 1, "a step of reuse")
    h.kill(_webkit("WebKitNetworkProcess"), "WebKitNetworkProcess")
    h.wait(lambda: h.ended("reuse"), "reuse to end")
    h.wait(lambda: len(h.steps("fused")) >= 4, "4 steps of fused")
    h.kill(lambda name, args: name == "Xvfb", "Xvfb")
    h.wait(lambda: h.ended("fused"), "fused to end", timeout_s=90)
    h.wait(lambda: len(h.steps("fused-reuse")) >= 4, "4 steps of fused-reuse")
    h.kill(_webkit("WebKitWebDriver"), "WebKitWebDriver")
    cli = h.finish()
    assert cli.returncode == 1, cli.stdout + cli.stderr
    run = load_run(cli)

    fresh = run.cell("fresh")
    assert "hosting the page" in fresh["reason"] and f"pid {page[0].pid}" in fresh["reason"], fresh["reason"]
    assert noticed_s < 10, f"the page's web process death took {noticed_s:.0f} s to notice"
    assert _steps_match(run, cli, "fresh") == [0, 1, 2, 3]
    reuse = run.cell("reuse")
    assert _steps_match(run, cli, "reuse") == [0, 1, 2, 3], reuse["reason"]     # nothing lost
    assert "timed out: no progress" in reuse["reason"] and "WebKitNetworkProcess" in reuse["reason"]
    assert "Xvfb" in run.cell("fused")["reason"], run.cell("fused")["reason"]
    assert _steps_match(run, cli, "fused") == [0, 1, 2, 3]
    assert "WebDriver server" in run.cell("fused-reuse")["reason"], run.cell("fused-reuse")["reason"]
    assert _steps_match(run, cli, "fused-reuse") == [0, 1, 2, 3]
    h.assert_clean()


def _gone_within(h: "Harness", seconds: float, since: float) -> tuple[float, dict]:
    """Seconds after ``since`` (monotonic) until nothing the harness started runs, and what was
    still running when ``seconds`` passed (empty when all went in time)."""
    while True:
        left = {pid: cmd for pid, cmd in h.seen.items() if _running(pid, cmd)}
        took = time.monotonic() - since
        if not left or took > seconds:
            return took, left
        time.sleep(0.05)


@pytest.mark.full
def test_sigkilled_harness_is_cleaned_up_by_its_watchdog_and_its_folder_merges(tmp_path):
    # issue 23: WebKit's processes outlived a SIGKILLed harness by 10-20 s. Its watchdog
    # (harness/drive/watchdog.py) ends them, Xvfb and WebKitWebDriver's groups included, within 2 s
    h = Harness(tmp_path / "killed", "--browser", "webkit", "--variant", "fresh", "--tokens", "20",
                "--param", "test_hang_at_step=3", "--step-timeout-s", "60")
    h.wait(lambda: len(h.steps("fresh")) >= 3, "3 steps")
    h.look()
    assert any("harness.drive.watchdog" in c for c in h.seen.values()), sorted(h.seen.values())
    assert any("WebKitWebDriver" in c for c in h.seen.values()), sorted(h.seen.values())
    h.proc.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    h.proc.communicate()
    took, left = _gone_within(h, 2.0, killed)
    assert not left, f"still running {took:.1f} s after the SIGKILL: {left}"
    nxt = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny", "--variant", "fresh",
                  "--tokens", "2", run_dir=tmp_path / "next")
    assert nxt.returncode == 0, nxt.stdout + nxt.stderr
    assert "a killed harness left running" not in nxt.stdout   # nothing was left for it
    h.assert_clean()
    # the killed run's folder merges, its unfinished cell failed (never pending)
    m = run_cli("merge", str(tmp_path / "killed"), run_dir=tmp_path / "merged")
    assert m.returncode == 0, m.stdout + m.stderr  # merge exits 1 only for a failed budget: none here
    cells = json.loads((tmp_path / "merged" / "manifest.json").read_text())["cells"]
    assert [c["status"] for c in cells] == ["failed"] and "killed" in cells[0]["reason"]


@pytest.mark.full
def test_a_killed_harness_whose_watchdog_died_too_is_cleaned_up_within_2_s_of_the_next_start(tmp_path):
    h = Harness(tmp_path / "killed", "--browser", "webkit", "--variant", "fresh", "--tokens", "20",
                "--param", "test_hang_at_step=3", "--step-timeout-s", "60")
    h.wait(lambda: len(h.steps("fresh")) >= 3, "3 steps")
    h.look()
    for p in h.find(lambda name, args: "harness.drive.watchdog" in " ".join(args)):
        os.kill(p.pid, signal.SIGKILL)   # the watchdog first (an OOM kill of both, a kill -9 of the session)
    time.sleep(0.5)
    h.proc.send_signal(signal.SIGKILL)
    h.proc.communicate()
    time.sleep(1)
    left = {pid: cmd for pid, cmd in h.seen.items() if _running(pid, cmd)}
    # nothing ends them now: Xvfb and WebKitWebDriver run in groups of their own
    assert any("Xvfb" in c for c in left.values()) and any("WebKitWebDriver" in c for c in left.values()), left
    # the next run (any browser) ends what the killed one left first thing, before its imports
    started = time.monotonic()
    nxt = subprocess.Popen([sys.executable, "-m", "harness", "run", "--browser", "chromium", "--workload", "decode-loop",
                            "--profile", "tiny", "--variant", "fresh", "--tokens", "2", "--output", str(tmp_path / "next")],
                           cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    took, still = _gone_within(h, 2.0, started)
    out, err = nxt.communicate(timeout=600)
    assert not still, f"still running {took:.1f} s after the next start: {still}"
    assert nxt.returncode == 0, out + err
    assert "a killed harness left running" in out, out
    h.assert_clean()


def test_webkit_network_process_killed_between_cells_is_named_by_the_next(tmp_path):
    """WebKit's network process killed as the next cell starts (before its page loads): the exit
    is recorded in that cell (a ``process_exit``) however the cell goes — its page may fail to
    load ("could not open the runner page", "runner: Load failed") or WebKit may start a new
    network process in time — and a failed cell's reason names it. The kill comes from the
    runner's own progress callback, so it lands between the cells every time. Before, a cell
    watched processes only once its worker reported: the exit was never named."""
    from harness.drive.runner import Runner
    from harness.plan import RunPlan
    from harness.workloads import discover

    killed: list[int] = []

    def progress(event, cell, info):
        if event == "start" and cell.variant == "reuse" and not killed:
            for p in psutil.Process().children(recursive=True):
                try:
                    if p.name().startswith("WebKitNetworkPr"):
                        p.kill()
                        killed.append(p.pid)
                except psutil.Error:
                    pass

    wl = discover()["decode-loop"]
    plan = RunPlan(browsers=["webkit"], workloads=[wl], variants={"decode-loop": ["fresh", "reuse"]},
                   profiles={"decode-loop": "tiny"}, tokens=8, start_timeout_s=20)
    cells = {c.variant: c for c in Runner(plan, tmp_path / "run", progress=progress).run()}
    assert len(killed) == 1, "no WebKitNetworkProcess found under the harness"
    assert cells["fresh"].status == "ok", cells["fresh"].reason
    samples = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    exits = [s for s in samples if s["kind"] == "process_exit" and ".reuse." in s["cell"]]
    assert [(e["pid"], e["process_type"]) for e in exits] == [(killed[0], "WebKitNetworkProcess")], exits
    reuse = cells["reuse"]
    if reuse.status != "ok":
        assert reuse.reason.startswith(f"WebKitNetworkProcess (pid {killed[0]}) exited before the first step; then: "), reuse.reason
