"""The HTTP API's JSON bodies as Pydantic models, shared by the server that answers them and the client that reads them.

``skillhouse.api`` declares its routes with these models and ``skillhouse.client`` parses the answers
with the very same ones, so a field the server adds or renames is one change that both sides see (and
mypy checks). Nothing here imports FastAPI, Starlette or SQLAlchemy: the client imports this package
without the server stack. The limits a body enforces (``MAX_SKILLS``, ``NOTE_LIMIT``) are the API
contract's, and the registry and the gateway check the same constants.

- :mod:`skillhouse.wire.errors`: the one error body, ``{"error": {"code", "message", "problems"}}``.
- :mod:`skillhouse.wire.skills`: skill versions, releases and their tools (``/v1/skills``).
- :mod:`skillhouse.wire.turns`: turns, tool calls and agent runs (``/v1/turns``).
- :mod:`skillhouse.wire.approvals`: held requests and decisions (``/v1/approvals``).
- :mod:`skillhouse.wire.credentials`: credential bindings (``/v1/credentials``).
"""
