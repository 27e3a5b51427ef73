"""Provider profiles: the neutral tool definitions as each model provider accepts them.

One neutral definition per operation (``name``, ``description``, ``parameters`` and optional
``annotations``) is translated to each provider's wire format in one place per provider
(:mod:`.openai`, :mod:`.anthropic`, :mod:`.gemini`, :mod:`.bedrock`, :mod:`.mcp`; strict mode's
schema subset in :mod:`.strict`). Each module's docstring lists the published limits it relies on.
Profiles adapt rather than refuse wherever the meaning survives, and say what they changed; the
release's compatibility report (:func:`compatibility_report`) is every tool's verdict per profile.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence

from skillhouse.compiler.profiles import anthropic, bedrock, gemini, mcp, openai
from skillhouse.compiler.profiles.adaptation import (
    Adaptation,
    ToolRules,
    root_problem,
    schema_verdict,
    takes_as_declared,
)
from skillhouse.compiler.profiles.strict import neutral_arguments
from skillhouse.errors import CallerError

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from skillhouse.compiler.profiles.adaptation import SchemaRewrite
    from skillhouse.json_types import JsonObject, ProviderTool, ToolDefinition

    ProfileName = Literal["openai", "openai-strict", "anthropic", "gemini", "bedrock", "mcp"]
    _Deferral = Callable[[list[ProviderTool], list[ProviderTool]], list[ProviderTool]]

PROFILES: tuple[ProfileName, ...] = ("openai", "openai-strict", "anthropic", "gemini", "bedrock", "mcp")
"""The names of ``ProfileName``, which is made from them at run time (mypy checks each is one of the names
it sees; tests/test_typed_boundaries.py that none is missing)."""
SHAPES = openai.SHAPES
DEFERRING = ("openai", "openai-strict", "anthropic")
"""Profiles with native deferred loading (a provider-side tool search)."""


def __getattr__(name: str) -> object:
    """``ProfileName`` for the modules that read it at run time (the API's Pydantic models), made when
    first asked for: the library's import path does without typing."""
    if name == "ProfileName":
        from typing import Literal

        globals()[name] = profile_name = Literal[PROFILES]
        return profile_name
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ProfileError(CallerError, ValueError):
    """A request for something a profile does not offer (``invalid-profile``: unknown profile or shape,
    no deferral); the message lists what there is."""

    code = "invalid-profile"


def adapt(tool: ToolDefinition, profile: str, *, shape: str = "chat") -> Adaptation:
    """``tool`` adapted to ``profile``; ``shape`` chooses OpenAI's ``chat`` or ``responses`` form."""
    if shape not in SHAPES:
        raise ProfileError(f"unknown shape {shape!r}; one of: {', '.join(SHAPES)}")
    if profile in ("openai", "openai-strict"):
        return openai.adapt(tool, strict=profile == "openai-strict", shape=shape)
    if profile == "anthropic":
        return anthropic.adapt(tool)
    if profile == "gemini":
        return gemini.adapt(tool)
    if profile == "bedrock":
        return bedrock.adapt(tool)
    if profile == "mcp":
        return mcp.adapt(tool)
    raise ProfileError(f"unknown provider profile {profile!r}; one of: {', '.join(PROFILES)}")


def verdict(tool: ToolDefinition, profile: str) -> JsonObject:
    """``adapt(tool, profile).report()``: the tool's entry in the compatibility report, made without the
    provider's wire form (the report is every tool through every profile, at every compile)."""
    if profile in ("openai", "openai-strict"):
        return openai.verdict(tool, strict=profile == "openai-strict")
    if profile == "anthropic":
        return anthropic.verdict(tool)
    if profile == "gemini":
        return gemini.verdict(tool)
    if profile == "bedrock":
        return bedrock.verdict(tool)
    if profile == "mcp":
        return mcp.verdict(tool)
    raise ProfileError(f"unknown provider profile {profile!r}; one of: {', '.join(PROFILES)}")


def provider_tools(
    tools: Sequence[ToolDefinition],
    profile: str,
    *,
    deferred: bool = False,
    shape: str | None = None,
    eager: Sequence[ToolDefinition] = (),
) -> list[ProviderTool]:
    """The tool list ``profile``'s API accepts for ``tools``; refused tools are left out.

    With ``deferred=True`` the provider's native deferred loading is used: its tool search tool,
    the ``eager`` tools loaded from the start, every tool of ``tools`` deferred. OpenAI's tool search
    exists in the Responses API only, so ``shape`` defaults to ``responses`` when deferring.
    """
    chosen = shape or ("responses" if deferred and profile.startswith("openai") else "chat")
    if deferred:
        deferral = _deferral(profile, chosen)
        return deferral(_wire(eager, profile, chosen), _wire(tools, profile, chosen))
    wired = _wire([*eager, *tools], profile, chosen)
    if profile == "gemini":
        # Gemini takes declarations grouped in one Tool object.
        return [{"functionDeclarations": wired}] if wired else []
    return wired


def compatibility_report(tools: Sequence[ToolDefinition]) -> JsonObject:
    """Per profile and tool: ``ok``, ``adapted`` (with what changed and where) or ``refused`` (with why).

    ``listings`` (present only when one is) names the profiles whose whole tool list breaks a limit of
    its own, such as OpenAI's 128 tools per request, with the reason and what to do instead.
    """
    profiles: dict[str, JsonObject] = {profile: {} for profile in PROFILES}
    # One object per distinct change, and per distinct text and pointer in them: a large package's report
    # repeats a few dozen change texts thousands of times, a pointer once per profile that changed it, and
    # the same change for every tool with the same argument (Jira's: 3753 changes, 1144 distinct). Likewise
    # one {"status": "ok"} for every tool a profile takes as it is (two verdicts in three). Like the rest of
    # a release document, the report is never changed once made.
    strings: dict[str, str] = {}
    same = strings.setdefault
    changes_made: dict[tuple[str, str], JsonObject] = {}
    ok: JsonObject = {"status": "ok"}
    for tool in tools:  # one tool through every profile in a row: what they share of it is found once
        name = str(tool["name"])
        parameters = tool.get("parameters")
        description = tool.get("description") or ""
        # The usual tool: its root is one every profile takes, checked once, and each profile whose rules
        # take its name and description as they are (a name pattern is matched once) has only the
        # schema left to judge. Any other tool gets each profile's verdict in full.
        usual = type(tool.get("name")) is str and type(description) is str and root_problem(parameters) is None
        if usual and takes_as_declared(name, description, _TAKEN_EVERYWHERE, {}):
            # Every profile takes the name and description (nearly every tool): one verdict per
            # distinct schema judgement serves the profiles that share it (15M instructions fewer on Jira's
            # report, 1.1% of its import).
            assert isinstance(parameters, dict)  # root_problem says so
            for (rules, schema), alike in _JUDGED_ALIKE:
                judged = _made_once(schema_verdict(parameters, rules, schema), ok, changes_made, same)
                for profile in alike:
                    profiles[profile][name] = judged
            continue
        matched: dict[re.Pattern[str], bool] = {}
        for profile in PROFILES:
            rules, schema = _REPORTS[profile]
            if usual and takes_as_declared(name, description, rules, matched):
                assert isinstance(parameters, dict)  # root_problem says so
                judged = schema_verdict(parameters, rules, schema)
            else:
                judged = verdict(tool, profile)
            profiles[profile][name] = _made_once(judged, ok, changes_made, same)
    report: JsonObject = {"profiles": profiles}
    listings: JsonObject = {}
    for profile in PROFILES:
        offered = sum(1 for verdict in profiles[profile].values() if verdict["status"] != "refused")
        problem = listing_problem(profile, offered)
        if problem is not None:
            listings[profile] = {"tools": offered, "problem": problem}
    if listings:
        report["listings"] = listings
    return report


def _made_once(
    judged: JsonObject, ok: JsonObject, made: dict[tuple[str, str], JsonObject], same: Callable[[str, str], str]
) -> JsonObject:
    """``judged`` as the report holds it: the one ``ok``, or each change the report's one object for it
    (its pointer and text each the report's one string)."""
    changes = judged.get("changes")
    if changes is None:
        return ok if judged == ok else judged
    for index, change in enumerate(changes):
        key = (change["path"], change["change"])
        known = made.get(key)
        if known is None:
            change["path"], change["change"] = same(key[0], key[0]), same(key[1], key[1])
            known = made[key] = change
        changes[index] = known
    return judged


_REPORTS: dict[str, tuple[ToolRules, SchemaRewrite]] = {
    "openai": openai.REPORT,
    "openai-strict": openai.STRICT_REPORT,
    "anthropic": anthropic.REPORT,
    "gemini": gemini.REPORT,
    "bedrock": bedrock.REPORT,
    "mcp": mcp.REPORT,
}
"""Each profile's rules and report walk, as its :func:`verdict` takes them."""


def _judged_alike() -> tuple[tuple[tuple[ToolRules, SchemaRewrite], tuple[str, ...]], ...]:
    # schema_verdict reads of the rules only the property-name pattern
    alike: dict[tuple[re.Pattern[str] | None, SchemaRewrite], tuple[ToolRules, SchemaRewrite, list[str]]] = {}
    for profile in PROFILES:
        rules, schema = _REPORTS[profile]
        alike.setdefault((rules.property_name, schema), (rules, schema, []))[2].append(profile)
    return tuple(((rules, schema), tuple(profiles)) for rules, schema, profiles in alike.values())


_JUDGED_ALIKE = _judged_alike()
"""The profiles whose :func:`schema_verdict` is one for any schema (the same property-name pattern and
walk: OpenAI's plain profile and MCP's, Anthropic's and Bedrock's), with the rules and walk they share."""
_TAKEN_EVERYWHERE = ToolRules(
    name_pattern=re.compile(r"[A-Za-z_][A-Za-z0-9_-]*"),
    name_max=min(rules.name_max for rules, _ in _REPORTS.values()),
    description_min=max(rules.description_min for rules, _ in _REPORTS.values()),
    description_max=min(rules.description_max or sys.maxsize for rules, _ in _REPORTS.values()),
)
"""Names and descriptions every profile takes as they are: a name of this pattern matches each
profile's (a test holds it so), within the shortest of their length limits."""


def listing_problem(profile: str, count: int) -> str | None:
    """Why ``count`` tools cannot be listed at once to ``profile`` without deferral, or ``None``."""
    if profile in ("openai", "openai-strict"):
        return openai.listing_problem(count)
    return None


def _wire(tools: Sequence[ToolDefinition], profile: str, shape: str) -> list[ProviderTool]:
    adapted = (adapt(tool, profile, shape=shape) for tool in tools)
    return [a.tool for a in adapted if a.tool is not None]


def _deferral(profile: str, shape: str) -> _Deferral:
    if profile == "anthropic":
        return anthropic.deferred
    if profile in ("openai", "openai-strict"):
        if shape != "responses":
            raise ProfileError(
                "OpenAI's tool search exists in the Responses API only: use the 'responses' shape"
            )
        return openai.deferred
    if profile not in PROFILES:
        raise ProfileError(f"unknown provider profile {profile!r}; one of: {', '.join(PROFILES)}")
    raise ProfileError(
        f"{profile} has no native deferred loading (profiles that do: {', '.join(DEFERRING)}); "
        "offer the guest's load_tools instead"
    )


__all__ = [
    "DEFERRING",
    "PROFILES",
    "SHAPES",
    "Adaptation",
    "ProfileError",
    "ProfileName",
    "adapt",
    "compatibility_report",
    "listing_problem",
    "neutral_arguments",
    "provider_tools",
    "verdict",
]
