"""What a person decides an approval on, read from the held request: a one-line summary, the key
arguments, who asked and how long the approval stays valid. Pure: the page hands in the approval and,
when the turn is recorded, the operation's document from the release the turn bound.

Key arguments are the query's and body's values whose names say amount or currency, id, name or
email, quantity, date, in that order of interest, then the others in the request's order, up to
:data:`KEY_ARGUMENTS`; all of them are one click away on the page (the whole body follows).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from skillhouse.gateway import Approval

KEY_ARGUMENTS = 6
_INTEREST = [re.compile(p, re.I) for p in (r"amount|total|price|cost|sum|fee|cents|currency", r"(^|_)id$|_ids?$|^id",
                                           r"name|title|email|recipient|to$", r"quantity|count|nights|guests",
                                           r"date|arrival|departure|at$|time")]


@dataclass(frozen=True)
class Argument:
    name: str
    value: str


@dataclass(frozen=True)
class ApprovalFacts:
    summary: str
    """The operation's description (its first sentence), or the request's method and address."""
    key_arguments: list[Argument]
    argument_count: int
    skill: str | None
    version: str | None


def _scalar(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def request_arguments(canonical: dict[str, Any]) -> list[Argument]:
    """The query's and the JSON or form body's top-level values, as sent (lists and objects as JSON)."""
    found = [Argument(name, value) for name, value in parse_qsl(urlsplit(str(canonical.get("url", ""))).query)]
    body = canonical.get("body")
    text = body.get("text") if isinstance(body, dict) else None
    parsed: Any = body.get("json") if isinstance(body, dict) and "json" in body else None
    if isinstance(text, str):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = dict(parse_qsl(text)) if "=" in text and "\n" not in text else None
    if isinstance(parsed, dict):
        found += [Argument(str(name), _scalar(value)) for name, value in parsed.items()]
    return found


def _interest(argument: Argument) -> int:
    return next((rank for rank, pattern in enumerate(_INTEREST) if pattern.search(argument.name)), len(_INTEREST))


def first_sentence(text: str) -> str:
    line = " ".join(text.split())
    end = re.search(r"(?<=[.!?])\s", line)
    return line[: end.start()] if end else line


def approval_facts(approval: Approval, operation: dict[str, Any] | None, version: str | None) -> ApprovalFacts:
    """The facts of ``approval``; ``operation`` is its operation's document in the bound release, if known."""
    arguments = request_arguments(approval.canonical)
    shown = sorted(arguments, key=_interest)[:KEY_ARGUMENTS]  # a stable sort: ties keep the request's order
    url = urlsplit(str(approval.canonical.get("url", "")))
    described = first_sentence(str(operation.get("description", ""))) if operation else ""
    summary = described or f"{approval.canonical.get('method', '')} {url.netloc}{url.path}"
    skill = approval.operation.partition(".")[0] if approval.operation else None
    return ApprovalFacts(summary, shown, len(arguments), skill, version)
