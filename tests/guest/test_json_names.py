"""The guest's names for the JSON it reads and writes are the ones the rest of skillhouse uses.

The guest cannot import :mod:`skillhouse.json_types` (it is built into the component on its own), so
:mod:`skillhouse.guest.values` keeps copies; a copy that drifts to another type fails here.
"""

from __future__ import annotations

from skillhouse import json_types
from skillhouse.guest import values

GUEST_NAMES = ("JsonObject", "JsonSchema", "OperationDocument", "ToolDefinition", "ChatMessage")
RENAMED = {"FetchRequest": "FetchRequestDocument"}
"""The guest's request is the JSON document; past the host it is the gateway's typed ``FetchRequest``."""


def test_each_guest_name_is_the_type_json_types_gives_it() -> None:
    assert {name: getattr(values, name) for name in GUEST_NAMES} == {name: getattr(json_types, name) for name in GUEST_NAMES}
    assert {name: getattr(values, name) for name in RENAMED} == {name: getattr(json_types, other)
                                                                 for name, other in RENAMED.items()}

