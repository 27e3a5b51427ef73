"""Every profile over the real OpenAPI corpus (tests/data/openapi): through the wizard's tools, and over
the JSON Schemas in each spec's components (local ``$ref`` resolved, recursion cut as the compiler
cuts it), each offered as a tool's argument."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.compiler.provider_limits import problems
from tests.corpus import CORPUS

from skillhouse.compiler import compact_size
from skillhouse.compiler.profiles import PROFILES, adapt, provider_tools, verdict
from skillhouse.openapi import import_openapi

SPECS = sorted(CORPUS.glob("*.json")) + sorted(CORPUS.glob("*.yaml"))
# parameters-style declares every schema inline: it has no components to offer as tools
WITH_COMPONENTS = [p for p in SPECS if p.name != "readme-3.0-parameters-style.json"]
SIZE_CAP = 24_576
_NODE_BUDGET = 20_000
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CACHE: dict[Path, Any] = {}


def _load(path: Path) -> Any:
    if path not in _CACHE:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else yaml.load(text, Loader=_Loader)
        # YAML dates and the like become the strings JSON would carry.
        _CACHE[path] = json.loads(json.dumps(data, default=str))
    return _CACHE[path]


class _TooBig(Exception):
    pass


def _resolve(node: Any, spec: Any, stack: tuple[str, ...], budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            if ref in stack:
                return {"type": "object"}
            target: Any = spec
            for part in ref[2:].split("/"):
                target = (
                    target.get(part.replace("~1", "/").replace("~0", "~"), {})
                    if isinstance(target, dict)
                    else {}
                )
            return _resolve(target, spec, (*stack, ref), budget)
        return {k: _resolve(v, spec, stack, budget) for k, v in node.items() if not k.startswith("x-")}
    if isinstance(node, list):
        return [_resolve(item, spec, stack, budget) for item in node]
    return node


def _component_schemas(spec: Any) -> Iterator[tuple[str, Any]]:
    components = spec.get("components", {}).get("schemas") or spec.get("definitions") or {}
    for name, schema in components.items():
        ref = f"#/components/schemas/{name}" if "components" in spec else f"#/definitions/{name}"
        try:
            resolved = _resolve(schema, spec, (ref,), [_NODE_BUDGET])
        except _TooBig:
            continue
        if compact_size(resolved) <= SIZE_CAP:
            yield name, resolved


def _as_tool(name: str, schema: Any) -> dict[str, Any]:
    return {
        "name": f"corpus_{name}",
        "description": f"Send one {name}.",
        "parameters": {
            "type": "object",
            "properties": {"value": schema, "maybe": schema},
            "required": ["value"],
            "additionalProperties": False,
        },
    }


@pytest.mark.parametrize("spec_path", WITH_COMPONENTS, ids=[p.name for p in WITH_COMPONENTS])
def test_every_profile_fits_its_provider_limits_on_the_corpus_component_schemas(spec_path: Path) -> None:
    tools = [_as_tool(name, schema) for name, schema in _component_schemas(_load(spec_path))]
    assert tools, f"{spec_path.name} has no component schemas under the size cap"
    for profile in PROFILES:
        listing = provider_tools(tools, profile)
        assert problems(profile, listing) == []
        for tool in tools:
            entry = adapt(tool, profile).report()
            # the compatibility report's entry, made without the wire form, says the same
            assert verdict(tool, profile) == entry
            assert entry["status"] in ("ok", "adapted", "refused")
            if entry["status"] == "adapted":
                assert all(
                    change["path"].startswith("/parameters") or change["path"] in ("/name", "/description")
                    for change in entry["changes"]
                )


@pytest.mark.parametrize("spec_path", SPECS, ids=[p.name for p in SPECS])
def test_every_profile_fits_its_provider_limits_on_the_wizards_tools_for_the_corpus(spec_path: Path) -> None:
    result = import_openapi(spec_path, server="https://api.example.test")
    assert result.compiled is not None
    operations = result.compiled.operations
    assert operations, f"the wizard made no operations from {spec_path.name}"
    from skillhouse.compiler import neutral_tool

    tools = [neutral_tool(op) for op in operations]
    for profile in PROFILES:
        assert problems(profile, provider_tools(tools, profile)) == []
        report = result.compiled.document["compatibility"]["profiles"][profile]
        assert report == {str(tool["name"]): adapt(tool, profile).report() for tool in tools}

