"""Where a spec's ``$ref``s may lead, and why one could not be followed.

A reference names a node in the same file (``#/components/schemas/Pet``), in a file beside it
(``schemas/pet.yaml#/Pet``, relative to the file that holds the reference) or on the network
(``https://example.com/common.yaml#/Pet``). Local files are read only inside the spec's directory
tree, or a root the user allowed; remote documents only when the user allowed them (and a remote
document's references never reach local files). Every refusal and failure is a :class:`RefProblem`
with a code, the file that holds the reference and the reference as written, so the report can say
exactly which one to fix. Pure: reading files and fetching is the document's (``document.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from skillhouse.records import record

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

Fetch = Callable[[str], bytes]
"""Reads a remote document's bytes (``--allow-remote-refs``); raises :class:`OSError` when it cannot."""

# Problem codes (asserted by tests; the message says the rest).
OUTSIDE_TREE = "ref-outside-tree"
REMOTE_REFUSED = "ref-remote-refused"
REMOTE_FAILED = "ref-remote-failed"
MISSING_FILE = "ref-missing-file"
UNREADABLE_FILE = "ref-unreadable-file"
BAD_POINTER = "ref-bad-pointer"
NOT_A_REFERENCE = "ref-not-a-string"
UNSUPPORTED = "ref-unsupported"
CYCLE = "ref-cycle"
WRONG_KIND = "ref-wrong-kind"
TOO_MANY_FILES = "ref-too-many-files"

MAX_FILES = 16384
"""Distinct documents one spec may reach; a generated chain of files cannot exhaust memory."""


@record(frozen=True)
class RefPolicy:
    """Where file references may lead beyond the spec's own directory tree, and whether remote ones are fetched."""

    roots: tuple[Path, ...] = ()
    """Further directories (``--allow-ref-root``) whose files references may read."""
    fetch: Fetch | None = None
    """Fetches ``http(s)`` references; ``None`` (the default) refuses them."""


@record(frozen=True)
class RefProblem:
    """A reference that could not be followed: what, where it is written, and why."""

    code: str
    file: str
    """The document holding the reference: a path relative to the spec's directory, or a URL."""
    ref: str
    message: str
    at: str = ""
    """The JSON pointer, in ``file``, of the object holding the reference (``""`` when not known: inside a schema)."""

    def text(self) -> str:
        where = f"{self.file}#{self.at}" if self.at else self.file
        return f"{where}: $ref {self.ref[:160]!r} {self.message} [{self.code}]"

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "file": self.file, "at": self.at, "ref": self.ref, "message": self.message}


class Spot(tuple[str, str]):
    """Where a node of the spec is: its document and its JSON pointer there.

    A pair, written out rather than a ``typing.NamedTuple``: with postponed annotations that compiles
    each field's annotation at import (the first compile of a process costs about a millisecond).
    """

    __slots__ = ()

    def __new__(cls, doc: str, at: str = "") -> Spot:
        return tuple.__new__(cls, (doc, at))

    @property
    def doc(self) -> str:
        return self[0]

    @property
    def at(self) -> str:
        """The JSON pointer in :attr:`doc` (``""``: the document itself)."""
        return self[1]

    def __repr__(self) -> str:
        return f"Spot(doc={self[0]!r}, at={self[1]!r})"

    def child(self, *tokens: str | int) -> Spot:
        """The spot of a node under this one (tokens escaped as JSON pointers escape them)."""
        doc, at = self
        for token in tokens:
            text = str(token)
            at += "/" + (text.replace("~", "~0").replace("/", "~1") if "~" in text or "/" in text else text)
        return tuple.__new__(Spot, (doc, at))


@record(frozen=True)
class Target:
    """Where a reference's document part points: a local file or a URL, under the key the document caches it by."""

    key: str
    path: Path | None = None
    url: str | None = None


def is_remote(key: str) -> bool:
    return key.startswith(("http://", "https://"))


def locate(document_part: str, holder: str, base: Path | None, spec_file: Path | None, policy: RefPolicy) -> Target | RefProblem:
    """The document ``document_part`` (the part of a ``$ref`` before ``#``, written in ``holder``) names.

    ``holder`` is ``""`` for the spec file itself, a path relative to ``base`` (the spec's directory),
    an absolute path (a file under an allowed root) or a URL.
    """
    where = holder or (spec_file.name if spec_file is not None else "spec")

    def problem(code: str, message: str) -> RefProblem:
        return RefProblem(code, where, document_part, message)

    scheme = urlsplit(document_part).scheme.lower()
    if is_remote(holder) or scheme in ("http", "https"):
        url = urljoin(holder, document_part) if is_remote(holder) else document_part
        if not is_remote(url):
            return problem(UNSUPPORTED, "leaves a remote document for a local file, which is never followed")
        if policy.fetch is None:
            return problem(REMOTE_REFUSED, "is on the network; remote references are followed only with --allow-remote-refs")
        return Target(url.split("#", 1)[0], url=url.split("#", 1)[0])
    if len(scheme) > 1:  # "C:" is a drive letter, not a scheme
        return problem(UNSUPPORTED, f"uses the {scheme}: scheme; only relative files and http(s) (with --allow-remote-refs) are followed")
    if base is None:
        return problem(UNSUPPORTED, "names a file, but the spec was not read from a file, so there is no directory to read it from")
    tree = base.resolve()
    holder_dir = tree if not holder else (tree / holder).parent
    try:
        path = (holder_dir / unquote(document_part)).resolve()
    except (ValueError, OSError) as exc:  # a NUL byte, a name too long for the system
        return problem(UNSUPPORTED, f"is not a usable file name ({exc})")
    if spec_file is not None and path == spec_file.resolve():
        return Target("")
    if path.is_relative_to(tree):
        return Target(path.relative_to(tree).as_posix(), path=path)
    for root in policy.roots:
        if path.is_relative_to(root.resolve()):
            return Target(str(path), path=path)
    outside = os.path.relpath(path, tree)
    return problem(OUTSIDE_TREE, f"leads outside the spec's directory, to {outside}; allow its directory with --allow-ref-root DIR")


def walk_pointer(node: Any, pointer: str) -> tuple[Any, str | None]:
    """The node at JSON pointer ``pointer`` (already URL-decoded or not) under ``node``, or the first missing token."""
    for raw in pointer.split("/")[1:] if pointer else []:
        token = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None, token
    return node, None


NON_SCHEMA_PLACES = ("examples", "parameters", "responses", "requestBodies", "headers", "securitySchemes", "links", "callbacks")


def non_schema_place(pointer: str) -> str | None:
    """``components/<section>`` when ``pointer`` points into a section that holds no schemas (a spec bug in a schema's ``$ref``)."""
    parts = pointer.split("/")
    if len(parts) >= 3 and parts[1] == "components" and parts[2] in NON_SCHEMA_PLACES:
        return f"components/{parts[2]}"
    return None
