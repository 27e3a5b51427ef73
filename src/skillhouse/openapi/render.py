"""The text of the files the wizard writes: SKILL.md, one operation file each, ``types.json``.

The operation block is YAML; its schema is a block of JSON (ASCII only, so no character YAML
refuses can reach the parser). Prose comes from the operation's summary and description.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from skillhouse.json_types import JsonObject, JsonSchema
from skillhouse.openapi.json_block import indented_json
from skillhouse.openapi.operations import BuiltOperation
from skillhouse.skill.frontmatter import Frontmatter, MarkdownFile

_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
MAX_DESCRIPTION = 1024


def clean_text(value: Any) -> str:
    """``value`` as text that encodes as UTF-8 (lone surrogates replaced) without NUL characters."""
    text = value if isinstance(value, str) else ""
    return text.encode("utf-8", "replace").decode("utf-8").replace("\x00", "")


def skill_name(title: str) -> str:
    """A skill name from the spec's title: lowercase letters, digits and single hyphens, at most 64."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:64].strip("-")
    return slug or "api"


def operation_markdown(filename: str, built: BuiltOperation, summary: Any, description: Any, deprecated: bool) -> MarkdownFile:
    """The operation file ``filename``: frontmatter with the block and its JSON schema, then the prose.

    It comes with the frontmatter data the reader would parse from the text, so the wizard's compile
    need not parse what it has just written.
    The data is what the text was rendered from: the block, and the schema as its JSON text (the
    literal block scalar gives back exactly that text). Key lines are not known without parsing, so
    they are left empty: a compile that reports errors reads the text again to place them.
    """
    block = built.block()
    schema = indented_json(built.schema)
    # ASCII JSON has no line break but "\n" (the others are escaped), so this indents every line.
    schema_lines = "    " + schema.replace("\n", "\n    ")
    prose = _prose(clean_text(summary).strip(), clean_text(description).strip(), built)
    if deprecated:
        prose += "\n\nDeprecated by the API provider."
    head = f"---\n{_dump({'operation': block})}  schema: |-\n{schema_lines}\n---\n"
    body = f"{prose}\n"
    front = Frontmatter({"operation": {**block, "schema": schema}}, {}, 1, body, head.count("\n") + 1, {})
    return MarkdownFile(filename, head + body, front)


def _prose(summary: str, description: str, built: BuiltOperation) -> str:
    first = " ".join(summary.split())
    if not first and not description:
        return f"{built.method} {built.url}"
    if not first:
        return description
    if not description or description.startswith(first):
        return description or first
    return f"{first}\n\n{description}"


def manifest_file(name: str, info: JsonObject, base_urls: list[str], security: list[str], listing: list[tuple[str, str]]) -> str:
    """SKILL.md: Agent Skills frontmatter and instructions drawn from the spec's ``info``."""
    title = " ".join(clean_text(info.get("title")).split()) or name
    about = clean_text(info.get("description")).strip()
    first = next((p for p in re.split(r"\n\s*\n", about) if p.strip()), "")
    description = " ".join(first.split()) or f"Call the {title} API: {len(listing)} operations."
    if not description.lower().startswith(title.lower()):
        description = f"{title}: {description}"
    if len(description) > MAX_DESCRIPTION:
        description = description[: MAX_DESCRIPTION - 3].rstrip() + "..."
    metadata = {"source": "openapi"}
    version = info.get("version")
    if isinstance(version, str | int | float) and not isinstance(version, bool):
        metadata["version"] = clean_text(str(version))[:64]
    front = _dump({"name": name, "description": description, "metadata": metadata})
    parts = [f"# {title}", about] if about else [f"# {title}"]
    if base_urls:
        parts.append("Requests go to " + ", ".join(f"`{u}`" for u in base_urls) + ".")
    if security:
        parts.append(
            "The API authenticates with " + ", ".join(security) + ". Credentials are bound to the host in the "
            "gateway; never ask for them or put them in arguments."
        )
    if listing:
        parts.append("## Operations\n\n" + "\n".join(f"- `{stem}`: {summary}" if summary else f"- `{stem}`" for stem, summary in listing))
    return f"---\n{front}---\n" + "\n\n".join(parts) + "\n"


def types_file(types: dict[str, JsonSchema]) -> str:
    return indented_json(types, sort_keys=True) + "\n"


def _dump(data: JsonObject) -> str:
    fast = _block_yaml(data)
    if fast is not None:
        return fast
    return str(yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1_000_000))


# PyYAML's dumper builds events and runs its resolver on every scalar: about a fifth of an import's
# rendering. The operation blocks it dumps are nearly always a mapping of mappings, lists and names
# whose text is known without it: a string PyYAML writes plain (it starts with a letter, "/" or "_",
# has no space, no "#", no character YAML reads specially at its start, does not end in ":", and is
# none of the words YAML 1.1 reads as a boolean or null), an int, a bool. Anything else is dumped by
# PyYAML, so the text is always byte for byte its own (a test holds the two equal on generated data).
_SAFE_PLAIN = re.compile(r"[A-Za-z/_][A-Za-z0-9_./{}:@!$&'()*+,;=%~?-]{0,199}")
_NOT_STRINGS = frozenset({"yes", "no", "true", "false", "on", "off", "null", "y", "n"})
_SAFE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,99}")


def _plain(value: object) -> str | None:
    """``value`` as PyYAML writes it plain, or ``None`` when this cannot be sure of it."""
    if type(value) is str:
        if _SAFE_PLAIN.fullmatch(value) and value[-1] != ":" and value.lower() not in _NOT_STRINGS:
            return value
        return None
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return str(value)
    return None


def _block_yaml(data: JsonObject, indent: str = "") -> str | None:
    """``data`` as ``yaml.dump(data, default_flow_style=False, sort_keys=False)`` writes it, or ``None``."""
    lines: list[str] = []
    for key, value in data.items():
        if type(key) is not str or not _SAFE_KEY.fullmatch(key) or key.lower() in _NOT_STRINGS:
            return None
        kind = type(value)
        if kind is dict:
            if not value:
                lines.append(f"{indent}{key}: {{}}\n")
                continue
            inner = _block_yaml(value, indent + "  ")
            if inner is None:
                return None
            lines.append(f"{indent}{key}:\n{inner}")
        elif kind is list:
            if not value:
                lines.append(f"{indent}{key}: []\n")
                continue
            lines.append(f"{indent}{key}:\n")
            for item in value:
                text = _plain(item)
                if text is None:
                    return None
                lines.append(f"{indent}- {text}\n")
        else:
            text = _plain(value)
            if text is None:
                return None
            lines.append(f"{indent}{key}: {text}\n")
    return "".join(lines)
