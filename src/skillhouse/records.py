"""Record classes declared as dataclasses are, for the modules that every library import loads.

``dataclasses`` imports ``inspect`` (and with it ``ast``, ``dis``, ``tokenize`` and ``linecache``) and
compiles five or six methods for each class it decorates. On the path of ``import skillhouse.openapi``
(the skill, compiler and OpenAPI modules, 26 classes) that was 119 million of the import's 293 million
instructions: 40% of the import, and about a tenth of a whole import of a mid-size spec, paid again by
every command-line run. :func:`record` does what those classes use and no more: one ``__init__``
compiled per class from its annotated fields and their defaults (``field(default_factory=...)`` for
mutable ones), and one shared ``__repr__``, ``__eq__``, ``__hash__`` (frozen records only, as for a
frozen dataclass), ordering (``order=True``) and refused assignment (``frozen=True``). :func:`replace`
and :func:`fields` stand in for their ``dataclasses`` namesakes.

Modules off that path (the gateway, the registry, the API) keep ``dataclasses``: the server imports it
through Pydantic anyway.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from operator import attrgetter

from skillhouse import record_templates

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar, dataclass_transform, overload

    _T = TypeVar("_T")
else:

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda function: function


_Function: Any = type(lambda: None)  # types.FunctionType, without importing types
_TEMPLATE_NAME = re.compile(r"_[nfa][0-9]+|_FACTORY|_set|self")
"""Field names a template's own names would clash with: such a record's ``__init__`` is compiled."""
_MISSING: Any = object()
_FACTORY: Any = object()  # the __init__ default of a field built by its factory when not given


class _Field:
    __slots__ = ("default", "default_factory")

    def __init__(self, default: Any, default_factory: Callable[[], Any] | None) -> None:
        self.default = default
        self.default_factory = default_factory


def field(*, default: Any = _MISSING, default_factory: Callable[[], Any] | None = None) -> Any:
    """A field's default, or the factory that makes a new one for each record (a list, a dict)."""
    if default is not _MISSING and default_factory is not None:
        raise ValueError("a field takes a default or a default_factory, not both")
    return _Field(default, default_factory)


class FrozenRecordError(AttributeError):
    """An assignment to a field of a frozen record."""


if TYPE_CHECKING:  # the two ways to call it, for type checkers (typing.overload needs typing at run time)

    @overload
    def record(cls: type[_T], /) -> type[_T]: ...

    @overload
    def record(*, frozen: bool = False, order: bool = False) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(field,))
def record(cls: type[_T] | None = None, /, *, frozen: bool = False, order: bool = False) -> Any:
    """Make ``cls`` a record of its annotated fields (in declaration order), as ``@dataclass`` would."""

    def make(target: type[_T]) -> type[_T]:
        return _make(target, frozen, order)

    return make if cls is None else make(cls)


def fields(value: object) -> tuple[str, ...]:
    """The field names of a record or record class, in declaration order."""
    names: tuple[str, ...] = getattr(value, "__record_fields__")  # noqa: B009 - a dunder mypy cannot see
    return names


def is_frozen(value: object) -> bool:
    """Whether ``value`` (a record or record class) refuses assignments to its fields."""
    return bool(getattr(value, "__record_frozen__", False))


def replace(value: _T, /, **changes: Any) -> _T:
    """A new record like ``value`` with ``changes``, built through its ``__init__`` as ``dataclasses.replace``."""
    names = fields(value)
    unknown = [name for name in changes if name not in names]
    if unknown:
        raise TypeError(f"{type(value).__qualname__} has no field {unknown[0]!r}")
    return type(value)(**{name: changes[name] if name in changes else getattr(value, name) for name in names})


def _make(cls: type[_T], frozen: bool, order: bool) -> type[_T]:
    annotations: dict[str, Any] = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 - not inspect: its import is the cost
    names = tuple(name for name, kind in annotations.items() if not str(kind).startswith(("ClassVar", "typing.ClassVar")))
    defaults: list[Any] = []  # of the trailing parameters that have one, in order
    factories: list[Callable[[], Any] | None] = []
    for name in names:
        declared = cls.__dict__.get(name, _MISSING)
        factory = None
        if isinstance(declared, _Field):
            if declared.default_factory is not None:
                delattr(cls, name)
                factory, declared = declared.default_factory, _FACTORY
            else:
                declared = declared.default
                setattr(cls, name, declared)
        factories.append(factory)
        if declared is _MISSING:
            if defaults:
                raise TypeError(f"{cls.__qualname__}: field {name!r} without a default follows one with a default")
        else:
            defaults.append(declared)
    init = _init(cls, names, frozen, tuple(defaults), factories)
    own = cls.__dict__
    values = attrgetter(*names) if len(names) > 1 else (lambda record: (getattr(record, names[0]),) if names else ())
    attributes: dict[str, Any] = {
        "__record_fields__": names,
        "__record_frozen__": frozen,
        "__record_values__": staticmethod(values),
        "__match_args__": names,
        "__init__": init,
    }
    if "__repr__" not in own:
        attributes["__repr__"] = _repr
    if "__eq__" not in own:
        attributes["__eq__"] = _eq
    if "__hash__" not in own or (own["__hash__"] is None and "__eq__" in own):
        # as a dataclass: hashable by its fields when frozen, unhashable (mutable and compared) otherwise
        attributes["__hash__"] = _hash if frozen else None
    if frozen:
        attributes["__setattr__"] = _refuse_set
        attributes["__delattr__"] = _refuse_delete
    if order:
        attributes.update(__lt__=_lt, __le__=_le, __gt__=_gt, __ge__=_ge)
    for key, item in attributes.items():
        setattr(cls, key, item)
    return cls


def _init(
    cls: type, names: tuple[str, ...], frozen: bool, defaults: tuple[Any, ...], factories: list[Callable[[], Any] | None]
) -> Callable[..., None]:
    """The record's ``__init__``: its fields as parameters (``defaults`` for the last ones), each stored
    as given, or made by its factory when it was not (its default is then the ``_FACTORY`` marker).

    Made from the template of as many fields in :mod:`skillhouse.record_templates`, which the bytecode
    cache holds compiled: its parameters and the names it stores under renamed after the fields, the
    factories given as its globals. No source is compiled at import (compiling was most of what
    declaring a record cost, and the first compile of a process costs about a millisecond more). A class
    of more fields than any template has (or of a field named like a template's own names) has its
    ``__init__`` written out and compiled.
    """
    qualname = f"{cls.__qualname__}.__init__"
    templates = record_templates.FROZEN if frozen else record_templates.MUTABLE
    if len(names) < len(templates) and not any(_TEMPLATE_NAME.fullmatch(name) for name in names):
        code = templates[len(names)].__code__
        stored = {f"_n{index}": name for index, name in enumerate(names)}
        if frozen:  # _set(self, "_n0", ...): the names are constants
            code = code.replace(co_consts=tuple(stored.get(c, c) if type(c) is str else c for c in code.co_consts))
        else:  # self._n0 = ...: the names are attribute names
            code = code.replace(co_names=tuple(stored.get(n, n) for n in code.co_names))
        code = code.replace(co_varnames=("self", *names), co_name="__init__", co_qualname=qualname)
        space: dict[str, Any] = {"_set": object.__setattr__, "_FACTORY": _FACTORY}
        space.update({f"_f{index}": factory for index, factory in enumerate(factories)})
        init: Callable[..., None] = _Function(code, space, "__init__", defaults)
    else:
        store = "_set(self, {name!r}, {value})" if frozen else "self.{name} = {value}"
        lines = [store.format(name=name, value=f"_f{index}() if {name} is _FACTORY else {name}") for index, name in enumerate(names)]
        required = len(names) - len(defaults)
        parameters = [name if index < required else f"{name}=_d{index - required}" for index, name in enumerate(names)]
        space = {"_set": object.__setattr__, "_FACTORY": _FACTORY, **{f"_d{i}": d for i, d in enumerate(defaults)}}
        space.update({f"_f{index}": factory for index, factory in enumerate(factories)})
        exec(f"def __init__(self, {', '.join(parameters)}):\n    " + "\n    ".join(lines) + "\n", space)  # names are the class's own fields
        init = space["__init__"]
        init.__qualname__ = qualname
    init.__module__ = cls.__module__
    return init


def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record_fields__)
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return self.__record_values__(self) == other.__record_values__(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self.__record_values__(self))


def _lt(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return self.__record_values__(self) < other.__record_values__(other)
    return NotImplemented


def _le(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return self.__record_values__(self) <= other.__record_values__(other)
    return NotImplemented


def _gt(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return self.__record_values__(self) > other.__record_values__(other)
    return NotImplemented


def _ge(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return self.__record_values__(self) >= other.__record_values__(other)
    return NotImplemented


def _refuse_set(self: Any, name: str, value: Any) -> None:
    raise FrozenRecordError(f"cannot assign to field {name!r} of a frozen {type(self).__qualname__}")


def _refuse_delete(self: Any, name: str) -> None:
    raise FrozenRecordError(f"cannot delete field {name!r} of a frozen {type(self).__qualname__}")



__all__ = ["FrozenRecordError", "field", "fields", "is_frozen", "record", "replace"]
