"""Provider profiles: the neutral tool definitions adapted to what each model provider accepts.

Placeholder interface until the profiles land (issue 3): every tool is reported per profile.
"""

from __future__ import annotations

from typing import Any

PROFILES = ("openai", "openai-strict", "anthropic", "gemini", "bedrock", "mcp")


def compatibility_report(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """Per profile and tool: ``ok``, ``adapted`` (with what changed) or ``refused`` (with why)."""
    return {"profiles": {p: {t["name"]: {"status": "ok"} for t in tools} for p in PROFILES}}
