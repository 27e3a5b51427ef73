"""``make demo`` end to end: it exits 0, shows the one booking and the approved charge, and leaves
no process of its own running; with ``--keep`` it serves on until Ctrl-C, printing the console's URL
and a token that signs in to see the approval just made."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import httpx
from tests.conftest import ROOT

DEMO = [sys.executable, "-m", "skillhouse.demo"]
ENV = {**os.environ, "SKILLHOUSE_MODEL": "scripted", "COLUMNS": "160"}


def assert_all_stopped(output: str) -> None:
    started = [int(pid) for pid in re.findall(r"\(pid (\d+)\)", output)]
    assert len(started) == 2, output  # the house and skillhouse serve
    assert [pid for pid in started if os.path.exists(f"/proc/{pid}")] == []


def test_the_demo_books_once_charges_once_after_approval_and_stops_everything() -> None:
    proc = subprocess.Popen(DEMO, cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, output
    assert "guest: WebAssembly component, ready" in output
    assert "the house has 1 booking(s) and 1 charge(s)" in output
    assert "replayed" in output and "approval-required" in output
    assert "make demo ARGS=--keep" in output
    assert_all_stopped(output)


def _as_a_background_job() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what `make demo ARGS=--keep &` in a script inherits


def test_the_kept_demo_serves_the_console_with_the_approval_until_ctrl_c() -> None:
    proc = subprocess.Popen([*DEMO, "--keep"], cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, preexec_fn=_as_a_background_job)
    assert proc.stdout is not None
    seen: list[str] = []
    try:
        for line in proc.stdout:  # the demo prints its panel, then waits for Ctrl-C
            seen.append(line)
            if "press Ctrl-C" in line:
                break
        output = "".join(seen)
        console = re.search(r"console:\s+(http://127\.0\.0\.1:\d+)/console", output)
        token = re.search(r"token:\s+(skh_\S+)", output)
        approval = re.search(r"approval:\s+http://127\.0\.0\.1:\d+(/console/approvals/(apr_[\w-]+))", output)
        assert console and token and approval, output
        with httpx.Client(base_url=console.group(1), timeout=30, follow_redirects=True) as browser:
            form = browser.get("/console/sign-in").text
            csrf = re.search(r'name="csrf" value="([^"]+)"', form)
            assert csrf is not None
            signed = browser.post("/console/sign-in", data={"csrf": csrf.group(1), "token": token.group(1),
                                                           "next": approval.group(1)})
            assert signed.status_code == 200 and approval.group(2) in signed.text
            state = re.search(r'id="approval-state">(\w+)<', signed.text)
            assert state is not None and state.group(1) == "used", signed.text  # approved, then run once
    finally:
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=60)
    output = "".join(seen) + rest
    assert proc.returncode == 0, output
    assert_all_stopped(output)
