"""Payloads of the source contract, as its documentation gives them, for the API tests to vary."""

from __future__ import annotations

import copy
from typing import Any


def tool_spec(tool_id: str = "github.custom", version: int = 1, state: str = "validated", **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "state": state,
        "tool_spec": {
            "tool_id": tool_id,
            "version": version,
            "tool_pack": "coding.v1",
            "name": "GitHub Custom",
            "description": "Custom coding skill tool",
            "execution_kind": "http",
            "integration_manifest": {
                "manifest_version": "coding.integration.v1",
                "integration_id": tool_id,
                "provider": "github",
                "status": "active",
                "tool_pack": "coding.v1",
                "capabilities": ["get_issue", "get_pull_request"],
            },
        },
    }
    body["tool_spec"].update(copy.deepcopy(changes))
    return body


def comms_tool_spec(tool_id: str = "resend.custom", state: str = "validated") -> dict[str, Any]:
    body = tool_spec(tool_id, state=state, tool_pack="comms.v1")
    body["tool_spec"]["integration_manifest"] = {
        "manifest_version": "comms.integration.v1",
        "integration_id": tool_id,
        "provider": "resend",
        "status": "active",
        "tool_pack": "comms.v1",
        "capabilities": ["send_email"],
    }
    return body


def skill_spec(skill_id: str = "github-coding-custom", version: int = 1, state: str = "validated",
               tools: list[dict[str, Any]] | None = None, **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "state": state,
        "skill_spec": {
            "skill_id": skill_id,
            "version": version,
            "name": "GitHub Coding Custom",
            "description": "Custom coding workflow skill",
            "instructions_markdown": "Use coding tools for issue workflows.",
            "allowed_tools": tools if tools is not None else [{"tool_id": "github.custom", "version": 1}],
        },
    }
    body["skill_spec"].update(changes)
    return body
