"""docs/publish-errors.md against the compiler: a section for exactly the codes in ``skillhouse.skill.errors``, and
each section's example package, checked with ``skillhouse check``, prints exactly the lines shown."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.docs.pages import blocks, page, sections

from skillhouse.skill import ALL_CODES

ERRORS = page("publish-errors.md")
INTRO = ERRORS.split("\n## ", 1)[0]
SECTIONS = {heading.strip("`"): text for heading, text in sections(ERRORS, 2).items()}


def test_the_page_has_a_section_for_exactly_the_codes_the_compiler_has() -> None:
    assert set(SECTIONS) == set(ALL_CODES)


@pytest.mark.parametrize("code", sorted(ALL_CODES))
def test_the_example_of_a_code_fails_check_with_the_lines_shown(code: str, tmp_path: Path) -> None:
    files = {b.title: b.text for b in blocks(INTRO) if b.title is not None}
    shown = [b for b in blocks(SECTIONS[code])]
    files.update({b.title: b.text for b in shown if b.title is not None})
    for title, text in files.items():
        (tmp_path / title).parent.mkdir(exist_ok=True)
        (tmp_path / title).write_text(text, encoding="utf-8")
    output = [b.text for b in shown if b.language == "text"]
    assert len(output) == 1, f"the section of {code} shows one output"
    command, *expected = output[0].splitlines()
    assert command == "$ skillhouse check shop"
    ran = subprocess.run([sys.executable, "-m", "skillhouse.cli", "check", "shop"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 1
    printed = [line for line in ran.stderr.splitlines() if line.startswith("shop/")]
    assert printed == expected
    assert code in {line.split(": ")[1] for line in printed}
