"""The compile-side commands as a user runs them: check, compile, tools."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import HOLLOWBROOK, PackageFactory


def skillhouse(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillhouse.cli", *args], capture_output=True, text=True)


def test_check_passes_on_hollowbrook() -> None:
    result = skillhouse("check", str(HOLLOWBROOK))
    assert result.returncode == 0, result.stderr
    assert "5 operations" in result.stderr


def test_check_prints_every_error_as_file_line_code(make_package: PackageFactory) -> None:
    bad = make_package({"a.md": "---\noperation:\n  method: GET\n  url: https://x.test/a\n  body: [a]\n  optional: [b]\n---\n"})
    result = skillhouse("check", str(HOLLOWBROOK), str(bad))
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if ": " in line and line.startswith(str(bad))]
    assert [line.split(": ")[1] for line in lines] == ["body-on-get", "unknown-qualifier"]
    assert lines[0].startswith(f"{bad}/a.md:5: body-on-get: ")


def test_compile_writes_canonical_json_with_its_digest(tmp_path: Path) -> None:
    result = skillhouse("compile", str(HOLLOWBROOK))
    assert result.returncode == 0
    document = json.loads(result.stdout)
    assert document["digest"].startswith("sha256:")
    out = tmp_path / "release.json"
    assert skillhouse("compile", str(HOLLOWBROOK), "--out", str(out)).returncode == 0
    assert out.read_text() == result.stdout.rstrip("\n")


def test_compile_refuses_a_broken_package_with_exit_1(make_package: PackageFactory) -> None:
    bad = make_package({"SKILL.md": "---\nname: Bad\n---\n"})
    result = skillhouse("compile", str(bad))
    assert result.returncode == 1 and result.stdout == ""
    assert "invalid-skill-manifest" in result.stderr


def test_tools_lists_neutral_definitions() -> None:
    result = skillhouse("tools", str(HOLLOWBROOK))
    tools = json.loads(result.stdout)
    assert [t["name"] for t in tools][:2] == ["hollowbrook_cancel_booking", "hollowbrook_charge"]
    assert set(tools[0]) >= {"name", "description", "parameters"}


def test_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    result = skillhouse("check", str(tmp_path / "nope"))
    assert result.returncode == 1
    assert "invalid-skill-manifest" in result.stderr and "Traceback" not in result.stderr
