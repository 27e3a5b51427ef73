"""``make demo`` end to end: it exits 0, shows the one booking and the approved charge, and leaves
no process of its own running."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.conftest import ROOT


def test_the_demo_books_once_charges_once_after_approval_and_stops_everything() -> None:
    env = {**os.environ, "SKILLHOUSE_MODEL": "scripted", "COLUMNS": "160"}
    proc = subprocess.Popen([sys.executable, "-m", "skillhouse.demo"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output
    assert "the house has 1 booking(s) and 1 charge(s)" in output
    assert "replayed" in output and "approval-required" in output
    started = [int(pid) for pid in re.findall(r"\(pid (\d+)\)", output)]
    assert len(started) == 2  # the house and skillhouse serve
    assert [pid for pid in started if os.path.exists(f"/proc/{pid}")] == []
