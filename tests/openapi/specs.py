"""Small OpenAPI documents for the wizard's tests, the vendored corpus (tests/corpus.py), and a helper that imports and compiles one."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from tests.corpus import CORPUS

from skillhouse.openapi import ImportResult, SpecDocument, import_openapi, load_spec, spec_from_data

SPECS = sorted(CORPUS.glob("*"))
assert SPECS, f"no corpus specs in {CORPUS}"  # an empty corpus fails at collection, it never skips


@functools.cache
def spec_of(path: Path) -> SpecDocument:
    """The corpus spec at ``path``, parsed once per test run."""
    return load_spec(path)


@functools.cache
def import_of(path: Path) -> ImportResult:
    """The import of the corpus spec at ``path``, done once per test run (tests only read it)."""
    return import_openapi(spec_of(path))


def openapi(paths: dict[str, Any], schemas: dict[str, Any] | None = None, version: str = "3.0.3") -> dict[str, Any]:
    return {
        "openapi": version,
        "info": {"title": "Test API", "version": "1.0", "description": "An API for tests."},
        "servers": [{"url": "https://api.test/v1"}],
        "paths": paths,
        "components": {"schemas": schemas or {}},
    }


def imported(spec: dict[str, Any], **options: Any) -> tuple[ImportResult, dict[str, dict[str, Any]]]:
    """Import ``spec``; the result and its compiled operations (release documents) by name."""
    result = import_openapi(spec_from_data(spec), **options)
    assert result.compiled is not None, result.report.lines(verbose=True)
    return result, {op["name"]: op for op in result.compiled.document["operations"]}


def outcome(result: ImportResult, name: str) -> Any:
    return next(o for o in result.report.outcomes if o.name == name)
