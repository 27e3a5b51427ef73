"""docs/python.md's examples run, in order, as one script (from a directory with the repository's examples
and the Petstore spec the page names)."""

from __future__ import annotations

import lzma
import os
import re
from pathlib import Path

import pytest
from tests.docs.pages import ROOT, page


def test_the_python_page_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    code = "\n".join(re.findall(r"^```python\n(.*?)^```$", page("python.md"), re.MULTILINE | re.DOTALL))
    os.symlink(ROOT / "examples", tmp_path / "examples")
    spec = lzma.decompress((ROOT / "tests" / "data" / "openapi" / "petstore-v3.yaml.xz").read_bytes())
    (tmp_path / "petstore.yaml").write_bytes(spec)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/python.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "sha256:" in printed and "hollowbrook_list_rooms" in printed
    assert "min_guests=2" in printed and "invalid-arguments" in printed
    assert any((tmp_path / "skills").glob("*/SKILL.md"))
