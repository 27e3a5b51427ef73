"""The guest of a turn: the tools it offers and what calling each one does.

Every answer is a JSON string, as it crosses the WebAssembly boundary. A bound operation's call is
validated and translated into its request, which goes out through the host's ``fetch_url``; the
model sees exactly what ``fetch_url`` answered (a response, or the gateway's ``approval-required``,
replay or refusal), or the guest's own refusal when the call was not sent.

Standard library only: this runs inside the WebAssembly guest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, cast

from skillhouse.guest.catalogue import Catalogue
from skillhouse.guest.depth import nests_deeper_than
from skillhouse.guest.host import Host, sent_text
from skillhouse.guest.loop import run_turn
from skillhouse.guest.objects import error, fetch_refusal, read_skill_object
from skillhouse.guest.translation import InvalidArguments, build_request
from skillhouse.guest.validation import Violation, validate
from skillhouse.guest.values import FetchRequest, JsonObject, OperationDocument, ToolDefinition, json_dump

IMPLEMENTED_EAGER = ("load_tools", "read_object", "fetch_url")
"""The eager tools this guest runs itself; their definitions come from the host (``eager-tools``)."""

MAX_DEPTH = 64
"""Deepest nesting of arguments a call may have; no schema a provider accepts goes near it."""


class Guest:
    """One turn's tools over a :class:`Host`. Loaded tools stay offered for the rest of the turn."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.eager: list[ToolDefinition] = json.loads(host.eager_tools())
        self._eager_texts = [_dump(tool) for tool in self.eager]
        self.catalogue = Catalogue.from_text(host.skill_operations(), self.eager)
        self.loaded: list[str] = []
        # the operation documents called by their full names, as the catalogue decoded them: a plain dict
        # finds one without the catalogue's lazy mapping (three Python calls a call, dearer in the component)
        self._called: dict[str, OperationDocument] = {}
        # a host in this process takes the request as it is (``fetch_request``); across the component
        # boundary it crosses as JSON text (``fetch_url``)
        self._send: Callable[[FetchRequest], str] = getattr(host, "fetch_request", None) or self._send_text

    def offered(self) -> list[ToolDefinition]:
        """Tool definitions the model may call now: the eager ones and those loaded."""
        return [*self.eager, *(self.catalogue.definition(t) for t in self.loaded)]

    def deferred(self) -> list[ToolDefinition]:
        """Bound operations not loaded yet."""
        return [self.catalogue.definition(t) for t in self.catalogue.operations if t not in self.loaded]

    def list_tools(self) -> str:
        """``{"tools": offered, "deferred": the rest}``, put together from the definitions' JSON texts: the
        same text ``json.dumps`` writes of :meth:`offered` and :meth:`deferred`, without decoding any schema."""
        text = self.catalogue.definition_text
        tools = [*self._eager_texts, *(text(t) for t in self.loaded)]
        deferred = [text(t) for t in self.catalogue.operations if t not in self.loaded]
        return '{"tools": [' + ", ".join(tools) + '], "deferred": [' + ", ".join(deferred) + "]}"

    def call_tool(self, name: str, arguments: str) -> str:
        """Call tool ``name`` with ``arguments`` (a JSON object as text); the JSON answer the model sees."""
        answer = self.prepare_call_tool(name, arguments)
        return answer if isinstance(answer, str) else self._send(answer)

    def call_tool_unsent(self, name: str, arguments: str) -> str:
        """:meth:`call_tool` as the component's ``call-tool`` answers it: a call whose answer is what
        ``fetch_url`` answers gives its request, unsent, as :func:`~skillhouse.guest.host.sent_text` writes it."""
        answer = self.prepare_call_tool(name, arguments)
        return answer if isinstance(answer, str) else sent_text(answer)

    def prepare_call_tool(self, name: str, arguments: str) -> str | FetchRequest:
        """:meth:`call_tool` up to the host's ``fetch_url``: the answer, or the request whose ``fetch_url``
        answer is the call's answer, unsent. The component hands such a request back with its export's
        answer for the host to send (see ``host/wit/agent.wit``), rather than crossing back to the host
        for it and again out with what the host answered, unchanged."""
        if nests_deeper_than(arguments, MAX_DEPTH):
            violation = Violation("$", "too-deep", f"arguments nested at most {MAX_DEPTH} levels deep")
            return _dump(InvalidArguments([violation]).document(name))
        try:
            parsed = _read_arguments(arguments) if arguments.strip() else {}
        except (json.JSONDecodeError, ValueError, RecursionError) as exc:
            where = f" at character {exc.pos}" if isinstance(exc, json.JSONDecodeError) else ""
            violation = Violation("$", "not-json", f"a JSON object of arguments (it did not parse{where})")
            return _dump(InvalidArguments([violation]).document(name))
        return self._prepare(name, parsed)

    def call(self, name: str, arguments: Any) -> str:
        """Call tool ``name`` with already-decoded ``arguments``."""
        answer = self._prepare(name, arguments)
        return answer if isinstance(answer, str) else self._send(answer)

    def _prepare(self, name: str, arguments: Any) -> str | FetchRequest:
        """:meth:`call` up to ``fetch_url``: the answer, or the request to hand it (see :meth:`prepare_call_tool`)."""
        if name in IMPLEMENTED_EAGER:
            definition = next((t for t in self.eager if t["name"] == name), None)
            violations = validate(definition["parameters"], arguments) if definition else []
            if violations:
                return _dump(InvalidArguments(violations).document(name))
            if name == "load_tools":
                return _dump(self.load_tools(arguments["names"]))
            if name == "read_object":
                return self.read_object(arguments["path"])
            return self._fetch_url_request(arguments)
        operation = self._called.get(name)
        if operation is not None:
            tool = name
        elif name in self.catalogue.operations:
            tool = name  # a full tool name: what resolve answers, without building its answer
            operation = self._called[name] = self.catalogue.operations[name]
        else:
            resolution = self.catalogue.resolve(name)
            if resolution.tool is None:
                return _dump(
                    error(
                        resolution.code or "unknown-tool",
                        f"there is no tool {name!r}" + _candidates_hint(resolution.candidates),
                        candidates=resolution.candidates,
                    )
                )
            tool = resolution.tool
            operation = self.catalogue.operations[tool]
        if tool not in self.loaded:
            self.loaded.append(tool)  # called without loading: the declaration still decides
        # no log line of its own: fetch_url hands the host the whole request, and each crossing of the
        # wasm boundary costs more than the guest's work on a typical call
        try:
            return build_request(operation, arguments)
        except InvalidArguments as exc:
            return _dump(exc.document(tool))

    def load_tools(self, names: list[str]) -> JsonObject:
        loaded: list[str] = []
        problems: list[JsonObject] = []
        for asked in names:
            resolution = self.catalogue.resolve(asked)
            if resolution.tool is not None:
                if resolution.tool not in self.loaded:
                    self.loaded.append(resolution.tool)
                if resolution.tool not in loaded:
                    loaded.append(resolution.tool)
                continue
            problems.append({"name": asked, "code": resolution.code, "candidates": resolution.candidates})
        answer: JsonObject = {
            "loaded": [
                {"name": t, "description": self.catalogue.operations[t]["description"]} for t in loaded
            ]
        }
        if problems:
            answer["not_loaded"] = problems
            answer["message"] = "; ".join(_problem_text(p) for p in problems)
        return answer

    def read_object(self, path: str) -> str:
        answer = read_skill_object(self.catalogue, path)
        if answer is not None:
            return _dump(answer)
        return self.host.read_object(path)

    def fetch_url(self, arguments: JsonObject) -> str:
        answer = self._fetch_url_request(arguments)
        return answer if isinstance(answer, str) else self._send(answer)

    def _fetch_url_request(self, arguments: JsonObject) -> str | FetchRequest:
        url = str(arguments["url"])
        refusal = fetch_refusal(self.catalogue, url)
        if refusal is not None:
            return _dump(refusal)
        return {
            "method": str(arguments.get("method") or "GET").upper(),
            "url": url,
            "headers": dict(arguments.get("headers") or {}),
            "body": arguments.get("body"),
        }

    def _send_text(self, request: FetchRequest) -> str:
        return self.host.fetch_url(json_dump(request))

    def run_turn(self, request: str) -> str:
        """Run the agent loop for ``request`` (see :func:`skillhouse.guest.loop.run_turn`)."""
        return _dump(run_turn(self, request))


def _refuse_constant(name: str) -> Any:
    # Python reads NaN and Infinity; JSON has no such numbers and no API expects them
    raise ValueError(f"{name} is not a JSON number")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)
# the decoder's scanner (C's when there is one); typeshed does not declare the attribute
_SCAN: Callable[[str, int], tuple[Any, int]] = vars(_DECODER)["scan_once"]
# always a match (of nothing, at worst)
_SPACE = cast(Callable[[str, int], "re.Match[str]"], re.compile(r"[ \t\n\r]*").match)
"""``json.decoder.WHITESPACE.match``: what ``JSONDecoder.decode`` skips around the value."""


def _read_arguments(text: str) -> Any:
    """``json.loads(text, parse_constant=_refuse_constant)``, with one decoder for every call.

    ``JSONDecoder.decode`` and ``raw_decode`` written out around the decoder's scanner, with their errors:
    two Python frames fewer on every call, which the WebAssembly guest feels."""
    if text.startswith("\ufeff"):  # as json.loads refuses it
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    try:
        value, end = _SCAN(text, _SPACE(text, 0).end())
    except StopIteration as stop:
        raise json.JSONDecodeError("Expecting value", text, stop.value) from None
    end = _SPACE(text, end).end()
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def _candidates_hint(candidates: list[str]) -> str:
    return "; did you mean " + " or ".join(candidates) + "?" if candidates else ""


def _problem_text(problem: JsonObject) -> str:
    name, candidates = problem["name"], problem["candidates"]
    if problem["code"] == "ambiguous-name":
        return f"{name!r} is an operation of several skills; load one of " + ", ".join(candidates)
    if problem["code"] == "already-offered":
        return f"{name!r} is always offered; call it directly"
    return f"no tool or operation {name!r}" + _candidates_hint(candidates)


def _dump(value: Any) -> str:
    return json_dump(value)
