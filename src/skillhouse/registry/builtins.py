"""Built-in entries every tenant sees before it stores anything: ``github.primary`` (coding.v1),
``resend.primary`` (comms.v1) and one skill for each.

They live in code, not in rows, so no tenant can write them; a tenant's own row with the same id
shadows the built-in for that tenant only. Built-in skills are published: their releases are
compiled from their specs like any other.
"""

from __future__ import annotations

from skillhouse.registry.specs import AllowedTool, CodingManifest, CommsManifest, SkillSpec, ToolSpec

BUILTIN_TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        tool_id="github.primary",
        version=1,
        tool_pack="coding.v1",
        name="GitHub",
        description="Issues, pull requests and files of GitHub repositories.",
        execution_kind="http",
        integration_manifest=CodingManifest(
            manifest_version="coding.integration.v1",
            integration_id="github.primary",
            provider="github",
            status="active",
            tool_pack="coding.v1",
            capabilities=["get_issue", "list_issues", "add_issue_comment", "get_pull_request",
                          "list_pull_requests", "get_file", "get_repository"],
        ),
    ),
    ToolSpec(
        tool_id="resend.primary",
        version=1,
        tool_pack="comms.v1",
        name="Resend",
        description="Send transactional email through Resend and look up sent messages.",
        execution_kind="http",
        integration_manifest=CommsManifest(
            manifest_version="comms.integration.v1",
            integration_id="resend.primary",
            provider="resend",
            status="active",
            tool_pack="comms.v1",
            capabilities=["send_email", "get_email"],
        ),
    ),
)

BUILTIN_SKILL_SPECS: tuple[SkillSpec, ...] = (
    SkillSpec(
        skill_id="github-coding",
        version=1,
        name="GitHub coding",
        description="Work with GitHub issues and pull requests: read them, list them, comment on issues.",
        instructions_markdown=(
            "# GitHub coding\n\nUse the `github.primary` tools for issue and pull request workflows. Read an "
            "issue or pull request before commenting on it, and quote its number in every answer."
        ),
        allowed_tools=[AllowedTool(tool_id="github.primary", version=1)],
    ),
    SkillSpec(
        skill_id="resend-comms",
        version=1,
        name="Resend email",
        description="Send transactional email with Resend and check whether a sent message was delivered.",
        instructions_markdown=(
            "# Resend email\n\nUse the `resend.primary` tools to send email. Send a message once: check an "
            "earlier message's status with `get_email` rather than sending it again."
        ),
        allowed_tools=[AllowedTool(tool_id="resend.primary", version=1)],
    ),
)


def builtin_tool(tool_id: str, version: int | None = None) -> ToolSpec | None:
    """The built-in tool spec ``tool_id`` (at ``version`` when given)."""
    for spec in BUILTIN_TOOL_SPECS:
        if spec.tool_id == tool_id and (version is None or spec.version == version):
            return spec
    return None


def builtin_skill(skill_id: str) -> SkillSpec | None:
    return next((spec for spec in BUILTIN_SKILL_SPECS if spec.skill_id == skill_id), None)
