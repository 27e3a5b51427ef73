"""Splitting a single-file OpenAPI 3 spec into many files, the way teams keep theirs.

Each path item goes to ``paths/<first segment>/<n>.yaml``, each schema, parameter, request body and
response of ``components`` to ``<section>/<Name>.yaml``; every ``$ref`` (and discriminator mapping) is
rewritten relative to the file it ends up in, and a reference to anything left in the root file
(security schemes, examples) points back at ``openapi.yaml#/...``. The split spec says exactly what
the original says, so importing either must give the same tools: the tests hold the wizard to that,
and the benchmark measures the cost of the many files.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import yaml

SECTIONS = ("schemas", "parameters", "requestBodies", "responses")
ROOT_FILE = "openapi.yaml"
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def split_spec(spec: dict[str, Any], out: Path, suffix: str = ".yaml") -> Path:
    """Write ``spec`` (OpenAPI 3.x) as many files under ``out``; the root file's path."""
    components = dict(spec.get("components") or {})
    homes: dict[tuple[str, str], str] = {}
    for section in SECTIONS:
        for name in components.get(section) or {}:
            homes[(section, name)] = f"{section}/{_file_name(name)}{suffix}"
    files: dict[str, Any] = {}
    for (section, name), home in homes.items():
        files[home] = _rewritten(components[section][name], home, homes)
    root = {k: v for k, v in spec.items() if k not in ("paths", "components")}
    root_components = {k: v for k, v in components.items() if k not in SECTIONS}
    paths: dict[str, Any] = {}
    for index, (path, item) in enumerate((spec.get("paths") or {}).items()):
        first = _file_name(path.strip("/").split("/", 1)[0] or "root")
        home = f"paths/{first}/{index:05d}{suffix}"
        files[home] = _rewritten(item, home, homes)
        paths[path] = {"$ref": home}
    root["paths"] = paths
    if root_components:
        root["components"] = _rewritten(root_components, ROOT_FILE, homes)
    files[ROOT_FILE] = root
    for relative, data in files.items():
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if suffix == ".json":
            target.write_text(json.dumps(data), encoding="utf-8")
        else:
            target.write_text(yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return out / ROOT_FILE


def _file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def _target(ref: str, holder: str, homes: dict[tuple[str, str], str]) -> str:
    if not ref.startswith("#/"):
        return ref
    parts = ref[2:].split("/")
    here = os.path.dirname(holder) or "."
    if len(parts) >= 3 and parts[0] == "components" and parts[1] in SECTIONS:
        name = parts[2].replace("~1", "/").replace("~0", "~")
        home = homes.get((parts[1], name))
        if home is not None:
            rest = "/".join(parts[3:])
            return os.path.relpath(home, here) + (f"#/{rest}" if rest else "")
    return os.path.relpath(ROOT_FILE, here) + ref


_NAMED = ("properties", "patternProperties", "responses", "headers", "content", "links", "callbacks", "encoding")


def _mapped(value: Any, holder: str, homes: dict[tuple[str, str], str]) -> Any:
    """A discriminator mapping value: a reference, or a bare schema name (which names the root's components)."""
    if isinstance(value, str) and not re.search(r"[#/]|\.(json|ya?ml)$", value):
        value = "#/components/schemas/" + value
    return _target(value, holder, homes) if isinstance(value, str) else value


def _rewritten(node: Any, holder: str, homes: dict[tuple[str, str], str]) -> Any:
    if isinstance(node, list):
        return [_rewritten(v, holder, homes) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str):
            out[key] = _target(value, holder, homes)
        elif key == "discriminator" and isinstance(value, dict) and isinstance(value.get("mapping"), dict):
            mapping = {k: _mapped(v, holder, homes) for k, v in value["mapping"].items()}
            out[key] = {**value, "mapping": mapping}
        elif key in _NAMED and isinstance(value, dict):
            # a map of names (a property may be called "default" or "$ref"): each value is read by the rules
            out[key] = {k: _rewritten(v, holder, homes) for k, v in value.items()}
        elif key in ("example", "default", "enum", "const") or (key == "examples" and isinstance(value, list)):
            out[key] = value  # data: a "$ref" key in an example value is not a reference
        else:
            out[key] = _rewritten(value, holder, homes)
    return out
