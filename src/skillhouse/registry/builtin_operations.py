"""The HTTP operations behind the built-in integrations' capabilities, declared as skill files.

A built-in skill's release carries, besides its generated ``SKILL.md`` and ``tools.md``, one
operation file per declared capability of each built-in tool it allows, so a turn that binds
``github-coding@1`` offers ``github-coding_get_issue`` and the runtime contract's
``tools/execute`` runs ``get_issue`` as exactly the request declared here, through the gateway
(credentials are bound per tenant and host, never written in a skill). Capabilities a manifest lists
without a declaration here cannot run yet and say so.
"""

from __future__ import annotations

from skillhouse.registry.specs import ToolSpec

_GITHUB = "https://api.github.com/repos/{owner}/{repo}"
_GITHUB_HEADERS = """\
  headers:
    Accept: application/vnd.github+json
    X-GitHub-Api-Version: "2022-11-28"
"""

OPERATIONS: dict[str, dict[str, str]] = {
    "github": {
        "get_issue": f"""\
---
operation:
  method: GET
  url: {_GITHUB}/issues/{{issue_number}}
{_GITHUB_HEADERS}---
Read one issue of a repository: title, state, body, labels and author.
""",
        "list_issues": f"""\
---
operation:
  method: GET
  url: {_GITHUB}/issues
  query: [state, labels, per_page, page]
  optional: [state, labels, per_page, page]
  integer: [per_page, page]
{_GITHUB_HEADERS}---
List a repository's issues (and pull requests); `state` is open, closed or all, `labels` comma-separated.
""",
        "add_issue_comment": f"""\
---
operation:
  method: POST
  url: {_GITHUB}/issues/{{issue_number}}/comments
  body: [body]
{_GITHUB_HEADERS}---
Add a comment (Markdown `body`) to an issue or pull request.
""",
        "get_pull_request": f"""\
---
operation:
  method: GET
  url: {_GITHUB}/pulls/{{pull_number}}
{_GITHUB_HEADERS}---
Read one pull request: title, state, branches, body and whether it is merged.
""",
        "get_repository": f"""\
---
operation:
  method: GET
  url: {_GITHUB}
{_GITHUB_HEADERS}---
Read a repository's description, default branch, visibility and counts.
""",
    },
    "resend": {
        "send_email": """\
---
operation:
  method: POST
  url: https://api.resend.com/emails
  body: [from, to, subject, html, text, reply_to]
  optional: [html, text, reply_to]
  list: [to]
  identity: [from, to, subject]
---
Send one email (`from` a verified sender, `to` up to 50 addresses, `html` and/or `text`); returns its id.

The identity is the sender, the recipients and the subject: sending the same message again returns the
first send instead of a second email.
""",
        "get_email": """\
---
operation:
  method: GET
  url: https://api.resend.com/emails/{email_id}
---
Read a sent email and its last delivery event.
""",
    },
}

PROVIDER_SKILLS = {"github": "github-coding", "resend": "resend-comms"}
"""The built-in skill whose release holds each provider's operations."""


def operation_files(tools: list[ToolSpec]) -> dict[str, str]:
    """The operation files for every declared capability of ``tools``, named ``<capability>.md``."""
    files: dict[str, str] = {}
    for tool in tools:
        declared = OPERATIONS.get(tool.integration_manifest.provider, {})
        for capability in tool.integration_manifest.capabilities:
            if capability in declared:
                files[f"{capability}.md"] = declared[capability]
    return files
