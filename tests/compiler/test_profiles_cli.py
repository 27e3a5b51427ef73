"""``skillhouse tools PATH --provider P [--deferred]``."""

from __future__ import annotations

import json

from tests.compiler.provider_limits import problems
from tests.conftest import HOLLOWBROOK
from typer.testing import CliRunner

from skillhouse.cli import app

runner = CliRunner()


def test_tools_with_a_provider_prints_a_list_that_passes_its_limits() -> None:
    for profile in ("openai", "openai-strict", "anthropic", "gemini", "bedrock", "mcp"):
        result = runner.invoke(app, ["tools", str(HOLLOWBROOK), "--provider", profile])
        assert result.exit_code == 0, result.output
        assert problems(profile, json.loads(result.stdout)) == []


def test_tools_deferred_for_anthropic_defers_every_operation() -> None:
    result = runner.invoke(app, ["tools", str(HOLLOWBROOK), "--provider", "anthropic", "--deferred"])
    assert result.exit_code == 0, result.output
    listing = json.loads(result.stdout)
    assert listing[0]["type"] == "tool_search_tool_bm25_20251119"
    deferred = [t["name"] for t in listing if t.get("defer_loading")]
    assert len(deferred) == 5 and all(n.startswith("hollowbrook_") for n in deferred)
    assert problems("anthropic", listing) == []


def test_tools_deferred_for_a_provider_without_native_deferral_exits_2() -> None:
    result = runner.invoke(app, ["tools", str(HOLLOWBROOK), "--provider", "gemini", "--deferred"])
    assert result.exit_code == 2


def test_tools_with_an_unknown_provider_exits_2() -> None:
    assert runner.invoke(app, ["tools", str(HOLLOWBROOK), "--provider", "nope"]).exit_code == 2
