"""The model a turn uses, chosen by ``SKILLHOUSE_MODEL``.

``scripted`` or ``scripted:PLAN``       the scripted model playing a plan (default ``demo``)
``openai:MODEL``                        Chat Completions at ``OPENAI_BASE_URL`` (default OpenAI's),
                                        key ``OPENAI_API_KEY`` (optional: local servers need none)
``anthropic:MODEL``                     Messages API at ``ANTHROPIC_BASE_URL``, key ``ANTHROPIC_API_KEY``;
                                        ``SKILLHOUSE_DEFERRED=1`` sends unloaded operations deferred

``SKILLHOUSE_MODEL_TIMEOUT`` (seconds) bounds every provider call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from skillhouse.errors import Unavailable
from skillhouse.host.models.anthropic_messages import DEFAULT_BASE_URL as ANTHROPIC_URL
from skillhouse.host.models.anthropic_messages import AnthropicMessagesModel
from skillhouse.host.models.base import DEFAULT_TIMEOUT, ChatModel
from skillhouse.host.models.openai_chat import DEFAULT_BASE_URL as OPENAI_URL
from skillhouse.host.models.openai_chat import OpenAIChatModel
from skillhouse.host.models.plans import scripted_model


class ModelConfigError(Unavailable, ValueError):
    """``SKILLHOUSE_MODEL`` or its companions name no model this build can reach (``model-unavailable``).

    The deployment's setting, not the caller's request, is wrong: an operator fixes the variable the
    message names. (A ``ValueError`` too: settings parsers catch it with their other bad values.)"""

    code = "model-unavailable"


def model_from_spec(spec: str, env: Mapping[str, str] | None = None) -> ChatModel:
    """The model ``spec`` names (see the module docstring); keys and URLs come from ``env``."""
    env = os.environ if env is None else env
    kind, _, name = spec.strip().partition(":")
    timeout = _timeout(env)
    if kind == "scripted":
        try:
            return scripted_model(name or "demo")
        except ValueError as exc:
            raise ModelConfigError(str(exc)) from None
    if not name:
        raise ModelConfigError(f"SKILLHOUSE_MODEL={spec!r} names no model; write {kind or 'openai'}:MODEL")
    if kind == "openai":
        return OpenAIChatModel(
            name, base_url=env.get("OPENAI_BASE_URL") or OPENAI_URL,
            api_key=env.get("OPENAI_API_KEY") or None, timeout=timeout,
        )
    if kind == "anthropic":
        key = env.get("ANTHROPIC_API_KEY") or None
        base_url = env.get("ANTHROPIC_BASE_URL") or ANTHROPIC_URL
        if key is None and base_url == ANTHROPIC_URL:
            raise ModelConfigError("anthropic:MODEL needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a proxy)")
        deferred = env.get("SKILLHOUSE_DEFERRED", "").lower() in ("1", "true", "yes")
        return AnthropicMessagesModel(name, api_key=key, base_url=base_url, deferred=deferred, timeout=timeout)
    raise ModelConfigError(f"SKILLHOUSE_MODEL={spec!r}: the kind must be scripted, openai or anthropic")


def model_from_env(env: Mapping[str, str] | None = None) -> ChatModel:
    """The model ``SKILLHOUSE_MODEL`` names (``scripted`` when unset)."""
    env = os.environ if env is None else env
    return model_from_spec(env.get("SKILLHOUSE_MODEL") or "scripted", env)


def _timeout(env: Mapping[str, str]) -> float:
    text = env.get("SKILLHOUSE_MODEL_TIMEOUT")
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        raise ModelConfigError(f"SKILLHOUSE_MODEL_TIMEOUT={text!r} is not a number of seconds") from None
    if value <= 0:
        raise ModelConfigError("SKILLHOUSE_MODEL_TIMEOUT must be more than 0")
    return value
