"""The gateway package's public names load on first use (PEP 562) and are written in three places: the
``TYPE_CHECKING`` imports (what type checkers read), the ``_WHERE`` table (what ``__getattr__`` loads)
and ``__all__``. These tests keep the three the same set, and every name loading from where it says."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import skillhouse.gateway as gateway

SOURCE = Path(gateway.__file__ or "")


def _type_checking_imports() -> dict[str, str]:
    """Each name the module imports under ``if TYPE_CHECKING:``, with the module it is imported from."""
    tree = ast.parse(SOURCE.read_text(encoding="utf-8"))
    blocks = [node for node in tree.body if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
              and node.test.id == "TYPE_CHECKING"]  # fmt: skip
    assert len(blocks) == 1
    imported: dict[str, str] = {}
    for statement in blocks[0].body:
        assert isinstance(statement, ast.ImportFrom) and statement.module is not None, ast.dump(statement)
        for alias in statement.names:
            assert alias.asname is None and alias.name not in imported, alias.name
            imported[alias.name] = statement.module
    return imported


def test_the_lazy_table_names_exactly_the_public_names() -> None:
    assert sorted(gateway._WHERE) == sorted(gateway.__all__)
    assert len(gateway.__all__) == len(set(gateway.__all__))


def test_the_type_checking_imports_name_the_same_names_from_the_same_modules() -> None:
    imported = _type_checking_imports()
    assert sorted(imported) == sorted(gateway.__all__)
    assert {name: f"skillhouse.gateway.{module}" for name, module in gateway._WHERE.items()} == imported


@pytest.mark.parametrize("name", sorted(gateway.__all__))
def test_every_public_name_resolves_to_the_object_of_its_module(name: str) -> None:
    module = importlib.import_module(f"skillhouse.gateway.{gateway._WHERE[name]}")
    assert getattr(gateway, name) is getattr(module, name)


def test_a_name_the_package_does_not_have_is_an_attribute_error() -> None:
    missing = "no_such_name"
    with pytest.raises(AttributeError, match=missing):
        getattr(gateway, missing)
