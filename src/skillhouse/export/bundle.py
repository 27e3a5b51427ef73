"""The Agent Skills bundle of a release: SKILL.md plus a ``references/`` file per operation.

Works from the release document alone (what the registry stores), so a stored release exports the
same as a package on disk. Each reference file holds the operation's prose and a generated
"The call" section: method, URL, where each argument goes and an example body, so the request shape
written once in the declaration still reaches agents that only read Agent Skills.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from skillhouse.export.examples import example_value
from skillhouse.json_types import JsonObject, JsonSchema, OperationDocument, ReleaseDocument

_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
REFERENCES = "references"
_CONTENT_TYPES = {"json": "application/json", "form": "application/x-www-form-urlencoded", "multipart": "multipart/form-data"}


def export_release(document: ReleaseDocument) -> dict[str, str]:
    """The bundle's files (path inside the bundle to text) for a release document."""
    operations = [op for op in document.get("operations", []) if isinstance(op, dict)]
    files: dict[str, str] = {}
    for op in operations:
        files[f"{REFERENCES}/{op['name']}.md"] = reference_file(op)
    for doc in document.get("documents", []):
        if isinstance(doc, dict) and isinstance(doc.get("path"), str):
            files[f"{REFERENCES}/{doc['path']}"] = str(doc.get("text", "")).rstrip() + "\n"
    files["SKILL.md"] = _manifest(document, operations)
    return files


def write_bundle(files: dict[str, str], out_dir: str | Path) -> Path:
    """Write ``files`` under ``out_dir`` (created); returns the directory."""
    root = Path(out_dir)
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def _manifest(document: ReleaseDocument, operations: list[OperationDocument]) -> str:
    front: JsonObject = {"name": document["skill"], "description": document["description"]}
    if document.get("license"):
        front["license"] = document["license"]
    if document.get("compatibility_note"):
        front["compatibility"] = document["compatibility_note"]
    metadata = {str(k): str(v) for k, v in (document.get("metadata") or {}).items()}
    metadata["version"] = str(document.get("version", metadata.get("version", "")))
    if document.get("digest"):
        metadata["release-digest"] = str(document["digest"])
    front["metadata"] = metadata
    head = yaml.dump(front, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1_000_000)
    parts = [str(document.get("instructions") or "").strip()]
    if operations:
        lines = [
            "## Operations",
            "",
            "Each operation is an HTTP request. Its reference file says how to make it: method, URL, "
            "where each argument goes, and an example body.",
            "",
        ]
        for op in operations:
            lines.append(f"- [`{op['name']}`]({REFERENCES}/{op['name']}.md): {op.get('description', '')}".rstrip(": "))
        parts.append("\n".join(lines))
    documents = [d["path"] for d in document.get("documents", []) if isinstance(d, dict) and isinstance(d.get("path"), str)]
    if documents:
        parts.append("## Documents\n\n" + "\n".join(f"- [{p}]({REFERENCES}/{p})" for p in documents))
    return f"---\n{head}---\n" + "\n\n".join(p for p in parts if p) + "\n"


def reference_file(op: OperationDocument) -> str:
    """One operation's reference: its prose, then "The call" generated from the declaration."""
    prose = str(op.get("prose") or op.get("description") or "").strip()
    return f"# {op['name']}\n\n{prose}\n\n{the_call(op)}"


def the_call(op: OperationDocument) -> str:
    """The "The call" section: the request this operation makes, from its declaration alone."""
    schema = op.get("schema") or {}
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    lines = ["## The call", "", f"`{op['method']} {op['url']}`", ""]
    arguments = op.get("arguments") or []
    if arguments:
        lines += ["| argument | sent in | as | required | type |", "|---|---|---|---|---|"]
        for arg in arguments:
            prop = properties.get(arg["name"], {})
            where = arg["in"] + (f" ({arg['style']}{', exploded' if arg.get('explode') else ''})" if arg.get("style") else "")
            if arg["name"] == op.get("payload"):
                where = "body (the whole body)"
            lines.append(
                f"| `{arg['name']}` | {where} | `{arg['wire']}` | {'yes' if arg['name'] in required else 'no'} | {_type_of(prop)} |"
            )
        if any(a["in"] == "path" for a in arguments):
            lines += ["", "Path arguments fill the `{name}` segments of the URL, percent-encoded."]
            if any(a.get("style") == "matrix" for a in arguments):
                lines[-1] += " A matrix one is written `;name=value` (a list `;name=a,b`, exploded `;name=a;name=b`)."
    headers = op.get("headers") or {}
    if headers:
        lines += ["", "Fixed headers: " + ", ".join(f"`{k}: {v}`" for k, v in sorted(headers.items())) + "."]
    body_args = [a for a in arguments if a["in"] == "body"]
    if body_args:
        encoding = op.get("encoding", "json")
        media = op.get("content_type") if encoding == "raw" else _CONTENT_TYPES.get(encoding, encoding)
        lines += ["", f"The body is `{media}`. An example:", ""]
        lines += ["```json" if encoding == "json" else "```", _example_body(op, body_args, properties, required), "```"]
    if op.get("identity"):
        lines += ["", "Repeating the call with the same " + ", ".join(f"`{n}`" for n in op["identity"]) + " does not act twice."]
    approval = op.get("approval")
    if isinstance(approval, dict):
        reason = f" ({approval['reason']})" if approval.get("reason") else ""
        lines += ["", f"A person approves this request before it is sent{reason}."]
    lines += ["", "Credentials are added on the way out; never put them in arguments."]
    return "\n".join(lines) + "\n"


def _example_body(op: OperationDocument, body_args: list[JsonObject], properties: dict[str, JsonSchema], required: set[str]) -> str:
    payload = op.get("payload")
    if payload is not None:
        value = example_value(properties.get(payload, {}))
    else:
        chosen = [a for a in body_args if a["name"] in required] or body_args[:3]
        value = {a["wire"]: example_value(properties.get(a["name"], {})) for a in chosen}
    if op.get("encoding", "json") == "json":
        return json.dumps(value, indent=2, ensure_ascii=False)
    if op.get("encoding") == "raw":
        return str(value)
    if isinstance(value, dict):
        return "\n".join(f"{k}={json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v}" for k, v in value.items())
    return json.dumps(value, ensure_ascii=False)


def _type_of(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array of {_type_of(schema['items'])}"
    if isinstance(kind, str):
        return kind
    if "enum" in schema:
        return "one of " + ", ".join(f"`{v}`" for v in schema["enum"][:5])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return " or ".join(dict.fromkeys(_type_of(s) for s in schema[key]))
    return "any"
