"""The state of compiling one operation file: its frontmatter, its errors, and the readers of its field lists."""

from __future__ import annotations

import re
from collections.abc import Iterable

from skillhouse.compiler.expansion import Expansions, new_expansions
from skillhouse.records import field, record
from skillhouse.skill import errors as codes
from skillhouse.skill.errors import SkillError
from skillhouse.skill.frontmatter import Frontmatter

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from skillhouse.compiler.model import Argument
    from skillhouse.json_types import JsonObject, JsonSchema

ARGUMENT_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""The argument names every provider accepts."""


@record
class OperationContext:
    """What compiling an operation needs from its package."""

    skill: str
    file: str
    """File name inside the package (``create_booking.md``)."""
    shown: str
    """The file as errors name it."""
    front: Frontmatter
    text: str
    """The file's text, split into lines only to place an error in the schema's JSON (:func:`~skillhouse.compiler.forms.json_line`):
    splitting every file up front was 0.9% of Jira's import (1331M instructions, 1319M without)."""
    types: dict[str, JsonSchema]
    errors: list[SkillError] = field(default_factory=list)
    expansions: Expansions = field(default_factory=new_expansions)
    """The package's expanded types so far (:func:`skillhouse.compiler.expansion.expand_types`), shared by its operations."""
    arguments: dict[tuple[object, ...], Argument] = field(default_factory=dict)
    """The package's arguments so far, by their fields: equal arguments of its operations are one record.
    A frozen record takes 10K instructions to make, and most arguments recur (Jira's 1375 are 355
    distinct, Twilio's 1672 are 471): 0.6% of Jira's import (1293M instructions, 1285M so), 1.1% of
    Twilio's (887M, 877M)."""

    def error(self, code: str, message: str, *path: str | int) -> None:
        self.errors.append(SkillError(self.shown, self.front.line_of(*path), code, message))


def name_list(ctx: OperationContext, op: JsonObject, key: str, check_names: bool = True) -> list[str]:
    """The names listed under ``key``; with ``check_names``, without those no provider accepts (each reported).

    Names only: each was paired with its line, which nothing read (an error finds its line from its
    path); looking the lines up and taking the names back out of the pairs was 1.4% of Jira's import
    (1319M instructions, 1300M without)."""
    value = op.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        ctx.error(codes.INVALID_OPERATION, f"{key} must be a list of field names, like [room_id, guest_name]", "operation", key)
        return []
    if not check_names:
        return list(value)
    out: list[str] = []
    for index, name in enumerate(value):
        if not ARGUMENT_NAME.match(name):
            ctx.error(
                codes.INVALID_OPERATION,
                f"{key}: {name!r} is not a name every provider accepts (letters, digits, '_' and '-'); "
                f"use another and map it with names:",
                "operation",
                key,
                index,
            )
            continue
        out.append(name)
    return out


def check_one_place(ctx: OperationContext, groups: Iterable[tuple[str, list[str]]]) -> None:
    seen: dict[str, str] = {}
    for where, members in groups:
        for index, name in enumerate(members):
            if name in seen:
                other = seen[name]
                detail = f"twice in {where}" if other == where else f"in both {other} and {where}"
                path: tuple[str | int, ...] = ("operation", "url") if where == "path" else ("operation", where, index)
                ctx.error(codes.NAME_IN_TWO_PLACES, f"{name!r} is {detail}; a name lives in one place", *path)
            else:
                seen[name] = where


def mapping(ctx: OperationContext, op: JsonObject, key: str) -> JsonObject:
    value = op.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        ctx.error(codes.INVALID_OPERATION, f"{key} must be a mapping", "operation", key)
        return {}
    return value
