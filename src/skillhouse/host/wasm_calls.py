"""Calls across the component boundary whose parameters and results are all strings, through wasmtime's C API.

Every function of ``host/wit/agent.wit`` takes and gives strings only. wasmtime-py's generic component
API works for any type: on every call it asks the engine for the function's type, walks the
parameter types and converts each value through a type object, for exports and for host functions
alike. Here the types are known up front, and so is the memory: an instance's :class:`Exports` keeps
one parameter array and one result value for all its calls, laid out as the C API's
``wasmtime_component_val_t`` (:class:`StringVal`), and calls the C functions through prototypes whose
pointers are plain addresses. A string argument points into the bytes of its UTF-8 encoding, uncopied
(wasmtime copies it once, into the guest's memory); the array is written by one ``struct`` pack with the
bytes' addresses (CPython's layout of bytes is checked when this module loads). A result is read once, out
of the vector wasmtime hands back. No ctypes object is made per call but the bytes themselves: with wasmtime-py's own
bindings, every ``byref``, ``cast`` and nested field access of a call made one, and they were most of
what the host paid per call.

This reaches into wasmtime-py's ctypes bindings (``wasmtime._ffi``, for the library and the ``Func`` and
``Store`` handles), which mirror the C API one to one; ``pyproject.toml`` pins wasmtime, the layout
is checked against the bindings' own when this module loads, and the wasm tests call every path here.

A host function that raises hands wasmtime an error, which unwinds the guest (its instance is then
unusable); the exception itself is kept in the :class:`HostFailure` the function was defined with,
so the runner raises it unchanged once the export call returns.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Callable, Mapping
from ctypes import c_char_p, c_size_t, c_uint8, c_uint64, c_void_p
from typing import Any, cast

import wasmtime
from wasmtime import _ffi as capi
from wasmtime.component import Func

_STRING_KIND = capi.WASMTIME_COMPONENT_STRING.value
MAX_PARAMS = 2
"""The most parameters an export of the agent world takes (``call-tool``: name, arguments)."""


class StringVal(ctypes.Structure):
    """A ``wasmtime_component_val_t`` holding a string: the kind byte, then the union's ``wasm_byte_vec_t``."""

    _fields_ = [("kind", c_uint8), ("size", c_size_t), ("data", c_char_p), ("_rest", c_uint64)]


class _ReadVal(ctypes.Structure):
    """The same layout, its data read as an address (a ``c_char_p`` would stop at the first NUL)."""

    _fields_ = [("kind", c_uint8), ("size", c_size_t), ("data", c_void_p), ("_rest", c_uint64)]


def _check_layout() -> None:
    union = capi.wasmtime_component_val_t.of.offset
    # the bindings annotate the fields as values; on the class they are descriptors with offsets
    vector: Any = capi.wasm_byte_vec_t
    expected = (ctypes.sizeof(capi.wasmtime_component_val_t), union + vector.size.offset, union + vector.data.offset)
    for layout in (StringVal, _ReadVal):
        if (ctypes.sizeof(layout), layout.size.offset, layout.data.offset) != expected:
            raise ImportError(f"wasmtime_component_val_t is not laid out as {layout.__name__} expects: {expected}")


_check_layout()
_VAL_SIZE = ctypes.sizeof(StringVal)
_ERROR = ctypes.POINTER(capi.wasmtime_error_t)


def _prototype(name: str, restype: Any, *argtypes: Any) -> Any:
    # a separate foreign function from wasmtime-py's (whose argtypes are typed pointers): addresses in
    return ctypes.CFUNCTYPE(restype, *argtypes)((name, capi.dll))


_func_call = _prototype("wasmtime_component_func_call", c_void_p, c_void_p, c_void_p, c_void_p, c_size_t,
                        c_void_p, c_size_t)  # fmt: skip
# called with the interpreter's lock held (a Python-API prototype): it only frees memory, and releasing and
# taking the lock again around it cost more than the call
_val_delete = ctypes.PYFUNCTYPE(None, c_void_p)(("wasmtime_component_val_delete", capi.dll))
_byte_vec_new = _prototype("wasm_byte_vec_new", None, c_void_p, c_size_t, c_char_p)
# UTF-8 at an address straight into a str: one call, where ctypes.string_at and bytes.decode made a copy
# in between (the C API is called with the interpreter's lock held, as every ctypes.pythonapi function)
_decode = cast(
    Callable[[int | c_void_p | None, int | ctypes.c_ssize_t, None], str],
    ctypes.PYFUNCTYPE(ctypes.py_object, c_void_p, ctypes.c_ssize_t, c_char_p)(("PyUnicode_DecodeUTF8", ctypes.pythonapi)),
)
_set_epoch_deadline = _prototype("wasmtime_context_set_epoch_deadline", None, c_void_p, c_uint64)
_CALLBACK = ctypes.CFUNCTYPE(c_size_t, c_void_p, c_void_p, c_void_p, c_void_p, c_size_t, c_void_p, c_size_t)
_FINALIZER = ctypes.CFUNCTYPE(None, c_void_p)
_add_func = _prototype("wasmtime_component_linker_instance_add_func", c_void_p, c_void_p, c_char_p, c_size_t,
                       _CALLBACK, c_void_p, _FINALIZER)  # fmt: skip
# wasmtime calls this when it drops a host function; ours hold no C-side data to free.
_NO_FINALIZER = _FINALIZER(lambda _data: None)

HostFunction = Callable[..., Any]
EpochHook = Callable[[int], None]
"""Called with the store's context address around host work (see :class:`HostHooks`)."""


def context_address(store: wasmtime.Store) -> int:
    """The address of ``store``'s context, which the C API takes and hands host functions."""
    return int(ctypes.cast(store._context(), c_void_p).value or 0)


def set_epoch_deadline(context: int, ticks: int) -> None:
    """The store at ``context`` traps once the engine's epoch is ``ticks`` past where it is now."""
    _set_epoch_deadline(context, ticks)


def _raise(error: int) -> None:
    raise wasmtime.WasmtimeError._from_ptr(ctypes.cast(error, _ERROR))


class HostFailure:
    """The exception a host function raised during the current export call, if any."""

    def __init__(self) -> None:
        self.exception: BaseException | None = None

    def take(self) -> BaseException | None:
        exception, self.exception = self.exception, None
        return exception


class HostHooks:
    """What runs on entry to and exit from every host function: the guest's clock pauses meanwhile."""

    def __init__(self, entered: EpochHook, left: EpochHook) -> None:
        self.entered = entered
        self.left = left


_SIZE_AT = StringVal.size.offset
_COUNTS = [c_size_t(count) for count in range(MAX_PARAMS + 1)]
"""Parameter and result counts as the C type the call takes (an int was converted to a new one every call)."""
_BYTES_DATA = bytes.__basicsize__ - 1
"""Where a bytes object's data starts past its address (CPython's ``PyBytesObject.ob_sval``; checked on load)."""
_PARAMS_LAYOUT = [struct.Struct("<" + f"B{_SIZE_AT - 1}xQQ{_VAL_SIZE - _SIZE_AT - 16}x" * count)
                  for count in range(MAX_PARAMS + 1)]  # fmt: skip
"""The parameter array of ``count`` string values, each its kind, size and data address, written in one call:
setting a ctypes ``c_char_p`` field made a kept-reference entry each time, and clearing it after another (0.75 µs
of a two-argument call, against 0.35 µs)."""


def _check_params_layout() -> None:
    probe = b"layout"
    if ctypes.string_at(id(probe) + _BYTES_DATA, len(probe)) != probe:
        raise ImportError("bytes objects are not laid out as CPython's PyBytesObject")
    values = (StringVal * MAX_PARAMS)()
    _PARAMS_LAYOUT[MAX_PARAMS].pack_into(values, 0, *[_STRING_KIND, 6, id(probe) + _BYTES_DATA] * MAX_PARAMS)
    for value in values:
        if (value.kind, value.size, value.data) != (_STRING_KIND, 6, probe):
            raise ImportError("wasmtime_component_val_t is not laid out as the parameter struct expects")


_check_params_layout()


def _read(address: int) -> str:
    value = _ReadVal.from_address(address)
    return _decode(value.data, value.size, None)


class Exports:
    """The string exports of one instance in ``store``, by WIT name, each called with strings for one string.

    Not for concurrent use: the runner calls one export at a time (its lock), and the parameter and
    result memory is this object's, reused by every call.
    """

    def __init__(self, store: wasmtime.Store, funcs: Mapping[str, Func]) -> None:
        self._store = store  # the context address is valid as long as the store lives
        self._funcs = dict(funcs)  # and a handle's address as long as its Func
        self.context = context_address(store)
        self._params = (StringVal * MAX_PARAMS)()
        self._pack_one, self._pack_two = _PARAMS_LAYOUT[1].pack_into, _PARAMS_LAYOUT[2].pack_into
        self._result = _ReadVal()
        self._result_at = c_void_p(ctypes.addressof(self._result))
        # every address a call passes, as the C type its prototype takes: converting a Python int to it was a
        # good part of each foreign call's cost, and these never change for the instance
        context, params = c_void_p(self.context), c_void_p(ctypes.addressof(self._params))
        self._targets = {
            name: (c_void_p(ctypes.addressof(func._func)), context, params) for name, func in self._funcs.items()
        }
        # the result's size and data address, as views of its memory passed to the decoder as they stand after
        # each call (unpacking them into ints, which the call converted back, cost a third of the decoding)
        self._result_size = ctypes.c_ssize_t.from_buffer(self._result, _SIZE_AT)
        self._result_data = c_void_p.from_buffer(self._result, _ReadVal.data.offset)

    def __contains__(self, name: str) -> bool:
        return name in self._targets

    def call(self, name: str, *args: str) -> str:
        """Call the export ``name``; its string result.

        A trap or a host function's error raises :class:`wasmtime.WasmtimeError`; then the instance must
        not be entered again.
        """
        handle, context, params = self._targets[name]
        count = _COUNTS[len(args)]  # an IndexError past MAX_PARAMS, before anything is written or called
        # each argument points into the bytes of its UTF-8 encoding, uncopied: wasmtime reads them only during
        # the call, while these names hold them
        if args:
            first = args[0].encode("utf-8")
            if len(args) == 1:
                self._pack_one(self._params, 0, _STRING_KIND, len(first), id(first) + _BYTES_DATA)
            else:
                second = args[1].encode("utf-8")
                self._pack_two(self._params, 0, _STRING_KIND, len(first), id(first) + _BYTES_DATA,
                               _STRING_KIND, len(second), id(second) + _BYTES_DATA)  # fmt: skip
        error = _func_call(handle, context, params, count, self._result_at, _COUNTS[1])
        if error:
            _raise(error)
        # wasmtime runs the export's post-return itself, within the call (its C function for that is a no-op
        # since wasmtime 43); what is left to do is freeing the result's copy, once read
        try:
            return _decode(self._result_data, self._result_size, None)
        finally:
            _val_delete(self._result_at)


def define_host_function(
    instance: Any, name: str, function: HostFunction, returns: bool, hooks: HostHooks, failure: HostFailure
) -> Any:
    """Define ``name`` in the linker ``instance`` as ``function`` (strings in, a string out when ``returns``).

    Answers the ctypes callback, which the caller must keep alive as long as the linker and its instances.
    """

    def host_function(_data: Any, context: int, _type: Any, args: int, nargs: int, results: int, _n: int) -> int:
        hooks.entered(context)
        try:
            answer = function(*[_read(args + index * _VAL_SIZE) for index in range(nargs)])
            if returns:
                data = answer.encode("utf-8")
                # a string wasmtime owns (it frees a host function's results)
                c_uint8.from_address(results).value = _STRING_KIND
                _byte_vec_new(results + _SIZE_AT, len(data), data)
            return 0
        except BaseException as exc:  # kept for the runner to raise; the guest only sees that it failed
            failure.exception = exc
            error = capi.wasmtime_error_new(b"the host function failed")
            return int(ctypes.cast(error, c_void_p).value or 0)
        finally:
            hooks.left(context)

    # wrapped by a call, not as a decorator: the ctypes callback type is untyped, and a decorator
    # would make mypy treat ``host_function`` itself as untyped
    callback = _CALLBACK(host_function)
    encoded = name.encode("utf-8")
    error = _add_func(ctypes.cast(instance.ptr(), c_void_p), encoded, len(encoded), callback, None, _NO_FINALIZER)
    if error:
        _raise(error)
    return callback
