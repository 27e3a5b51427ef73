"""Every exception skillhouse defines is in the one tree of ``skillhouse.errors``, and the API has a status for every code.

The classes are found by importing every module and looking at what each defines, so a new
exception that forgets the tree fails here; the codes are the classes' own plus every literal code
a raise site in ``src`` passes to one of them.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from collections import defaultdict
from pathlib import Path

import skillhouse
from skillhouse.api.errors import CODE_STATUS, status_of
from skillhouse.client.errors import ClientError
from skillhouse.errors import FAMILIES, CallerError, Signal, SkillhouseError, Unavailable, family
from skillhouse.gateway.errors import ApprovalRequired, GatewayError
from skillhouse.host.guest_state import GuestBuildFailed, GuestBuilding, GuestNotReady

SOURCE = Path(skillhouse.__file__).resolve().parent
CODE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")

MODULE_BASES: set[type[SkillhouseError]] = {GatewayError, GuestNotReady, ClientError}
"""Bases that say where an error comes from, not what it means; each of their subclasses is in a family."""

LEFT_OUTSIDE = {
    # control flow inside one package: each is caught there and becomes part of a result, never raised to a caller
    "skillhouse.openapi.document.Unresolved": "a reference an operation cannot do without; the wizard catches it and reports a located problem",
    "skillhouse.openapi.document._Refused": "a document a reference names cannot be loaded; caught in the same module and turned into a located reference problem",
    "skillhouse.openapi.parameters.Skip": "an OpenAPI operation the wizard cannot offer; becomes a skipped entry of the import report",
    "skillhouse.openapi.yaml_events.Unsupported": "YAML the fast loader leaves to PyYAML; document.py falls back on it",
    "skillhouse.openapi.json_block._Unsure": "the JSON block finder's fallback within its module",
    "skillhouse.openapi.shrink._OutOfBudget": "the schema shrinker's budget within its module",
    "skillhouse.compiler.profiles.adaptation.Refused": "a tool a provider cannot take; becomes a 'refused' verdict of the report",
    "skillhouse.compiler.profiles.adaptation.Unexpressible": "a schema node a provider cannot take; becomes an 'adapted' verdict",
    "skillhouse.compiler.profiles.strict._Unmodelled": "a node strict mode's report walk leaves to the rewrite that builds the schema; caught in the same module",
    "skillhouse.compiler.canonical._Slow": "the canonical JSON fast path giving up within its module",
    "skillhouse.compiler.metaschema._Problem": "a schema check's early exit within its module",
    "skillhouse.registry.bundle._Unpacked": "an archive over its size limit within its module; becomes Invalid",
    "skillhouse.compiler.expansion._WalkTooLong": "the size walk giving up within its module; the schema is measured whole",
    # a programming error, as dataclasses' FrozenInstanceError is: no caller handles it
    "skillhouse.records.FrozenRecordError": "an assignment to a frozen record's field (an AttributeError, as a frozen dataclass raises)",
    # the example upstream plays a third-party API: its errors are its own wire, not skillhouse's
    "skillhouse.examples.hollowbrook_house.HouseError": "the Hollowbrook house's own refusals (a stand-in upstream)",
}


def _modules() -> list[str]:
    names = ["skillhouse"]
    for info in pkgutil.walk_packages([str(SOURCE)], "skillhouse."):
        # the wasm app module needs the component's generated bindings, migrations run only under alembic
        # (neither defines an exception), and __main__ runs the command
        if any(part in info.name for part in (".wasm_app", ".migrations")) or info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return names


def _exception_classes() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == name:
                found[f"{name}.{value.__qualname__}"] = value
    return list(found.values())


CLASSES = _exception_classes()
TREE = [c for c in CLASSES if issubclass(c, SkillhouseError)]


def _qualified(kind: type) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


def _subclasses(root: type[SkillhouseError]) -> set[type[SkillhouseError]]:
    found: set[type[SkillhouseError]] = set()
    for child in root.__subclasses__():
        found |= {child, *_subclasses(child)}
    return found


def _names_used(name: str) -> set[Path]:
    """Source files whose code names ``name`` (an import, a raise, an except), strings and comments aside."""
    files = set()
    for source in SOURCE.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Name) and node.id == name) or (isinstance(node, ast.alias) and node.name == name) \
                    or (isinstance(node, ast.Attribute) and node.attr == name):
                files.add(source)
                break
    return files


def _raised_codes() -> set[tuple[type[SkillhouseError], str]]:
    """(class, code) for every call in ``src`` that builds a tree class with a literal code."""
    by_name: dict[str, list[type[SkillhouseError]]] = defaultdict(list)
    for kind in TREE:
        by_name[kind.__name__].append(kind)
    pairs = set()
    for source in SOURCE.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            callee = node.func.id if isinstance(node.func, ast.Name) else node.func.attr if isinstance(node.func, ast.Attribute) else ""
            for kind in by_name.get(callee, []):
                parameters = [p for p in inspect.signature(kind.__init__).parameters if p not in ("self", "args", "kwargs")]
                literal = next((k.value for k in node.keywords if k.arg == "code"), None)
                if literal is None and "code" in parameters and parameters.index("code") < len(node.args):
                    literal = node.args[parameters.index("code")]
                if isinstance(literal, ast.Constant) and isinstance(literal.value, str):
                    pairs.add((kind, literal.value))
    return pairs


RAISED = _raised_codes()


def test_every_exception_skillhouse_defines_is_in_the_tree_or_left_outside_with_a_reason() -> None:
    outside = sorted(_qualified(c) for c in CLASSES if not issubclass(c, SkillhouseError))
    assert outside == sorted(LEFT_OUTSIDE)
    assert len(TREE) > 40  # the walk found the package's modules, not just this test's imports


def test_what_is_left_outside_never_leaves_its_package() -> None:
    for qualified in LEFT_OUTSIDE:
        module, _, name = qualified.rpartition(".")
        home = SOURCE.joinpath(*module.split(".")[1:]).with_suffix(".py").parent
        assert all(home in used.parents for used in _names_used(name)), qualified


def test_the_tree_the_walk_finds_is_the_tree_the_root_holds() -> None:
    assert set(TREE) == {SkillhouseError} | _subclasses(SkillhouseError)


def test_every_class_but_the_module_bases_is_in_exactly_one_family() -> None:
    for kind in TREE:
        if kind is SkillhouseError or kind in FAMILIES:
            continue
        if kind in MODULE_BASES:
            assert family(kind) is None
            assert all(family(sub) is not None for sub in _subclasses(kind))
        else:
            assert family(kind) is not None, f"{_qualified(kind)} is in {[f.__name__ for f in FAMILIES if issubclass(kind, f)]}"


def test_every_class_has_a_code_spelled_as_codes_are() -> None:
    for kind in TREE:
        assert CODE.match(kind.code), f"{_qualified(kind)}: {kind.code!r}"
    for kind, code in RAISED:
        assert CODE.match(code), f"{_qualified(kind)}: {code!r}"


def test_approval_required_and_guest_building_are_signals_not_refusals() -> None:
    assert issubclass(ApprovalRequired, Signal) and not issubclass(ApprovalRequired, CallerError)
    assert family(ApprovalRequired) is Signal
    assert family(GuestBuilding) is Signal
    assert issubclass(GuestBuildFailed, Unavailable)


def test_the_http_mapping_has_one_status_for_every_code_a_class_carries() -> None:
    statuses: dict[str, set[int]] = defaultdict(set)
    for kind, code in RAISED | {(kind, kind.code) for kind in TREE if kind not in MODULE_BASES}:
        status = status_of(kind, code)
        assert 200 <= status <= 599
        statuses[code].add(status)
    assert {code: found for code, found in statuses.items() if len(found) > 1} == {}
    assert len(statuses) > 60  # the scan found the raise sites


def test_every_code_the_mapping_names_is_a_code_something_raises() -> None:
    known = {code for _, code in RAISED} | {kind.code for kind in TREE}
    assert set(CODE_STATUS) <= known


def test_no_module_base_is_raised_as_itself() -> None:
    # so the family of what is raised always says what it means
    for source in SOURCE.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in {base.__name__ for base in MODULE_BASES}, f"{source}:{node.lineno}"
