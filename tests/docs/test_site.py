"""The documentation site builds with ``mkdocs build --strict`` (a broken link, a page left out of the
nav or a failing hook fails it), fetches nothing, its HTTP API page lists every route of the app and its
configuration page every variable and field of ``Settings``."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

from docs.hooks.configuration import variable
from tests.docs.pages import DOCS, ROOT

from skillhouse.settings import Settings


def test_the_site_builds_strict_offline_with_every_route_and_every_page(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT / "src")}
    ran = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    pages = {p.stem for p in DOCS.glob("*.md")}
    built = {p.parent.name for p in site.glob("*/index.html")} | {"index"}
    assert pages <= built

    from docs.hooks.http_api import openapi_document

    api_page = (site / "http-api" / "index.html").read_text(encoding="utf-8")
    for path, item in openapi_document()["paths"].items():
        for method in item:
            assert f"{method.upper()} <code>{path}</code>" in api_page, (method, path)
    assert "see security" not in api_page  # every route's scope is in docs/security.md's table

    configuration = (site / "configuration" / "index.html").read_text(encoding="utf-8")
    assert "<!-- settings:" not in configuration
    for field in dataclasses.fields(Settings):
        named = variable(field)
        for name in (named.name, *named.also, field.name):
            assert name in configuration, (field.name, name)

    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        # nothing loaded from elsewhere at view time either: no web fonts, no remote scripts or styles
        assert not re.search(r'<(script|link)[^>]+(src|href)="https?://', text), html
