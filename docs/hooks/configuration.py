"""MkDocs hook: the configuration page's tables, generated from ``skillhouse.settings.Settings``.

``docs/configuration.md`` holds one marker ``<!-- settings: SECTION -->`` per table (``serve``,
``model``, ``cli``: :data:`skillhouse.settings.Section`); at build time each is replaced by a row per
field of that section: the variable (the field's :class:`~skillhouse.settings.Variable` metadata), the
field, its type, its default (the field's own, or the metadata's words when it is computed where it runs)
and the field's docstring. The prose around the markers is the page's own. Nothing is imported but
``skillhouse.settings``, and nothing is fetched.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import re
import textwrap
import typing
from typing import Any, get_args

from skillhouse.settings import VARIABLE, Section, Settings, Variable

PAGE = "configuration.md"
MARKER = re.compile(r"<!-- settings: ([a-z]+) -->")
SECTIONS: tuple[Section, ...] = get_args(Section)


def field_docs() -> dict[str, str]:
    """Each field's docstring (the string right after its annotation in the class body), as written."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(Settings)))
    body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for statement, following in itertools.pairwise(body):
        if (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)):
            docs[statement.target.id] = following.value.value
    return docs


def variable(field: dataclasses.Field[Any]) -> Variable:
    """The variable that sets ``field``; a ``ValueError`` when the field names none."""
    found = field.metadata.get(VARIABLE)
    if not isinstance(found, Variable):
        raise ValueError(f"Settings.{field.name} names no variable: give it metadata=_env(...) in settings.py")
    return found


def _markdown(text: str) -> str:
    """A docstring's reStructuredText literals as Markdown code, on one line, safe in a table cell (a pipe
    inside code stays as it is, Python-Markdown's tables read it as text; one outside code is escaped)."""
    parts = " ".join(text.replace("``", "`").split()).split("`")
    return "`".join(part if inside % 2 else part.replace("|", "\\|") for inside, part in enumerate(parts))


def type_name(hint: Any) -> str:
    """A field's type as a reader writes it: ``float``, ``Path | None``, ``dict[tuple[str, int], str]``."""
    if isinstance(hint, type) and not get_args(hint):
        return hint.__name__
    return re.sub(r"\b(?:pathlib|typing|builtins)\.", "", str(hint))


def shown_default(field: dataclasses.Field[Any]) -> str:
    """The default a reader sees: the metadata's words when the field's default is computed where it
    runs, else the field's own default (``unset`` for ``None`` or empty text, ``none`` for no entries)."""
    words = variable(field).default
    if words:
        return words
    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
        if value:
            raise ValueError(f"Settings.{field.name}'s default is computed: say it in words (_env(default=...))")
    else:
        raise ValueError(f"Settings.{field.name} has no default")
    if value is None or value == "":
        return "unset"
    if isinstance(value, bool):
        return "off" if not value else "on"
    if isinstance(value, (frozenset, dict, list, tuple)):
        return "none" if not value else f"`{value}`"
    if isinstance(value, float) and value.is_integer():
        return f"`{int(value)}`"
    return f"`{value}`"


def rows(section: str) -> list[tuple[str, str, str, str, str]]:
    """The rows of one section's table: variable, field, type, default, description (Markdown cells)."""
    if section not in SECTIONS:
        raise ValueError(f"{PAGE} names the settings section {section!r}; there are {', '.join(SECTIONS)}")
    docs, hints = field_docs(), typing.get_type_hints(Settings)
    found = []
    for field in dataclasses.fields(Settings):
        if variable(field).section != section:
            continue
        if field.name not in docs:
            raise ValueError(f"Settings.{field.name} has no docstring to describe it with")
        found.append((f"`{variable(field).name}`", f"`{field.name}`", f"`{type_name(hints[field.name])}`",
                      shown_default(field), _markdown(docs[field.name])))
    return found


def render(section: str) -> str:
    """One section's table in Markdown."""
    lines = ["| variable | field | type | default | what it does |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows(section)]
    return "\n".join(lines)


def render_page(markdown: str) -> str:
    """The page with each marker replaced by its section's table; every section must have its marker."""
    named = MARKER.findall(markdown)
    missing = [section for section in SECTIONS if section not in named]
    if missing or len(named) != len(set(named)):
        raise ValueError(f"{PAGE} must hold each marker <!-- settings: SECTION --> once; missing: {missing}")
    return MARKER.sub(lambda match: render(match.group(1)), markdown)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    return render_page(markdown)
