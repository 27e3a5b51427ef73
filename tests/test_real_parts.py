"""The real-parts plugin (tests/real_parts.py): the run's last line, and CI=true failing on a missing part.

Each case runs a tiny test directory in its own pytest process with the plugin loaded, on its own and
split between two pytest-xdist workers (as ``make test`` runs the suite), where each worker keeps its own
record and the controller adds them up.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.conftest import ROOT

TINY_TESTS = """
from tests.real_parts import BROWSER, WASM, ran, unavailable

def test_without_a_browser():
    unavailable(BROWSER, "none on this machine")

def test_on_the_guest():
    ran(WASM)
"""


# two tests on two workers: one worker sees the missing browser, the other the guest that ran
WORKERS = pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "2", "--dist", "load"]],
                                  ids=["one-process", "two-workers"])


def run_tiny_suite(tmp_path: Path, ci: bool, workers: list[str]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tests.real_parts"]\n')
    (tmp_path / "test_tiny.py").write_text(textwrap.dedent(TINY_TESTS))
    # only the plugins named: the installed ones (Schemathesis, Playwright, Hypothesis...) took most of a run's
    # time to import, in each worker too; the outer run's own options (PYTEST_ADDOPTS) are not the tiny suite's
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env.update(PYTHONPATH=str(ROOT), CI="true" if ci else "", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *workers, "--rootdir", str(tmp_path),
         str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )


@WORKERS
def test_a_missing_part_is_skipped_and_the_last_line_says_which_parts_ran(tmp_path: Path, workers: list[str]) -> None:
    done = run_tiny_suite(tmp_path, ci=False, workers=workers)
    assert done.returncode == 0, done.stdout
    assert "1 passed, 1 skipped" in done.stdout
    last = done.stdout.strip().splitlines()[-1]
    assert last == "real parts: PostgreSQL not used, browser skipped (none on this machine), wasm guest ran"


@WORKERS
def test_under_ci_a_missing_part_fails_the_run(tmp_path: Path, workers: list[str]) -> None:
    done = run_tiny_suite(tmp_path, ci=True, workers=workers)
    assert done.returncode == 1, done.stdout
    assert "browser is required under CI=true: none on this machine" in done.stdout
    last = done.stdout.strip().splitlines()[-1]
    assert last == "real parts: PostgreSQL not used, browser skipped (none on this machine), wasm guest ran"
