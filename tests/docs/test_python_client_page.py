"""docs/python-client.md's examples run, in order, as one script against a real API on loopback with the
Hollowbrook house behind it (``URL`` and ``TOKEN`` become the server's), from the repository's root."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.client.served import serving
from tests.docs.pages import ROOT, page


def test_the_python_client_page_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code = "\n".join(re.findall(r"^```python\n(.*?)^```$", page("python-client.md"), re.MULTILINE | re.DOTALL))
    monkeypatch.chdir(ROOT)
    with serving(tmp_path) as served:
        code = re.sub(r'^URL = ".*"$', f'URL = "{served.url}"', code, count=1, flags=re.MULTILINE)
        code = re.sub(r'^TOKEN = ".*"$', f'TOKEN = "{served.tokens["admin"]}"', code, count=1, flags=re.MULTILINE)
        exec(compile(code, "docs/python-client.md", "exec"), {})
        assert len(served.house.house.bookings()) == 1 and len(served.house.house.charges()) == 1
    printed = capsys.readouterr().out
    assert "hollowbrook 1.0.0 sha256:" in printed and "201 True" in printed and "201 used" in printed
    assert "invalid-arguments" in printed and "approval-required apr_" in printed
    assert "hollowbrook_charge ['amount_cents', 'booking_id', 'description']" in printed and "('https://api.example.com', 'x-api-key', 'header')" in printed
    assert "hollowbrook_charge" in printed.splitlines()[-1]  # the async client's tools, in Anthropic's format
