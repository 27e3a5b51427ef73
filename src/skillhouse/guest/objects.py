"""``read_object`` for skill paths, and telling a ``fetch_url`` of a skill file to use ``read_object``.

``skill/<name>`` is the skill's manifest: its instructions, the operations it lists (by the name
``load_tools`` accepts) and its documents. ``skill/<name>/<file>.md`` is one file: a document as
written, or an operation's prose followed by a generated "The call" summary of its declaration.
Other paths go to the host. A model that fetches a skill file from an invented host
(``http://hollowbrook/list_rooms.md``, ``http://skills/...``) is told where to read it instead.

Standard library only: this runs inside the WebAssembly guest.
"""

from __future__ import annotations

import difflib
from typing import Any
from urllib.parse import unquote, urlsplit

from skillhouse.guest.catalogue import BoundSkill, Catalogue
from skillhouse.guest.values import JsonObject, OperationDocument

SKILL_PREFIX = "skill/"
_SKILL_HOSTS = ("skill", "skills")


def error(code: str, message: str, **extra: Any) -> JsonObject:
    return {"error": {"code": code, "message": message, **extra}}


def read_skill_object(catalogue: Catalogue, path: str) -> JsonObject | None:
    """The answer for a ``skill/...`` path, or ``None`` when ``path`` is not one (the host reads it)."""
    clean = path.strip().lstrip("/")
    if not clean.startswith(SKILL_PREFIX) and clean != "skill":
        return None
    parts = [p for p in clean.removeprefix("skill").split("/") if p]
    if not parts:
        return error(
            "not-found", "name a skill: " + ", ".join(f"skill/{s}" for s in sorted(catalogue.skills))
        )
    skill = catalogue.skills.get(parts[0])
    if skill is None:
        near = difflib.get_close_matches(parts[0], list(catalogue.skills), n=3)
        hint = "; did you mean " + " or ".join(f"skill/{n}" for n in near) + "?" if near else ""
        return error("not-found", f"no skill {parts[0]!r} is bound to this turn{hint}")
    if len(parts) == 1 or parts[1:] == ["SKILL.md"]:
        return {"ok": manifest_text(catalogue, skill)}
    file_name = "/".join(parts[1:])
    text = file_text(skill, file_name)
    if text is None:
        files = _file_names(skill)
        near = difflib.get_close_matches(file_name, files, n=3)
        hint = "; did you mean " + " or ".join(f"skill/{skill.name}/{n}" for n in near) + "?" if near else ""
        return error("not-found", f"skill {skill.name} has no file {file_name!r}{hint}")
    return {"ok": text}


def manifest_text(catalogue: Catalogue, skill: BoundSkill) -> str:
    lines = [
        f"# {skill.name} {skill.version}".rstrip(),
        "",
        skill.description,
        "",
        skill.instructions.strip(),
        "",
    ]
    if skill.operations:
        lines += ["## Operations (load them with load_tools, then call them)", ""]
        lines += [
            f"- {catalogue.listed_name(op['tool_name'])}: {op['description']}" for op in skill.operations
        ]
        lines.append("")
    lines += ["## Files (read them with read_object)", ""]
    lines += [f"- skill/{skill.name}/{name}" for name in _file_names(skill)]
    return "\n".join(lines).rstrip() + "\n"


def file_text(skill: BoundSkill, file_name: str) -> str | None:
    for op in skill.operations:
        if op["file"] == file_name:
            return str(op["prose"]).rstrip() + "\n\n" + call_summary(op)
    for doc in skill.documents:
        if doc["path"] == file_name:
            return str(doc["text"])
    return None


def call_summary(op: OperationDocument) -> str:
    """A short "The call" section generated from the declaration (the tool builds the request)."""
    lines = [
        "## The call",
        "",
        f"`{op['method']} {op['url']}`, built for you by the tool `{op['tool_name']}`.",
    ]
    required = set(op["schema"].get("required", []))
    for argument in op["arguments"]:
        where = {
            "path": "in the path",
            "query": "in the query",
            "header": "as a header",
            "body": "in the body",
        }[argument["in"]]
        wire = f" (sent as `{argument['wire']}`)" if argument["wire"] != argument["name"] else ""
        need = "required" if argument["name"] in required else "optional"
        lines.append(f"- `{argument['name']}`: {where}{wire}, {need}")
    if op.get("approval"):
        lines.append("- A person approves this call before it is sent.")
    return "\n".join(lines) + "\n"


def _file_names(skill: BoundSkill) -> list[str]:
    return [
        "SKILL.md",
        *sorted([str(op["file"]) for op in skill.operations] + [str(d["path"]) for d in skill.documents]),
    ]


def skill_path_for_url(catalogue: Catalogue, url: str) -> str | None:
    """The ``read_object`` path a fetch of ``url`` was after, when it was after a skill file."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if host and host in _operation_hosts(catalogue):
        return None  # a real API the turn binds, whatever its paths look like
    segments = [unquote(s) for s in parts.path.split("/") if s]
    if not parts.scheme and not parts.netloc and url.strip().lstrip("/").startswith(SKILL_PREFIX):
        return url.strip().lstrip("/")
    if segments[:1] == ["skill"] or segments[:1] == ["skills"]:
        return "skill/" + "/".join(segments[1:])
    skill_hosts = {*_SKILL_HOSTS, *(s.lower() for s in catalogue.skills)}
    if host in skill_hosts:
        named = host if host in catalogue.skills else None
        return f"skill/{named}/{'/'.join(segments)}".rstrip("/") if named else "skill/" + "/".join(segments)
    if segments:
        last = segments[-1]
        for skill in catalogue.skills.values():
            if last in _file_names(skill):
                return f"skill/{skill.name}/{last}"
    return None


def _operation_hosts(catalogue: Catalogue) -> set[str]:
    hosts: set[str] = set()
    for op in catalogue.operations.values():
        try:
            hosts.add((urlsplit(str(op["url"])).hostname or "").lower())
        except ValueError:
            continue
    return hosts


def fetch_refusal(catalogue: Catalogue, url: str) -> JsonObject | None:
    """A ``use-read-object`` refusal when ``url`` reaches for a skill file, else ``None``."""
    path = skill_path_for_url(catalogue, url)
    if path is None:
        return None
    return error(
        "use-read-object",
        f'skill files are not on the web; read it with read_object({{"path": "{path}"}}), '
        "and call an operation through its tool (load_tools first)",
        path=path,
    )
