"""docs/getting-started.md stays true: its install commands are Makefile targets, and every shell block
of "The example by hand" runs, in order, as one script against a real house and a real ``skillhouse
serve`` (only the two port numbers become free ones)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

from tests.docs.pages import page, sections

ROOT = Path(__file__).resolve().parents[2]
GUIDE = page("getting-started.md")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def shell_blocks(text: str) -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def test_the_install_commands_are_makefile_targets_and_the_rest_of_the_block_runs() -> None:
    install = shell_blocks(sections(GUIDE, 2)["Install"])
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z-]+):", makefile, re.MULTILINE))
    make_lines = [line.split("#")[0].split() for line in install[0].splitlines()]
    assert [words[:1] for words in make_lines] == [["make"]] * len(make_lines)
    # `make setup` is what `make test` starts from; `make demo` is run by tests/test_demo.py
    assert {words[1] for words in make_lines} == {"setup", "demo"} <= targets
    assert "skillhouse.demo" in (ROOT / "tests" / "test_demo.py").read_text(encoding="utf-8")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    ran = subprocess.run(["bash", "-euo", "pipefail", "-c", install[1]], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert "skillhouse" in ran.stdout and "publish" in ran.stdout


def test_the_example_by_hand_publishes_calls_replays_and_runs_the_approved_charge_once() -> None:
    script = "\n".join(shell_blocks(sections(GUIDE, 2)["The example by hand"]))
    script = re.sub(r"^HOUSE_PORT=\d+", f"HOUSE_PORT={free_port()}", script, count=1, flags=re.MULTILINE)
    script = re.sub(r"^API_PORT=\d+", f"API_PORT={free_port()}", script, count=1, flags=re.MULTILINE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLHOUSE_") or k == "SKILLHOUSE_GUEST_CACHE"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    proc = subprocess.Popen(["bash", "-euo", "pipefail", "-c", f"set -x\n{script}"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=600)
    finally:
        with contextlib.suppress(ProcessLookupError):  # the house and serve, if a step failed before `kill`
            os.killpg(proc.pid, signal.SIGTERM)
    assert proc.returncode == 0, output
    assert "published hollowbrook 1.0.0" in output
    charges = re.findall(r'"charge_id":\s*"(ch_\d+)"', output.split("/charges")[-1])
    assert charges == ["ch_0001"], output  # the approved charge ran once
