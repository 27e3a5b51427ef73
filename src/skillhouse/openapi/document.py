"""Reading an OpenAPI or Swagger document and following its local ``$ref``s.

A spec is JSON or YAML (JSON is tried first: it is much faster and some JSON specs hold escapes
YAML refuses). References point inside the file (``#/components/schemas/Pet``) or to files beside
it (``common.yaml#/Pet``); each file is read once. Nothing here converts: it only finds nodes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import yaml

from skillhouse.errors import CallerError
from skillhouse.json_types import JsonObject
from skillhouse.openapi import yaml_events

MAX_SPEC_BYTES = 64 * 1024 * 1024


class SpecError(CallerError):
    """The spec itself cannot be read (``invalid-spec``): the only failure that stops a whole import; the
    message says where and what to do. An operation that cannot become a tool is skipped and reported instead."""

    code = "invalid-spec"


if TYPE_CHECKING:
    from yaml import SafeLoader as _SafeLoader
else:
    # the C loader when libyaml is there (much faster on large specs), the pure-Python one otherwise
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _SpecLoader(_SafeLoader):
    """The C safe loader without timestamp resolution: ``2020-01-01`` stays the string the spec wrote."""


_SpecLoader.yaml_implicit_resolvers = {
    first: [(tag, regex) for tag, regex in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parse_spec_text(data: bytes, where: str) -> Any:
    """Parse ``data`` as JSON, or as YAML when it is not JSON; :class:`SpecError` when neither."""
    if len(data) > MAX_SPEC_BYTES:
        raise SpecError(f"{where}: the file is larger than {MAX_SPEC_BYTES} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SpecError(f"{where}: not UTF-8 (byte {exc.start})") from None
    if text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            pass  # YAML is a superset of JSON in practice; let it explain the problem
    try:
        try:
            return yaml_events.load(text)
        except yaml_events.Unsupported:
            return yaml.load(text, Loader=_SpecLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise SpecError(f"{where}{line}: malformed YAML or JSON: {exc.problem or exc.context}") from None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        raise SpecError(f"{where}: malformed YAML or JSON: {exc}") from None


@dataclass
class SpecDocument:
    """The root spec and any files its references reach, keyed by resolved path ("" for the root)."""

    root: JsonObject
    base: Path | None
    """Directory that relative file references start from; ``None`` for an in-memory spec."""
    files: JsonObject = field(default_factory=dict)

    @property
    def version(self) -> str:
        """``"2.0"``, ``"3.0"`` or ``"3.1"``."""
        if str(self.root.get("swagger", "")).startswith("2"):
            return "2.0"
        return "3.1" if str(self.root.get("openapi", "")).startswith("3.1") else "3.0"

    def resolve(self, ref: Any, doc: str) -> tuple[Any, str, str] | None:
        """The node ``ref`` (written in file ``doc``) points to, its file, and its canonical key.

        Returns ``None`` when the reference cannot be followed (bad pointer, missing file).
        """
        if not isinstance(ref, str):
            return None
        file_part, _, pointer = ref.partition("#")
        target_doc: str | None = doc
        if file_part:
            target_doc = self._load(file_part, doc)
        if target_doc is None:
            return None
        node = self.root if target_doc == "" else self.files[target_doc]
        for raw in pointer.split("/")[1:] if pointer else []:
            token = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return None
        return node, target_doc, f"{target_doc}#{pointer}"

    def deref(self, node: Any, doc: str, limit: int = 32) -> tuple[Any, str]:
        """Follow ``$ref`` chains from ``node`` to a node that is not a reference (or ``{}``)."""
        for _ in range(limit):
            if not (isinstance(node, dict) and "$ref" in node):
                return node, doc
            found = self.resolve(node["$ref"], doc)
            if found is None:
                return {}, doc
            node, doc, _ = found
        return {}, doc

    def _load(self, relative: str, from_doc: str) -> str | None:
        if self.base is None or "://" in relative:
            return None
        start = (self.base / from_doc).parent if from_doc else self.base
        path = (start / relative).resolve()
        key = str(path.relative_to(self.base.resolve())) if path.is_relative_to(self.base.resolve()) else str(path)
        if key in self.files:
            return key
        try:
            data = path.read_bytes()
            self.files[key] = parse_spec_text(data, str(path))
        except (OSError, SpecError):
            return None
        return key


def load_spec(path: str | Path) -> SpecDocument:
    """Read the spec at ``path``; :class:`SpecError` when it is not an OpenAPI or Swagger document."""
    source = Path(path)
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise SpecError(f"{source}: cannot read: {exc.strerror or exc}") from None
    return spec_from_data(parse_spec_text(data, str(source)), source.resolve().parent, str(source))


def spec_from_data(root: Any, base: Path | None = None, where: str = "spec") -> SpecDocument:
    """Wrap an already-parsed document; :class:`SpecError` when it is not OpenAPI 2.0/3.x."""
    if not isinstance(root, dict):
        raise SpecError(f"{where}: an OpenAPI document is a mapping at the top level")
    if not ("openapi" in root or "swagger" in root):
        raise SpecError(f"{where}: neither 'openapi' nor 'swagger' is set; is this an OpenAPI document?")
    version = str(root.get("openapi", root.get("swagger", "")))
    if not version.startswith(("2", "3.0", "3.1")):
        raise SpecError(f"{where}: OpenAPI version {version!r} is not supported (2.0, 3.0 and 3.1 are)")
    if not isinstance(root.get("paths", {}), dict):
        raise SpecError(f"{where}: 'paths' must be a mapping of paths to operations")
    return SpecDocument(root, base)
