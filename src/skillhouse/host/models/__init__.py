"""Models behind the host's ``complete``: Chat Completions, Anthropic Messages, and a scripted model.

Every model answers ``complete(request: dict) -> dict`` per :mod:`skillhouse.guest.host`, so a turn
takes any of them: ``TurnHost(releases, fetch, complete=model_from_settings(settings).complete)``.
"""

from skillhouse.host.models.anthropic_messages import AnthropicMessagesModel
from skillhouse.host.models.base import ChatModel
from skillhouse.host.models.factory import ModelConfigError, ModelNotConfigured, model_from_settings
from skillhouse.host.models.openai_chat import OpenAIChatModel
from skillhouse.host.models.plans import PLANS, PROMPT, scripted_model
from skillhouse.host.models.scripted import Answer, Call, Calls, ScriptedModel, Step, Transcript

__all__ = [
    "PLANS",
    "PROMPT",
    "Answer",
    "AnthropicMessagesModel",
    "Call",
    "Calls",
    "ChatModel",
    "ModelConfigError",
    "ModelNotConfigured",
    "OpenAIChatModel",
    "ScriptedModel",
    "Step",
    "Transcript",
    "model_from_settings",
    "scripted_model",
]
