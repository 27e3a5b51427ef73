"""What every framework integration shares, without any framework: a bound turn's tools, offered all
at once or deferred behind ``load_tools``, and a call's answer as the value a tool hands its model.

Deferred loading: the HTTP API offers a turn's every operation; a framework that asks for its tools
at each step (a dynamic toolset) is offered ``load_tools`` and ``read_object`` first, and each
operation from the step after ``load_tools`` loaded it, as the guest's agent loop does. ``load_tools``
is answered here (it sends nothing anywhere); every other call goes to the server.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from skillhouse.client import OfferedTool, model_answer, offered_tools
from skillhouse.json_types import JsonObject
from skillhouse.wire.turns import CallAnswer, TurnOut

LOAD_TOOLS = "load_tools"
ALWAYS_OFFERED = ("read_object",)
"""The turn's tools offered from the first step when loading is deferred (besides ``load_tools``)."""

APPROVAL_TEXT = (
    "Nothing was sent: a person must approve this request first (approval {approval_id}). Tell the user it "
    "is waiting for approval. Once it is approved, repeat the identical call (same tool, same arguments) "
    "and it runs once; a changed call needs a new approval."
)


@dataclass
class TurnTools:
    """A bound turn's tools for a framework: which it offers now, and ``load_tools`` when ``deferred``."""

    turn: TurnOut
    deferred: bool = False
    tools: dict[str, OfferedTool] = field(init=False)
    loaded: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.tools = {tool.name: tool for tool in offered_tools(self.turn.tools)}

    @property
    def operations(self) -> list[str]:
        """The names of the turn's operations (every tool but the always-offered ones)."""
        return [name for name in self.tools if name not in ALWAYS_OFFERED]

    def offered(self) -> list[OfferedTool]:
        """The tools to offer the model now: all of them, or ``load_tools``, ``read_object`` and those
        loaded so far when deferred."""
        if not self.deferred:
            return list(self.tools.values())
        now = [self.tools[name] for name in (*ALWAYS_OFFERED, *self.loaded) if name in self.tools]
        return [self.load_tools_tool(), *now]

    def load_tools_tool(self) -> OfferedTool:
        """``load_tools``, its description naming each operation it can load."""
        listed = "; ".join(f"{name}: {_first_line(self.tools[name].description)}" for name in self.operations)
        return OfferedTool(
            LOAD_TOOLS,
            "Load tools so you can call them: pass the names of the operations you need, as full tool names "
            "or as the skill lists them (e.g. 'create_booking'). Loaded tools are offered from your next "
            f"step. Operations: {listed}",
            {
                "type": "object",
                "properties": {"names": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1,
                                         "description": "Operation or tool names to load."}},
                "required": ["names"],
                "additionalProperties": False,
            },
        )

    def resolve(self, name: str) -> str | None:
        """The operation ``name`` means: a full tool name, or the skill's name for it where exactly one
        bound skill has it."""
        if name in self.operations:
            return name
        matches = [f"{r.skill}_{name}" for r in self.turn.releases if f"{r.skill}_{name}" in self.operations]
        return matches[0] if len(matches) == 1 else None

    def load(self, names: list[str]) -> JsonObject:
        """Answer a ``load_tools`` call: which tools were loaded, and the names that match none."""
        loaded: list[str] = []
        unknown: list[str] = []
        for asked in names:
            tool = self.resolve(asked)
            if tool is None:
                unknown.append(asked)
                continue
            if tool not in self.loaded:
                self.loaded.append(tool)
            if tool not in loaded:
                loaded.append(tool)
        answer: JsonObject = {"loaded": [{"name": t, "description": self.tools[t].description} for t in loaded]}
        if unknown:
            answer["not_loaded"] = unknown
            answer["message"] = f"no operation named {', '.join(unknown)}; the operations are {', '.join(self.operations)}"
        return answer


def tool_result(answer: CallAnswer) -> Any:
    """A call's answer as its tool's result: what the model reads (:func:`skillhouse.client.model_answer`),
    a held request with what to do about it (``error.next``), never an exception."""
    result = model_answer(answer)
    error = result.get("error") if isinstance(result, dict) else None
    if isinstance(error, dict) and error.get("code") == "approval-required":
        error["next"] = APPROVAL_TEXT.format(approval_id=error.get("approval_id"))
    return result


def result_text(result: Any) -> str:
    """A tool result as the JSON text of a framework whose tools answer strings."""
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
