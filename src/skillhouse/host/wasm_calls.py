"""Calls across the component boundary whose parameters and results are all strings, through wasmtime's C API.

Every function of ``host/wit/agent.wit`` takes and gives strings only. wasmtime-py's generic component
API works for any type: on every call it asks the engine for the function's type, walks the
parameter types and converts each value through a type object, for exports and for host functions
alike. That cost (about 11 µs per export call and 5-9 µs per host function call on the bench machine)
was most of what the wasm guest paid over the in-process one. Here the types are known up front: a
string is copied into a ``wasm_byte_vec_t`` and out of one, and nothing else happens.

This reaches into wasmtime-py's ctypes bindings (``wasmtime._ffi``), which mirror the C API one
to one; ``pyproject.toml`` pins wasmtime, and the wasm tests call every path here.

A host function that raises hands wasmtime an error, which unwinds the guest (its instance is then
unusable); the exception itself is kept in the :class:`HostFailure` the function was defined with,
so the runner raises it unchanged once the export call returns.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from ctypes import byref
from typing import Any

import wasmtime
from wasmtime import _ffi as capi
from wasmtime.component import Func

_STRING_KIND = capi.WASMTIME_COMPONENT_STRING.value
_func_call = capi.dll.wasmtime_component_func_call  # argument types set by wasmtime's bindings
_post_return = capi.dll.wasmtime_component_func_post_return
_BYTES = ctypes.POINTER(ctypes.c_uint8)
# wasmtime calls this when it drops a host function; ours hold no C-side data to free.
_NO_FINALIZER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda _data: None)

HostFunction = Callable[..., Any]
EpochHook = Callable[[Any], None]
"""Called with the store's context pointer around host work (see :class:`HostHooks`)."""


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


def _lower(text: str, value: Any) -> None:
    """Write ``text`` into ``value`` as a string wasmtime owns (for host function results, which it frees)."""
    data = text.encode("utf-8")
    value.kind = _STRING_KIND
    capi.wasm_byte_vec_new(byref(value.of.string), len(data), ctypes.cast(ctypes.c_char_p(data), _BYTES))


def _lift(value: Any) -> str:
    vector = value.of.string
    return ctypes.string_at(vector.data, vector.size).decode("utf-8")


def call_export(func: Func, store: wasmtime.Store, *args: str) -> str:
    """Call the export ``func`` (strings in, one string out) and run its post-return.

    A trap or a host function's error raises :class:`wasmtime.WasmtimeError`; then the instance must
    not be entered again.
    """
    count = len(args)
    params = (capi.wasmtime_component_val_t * count)()
    # wasmtime only reads the arguments during the call, so they point into these bytes, uncopied
    encoded = [text.encode("utf-8") for text in args]
    for value, data in zip(params, encoded, strict=True):
        value.kind = _STRING_KIND
        vector = value.of.string
        vector.size = len(data)
        vector.data = ctypes.cast(ctypes.c_char_p(data), _BYTES)
    result = capi.wasmtime_component_val_t()
    context = store._context()
    handle = byref(func._func)
    error = _func_call(handle, context, params, count, byref(result), 1)
    if error:
        raise wasmtime.WasmtimeError._from_ptr(error)
    try:
        answer = _lift(result)
    finally:
        capi.wasmtime_component_val_delete(byref(result))
    error = _post_return(handle, context)
    if error:
        raise wasmtime.WasmtimeError._from_ptr(error)
    return answer


def define_host_function(
    instance: Any, name: str, function: HostFunction, returns: bool, hooks: HostHooks, failure: HostFailure
) -> Any:
    """Define ``name`` in the linker ``instance`` as ``function`` (strings in, a string out when ``returns``).

    Answers the ctypes callback, which the caller must keep alive as long as the linker and its instances.
    """

    def host_function(_data: Any, context: Any, _type: Any, args: Any, nargs: int, results: Any, _n: int) -> int:
        hooks.entered(context)
        try:
            answer = function(*[_lift(args[index]) for index in range(nargs)])
            if returns:
                _lower(answer, results[0])
            return 0
        except BaseException as exc:  # kept for the runner to raise; the guest only sees that it failed
            failure.exception = exc
            error = capi.wasmtime_error_new(b"the host function failed")
            return int(ctypes.cast(error, ctypes.c_void_p).value or 0)
        finally:
            hooks.left(context)

    # wrapped by a call, not as a decorator: the ctypes callback type is untyped, and a decorator
    # would make mypy treat ``host_function`` itself as untyped
    callback = capi.wasmtime_component_func_callback_t(host_function)
    encoded = name.encode("utf-8")
    error = capi.wasmtime_component_linker_instance_add_func(
        instance.ptr(), ctypes.create_string_buffer(encoded), len(encoded), callback, None, _NO_FINALIZER
    )
    if error:
        raise wasmtime.WasmtimeError._from_ptr(error)
    return callback
