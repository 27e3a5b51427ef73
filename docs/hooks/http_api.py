"""MkDocs hook: the HTTP API page's route list, generated from the app's own OpenAPI document.

``docs/http-api.md`` holds the marker ``<!-- openapi-routes -->``; at build time it is replaced by one
section per route (method, path, summary, least scope, body, answers) read from ``create_app().openapi()``,
so the page cannot drift from the code. The app is built over a throwaway SQLite database; nothing is
served and nothing is fetched.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

MARKER = "<!-- openapi-routes -->"
PAGE = "http-api.md"
METHODS = ("get", "put", "post", "delete", "patch")
DOCS = Path(__file__).resolve().parents[1]
SCOPE_ROW = re.compile(r"^\| (GET|PUT|POST|DELETE|PATCH) \| `([^`]+)` \| ([^|]+) \|$", re.MULTILINE)

_cache: dict[str, Any] = {}


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of the app as ``skillhouse serve`` builds it."""
    if "doc" not in _cache:
        from skillhouse.api.app import create_app
        from skillhouse.settings import Settings

        with tempfile.TemporaryDirectory() as scratch:
            settings = Settings(data_dir=Path(scratch), database_url=f"sqlite:///{scratch}/openapi.db",
                                guest="inprocess")
            app = create_app(settings)
            _cache["doc"] = app.openapi()
            app.state.database.dispose()
    doc: dict[str, Any] = _cache["doc"]
    return doc


def scopes() -> dict[tuple[str, str], str]:
    """(METHOD, path) to least scope, from the table in docs/security.md (checked against the routes)."""
    text = (DOCS / "security.md").read_text(encoding="utf-8")
    return {(m, p): scope.strip() for m, p, scope in SCOPE_ROW.findall(text)}


def _schema_name(schema: dict[str, Any]) -> str:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return ref.rsplit("/", 1)[-1]
    if "items" in schema and isinstance(schema["items"], dict):
        return f"list of {_schema_name(schema['items'])}"
    return str(schema.get("type", "object"))


def _resolved(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
        found: dict[str, Any] = doc.get("components", {}).get("schemas", {}).get(ref.rsplit("/", 1)[-1], {})
        return found
    return schema


def _fields(doc: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """A table of a body schema's top-level fields: name, type, required, description."""
    resolved = _resolved(doc, schema)
    properties = resolved.get("properties", {})
    if not properties:
        return []
    required = set(resolved.get("required", []))
    lines = ["| field | type | required | description |", "|---|---|---|---|"]
    for name, prop in properties.items():
        kinds = [_schema_name(p) for p in prop.get("anyOf", [])] or [_schema_name(prop)]
        description = " ".join(str(prop.get("description", "")).split()).replace("|", "\\|")
        lines.append(f"| `{name}` | {' or '.join(kinds)} | {'yes' if name in required else 'no'} | {description} |")
    return [*lines, ""]


def render_routes(doc: dict[str, Any], least_scope: dict[tuple[str, str], str]) -> str:
    """Markdown: a table of every route, then a section per route with its parameters, body and answers."""
    rows: list[str] = ["| method | path | summary | least scope |", "|---|---|---|---|"]
    sections: list[str] = []
    for path, item in doc["paths"].items():
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            upper = method.upper()
            summary = str(op.get("summary", "")).replace("|", "\\|")
            scope = least_scope.get((upper, path), "see [security](security.md#token-scopes)")
            anchor = re.sub(r"[^a-z0-9]+", "-", f"{method} {path}".lower()).strip("-")
            rows.append(f"| {upper} | [`{path}`](#{anchor}) | {summary} | {scope} |")
            lines = [f"### {upper} `{path}` {{#{anchor}}}", ""]
            description = str(op.get("description", "")).strip()
            if description:
                lines += [description, ""]
            lines += [f"Least scope: {scope}.", ""]
            params = op.get("parameters", [])
            if params:
                lines += ["| parameter | in | required | type |", "|---|---|---|---|"]
                for p in params:
                    lines.append(f"| `{p['name']}` | {p['in']} | {'yes' if p.get('required') else 'no'} | "
                                 f"{_schema_name(p.get('schema', {}))} |")
                lines.append("")
            body = op.get("requestBody", {}).get("content", {})
            for media, content in body.items():
                schema = content.get("schema", {})
                lines += [f"Body ({media}): `{_schema_name(schema)}`", ""]
                lines += _fields(doc, schema)
            lines += ["Answers:", ""]
            lines += [f"- `{code}` {str(r.get('description', '')).strip()}" for code, r in op.get("responses", {}).items()]
            lines.append("")
            sections.append("\n".join(lines))
    return "\n".join(rows) + "\n\n## Each route\n\n" + "\n".join(sections)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE} has lost its marker {MARKER}; the route list has nowhere to go")
    return markdown.replace(MARKER, render_routes(openapi_document(), scopes()))
