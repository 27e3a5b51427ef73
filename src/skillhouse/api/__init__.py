"""The HTTP API: ``create_app(settings)``; routers in ``routes_*.py``; auth and session in ``deps``."""

from skillhouse.api.app import create_app

__all__ = ["create_app"]
