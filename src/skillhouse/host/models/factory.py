"""The model a turn uses, chosen by :attr:`Settings.model <skillhouse.settings.Settings.model>` (``SKILLHOUSE_MODEL``).

``openai:MODEL``                        Chat Completions at ``OPENAI_BASE_URL`` (default OpenAI's),
                                        key ``OPENAI_API_KEY`` (optional: local servers need none)
``anthropic:MODEL``                     Messages API at ``ANTHROPIC_BASE_URL``, key ``ANTHROPIC_API_KEY``;
                                        ``SKILLHOUSE_DEFERRED=1`` sends unloaded operations deferred
``scripted`` or ``scripted:PLAN``       the scripted model playing a plan (default ``demo``): the demo's
                                        and the tests', never a deployment's default
unset                                   no model: :class:`ModelNotConfigured`

``SKILLHOUSE_MODEL_TIMEOUT`` (seconds) bounds every provider call.
"""

from __future__ import annotations

from skillhouse.errors import Unavailable
from skillhouse.host.models.anthropic_messages import DEFAULT_BASE_URL as ANTHROPIC_URL
from skillhouse.host.models.anthropic_messages import AnthropicMessagesModel
from skillhouse.host.models.base import ChatModel
from skillhouse.host.models.openai_chat import DEFAULT_BASE_URL as OPENAI_URL
from skillhouse.host.models.openai_chat import OpenAIChatModel
from skillhouse.host.models.plans import PLANS, scripted_model
from skillhouse.settings import Settings

SPELLINGS = f"openai:MODEL, anthropic:MODEL or scripted[:PLAN] (plans: {', '.join(PLANS)})"


class ModelConfigError(Unavailable, ValueError):
    """``SKILLHOUSE_MODEL`` or its companions name no model this build can reach (``model-unavailable``).

    The deployment's setting, not the caller's request, is wrong: an operator fixes the variable the
    message names. (A ``ValueError`` too: settings parsers catch it with their other bad values.)"""

    code = "model-unavailable"


class ModelNotConfigured(ModelConfigError):
    """The deployment names no model (``SKILLHOUSE_MODEL`` is unset)."""

    code = "model-not-configured"


def model_from_settings(settings: Settings) -> ChatModel:
    """The model ``settings.model`` names (see the module docstring), with the keys and URLs of ``settings``."""
    spec = settings.model.strip()
    if not spec:
        raise ModelNotConfigured(f"no model is configured: set SKILLHOUSE_MODEL to {SPELLINGS}")
    kind, _, name = spec.partition(":")
    timeout = settings.model_timeout_seconds
    if kind == "scripted":
        try:
            return scripted_model(name or "demo")
        except ValueError as exc:
            raise ModelConfigError(f"SKILLHOUSE_MODEL={spec!r}: {exc}") from None
    if not name:
        raise ModelConfigError(f"SKILLHOUSE_MODEL={spec!r} names no model; write {kind or 'openai'}:MODEL")
    if kind == "openai":
        return OpenAIChatModel(name, base_url=settings.openai_base_url or OPENAI_URL,
                               api_key=settings.openai_api_key, timeout=timeout)
    if kind == "anthropic":
        base_url = settings.anthropic_base_url or ANTHROPIC_URL
        if settings.anthropic_api_key is None and base_url == ANTHROPIC_URL:
            raise ModelConfigError("anthropic:MODEL needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a proxy)")
        return AnthropicMessagesModel(name, api_key=settings.anthropic_api_key, base_url=base_url,
                                      deferred=settings.deferred, timeout=timeout)
    raise ModelConfigError(f"SKILLHOUSE_MODEL={spec!r}: write {SPELLINGS}")
