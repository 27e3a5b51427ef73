"""A real skillhouse API on loopback (uvicorn in a thread, SQLite, the in-process guest, the scripted model)
reaching the Hollowbrook house, and a token of each scope, for the client's tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cryptography.fernet import Fernet
from tests.api.served import serving_in_thread
from tests.hollowbrook import running_hollowbrook
from tests.scratch import scratch_database

from skillhouse.api import create_app
from skillhouse.examples import HollowbrookHTTPServer
from skillhouse.host.guest_state import GuestState
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings

HOLLOWBROOK = Path(__file__).resolve().parents[2] / "examples" / "hollowbrook"


@dataclass(frozen=True)
class Served:
    url: str
    house: HollowbrookHTTPServer
    tokens: dict[str, str]
    """Tenant ``acme``'s tokens by scope (``run``, ``approve``, ``admin``)."""


@contextmanager
def serving(directory: Path, guest: GuestState | None = None) -> Iterator[Served]:
    """The API with the Hollowbrook house behind it, until the block ends; its guest is ``guest`` (a wasm
    guest made ready by a test's ``load``), the in-process guest by default."""
    with running_hollowbrook() as house, scratch_database("sqlite", directory) as database:
        settings = Settings(data_dir=directory, database_url=database.url, guest=guest.kind if guest else "inprocess",
                            model="scripted",
                            resolve={("hollowbrook.local", 8084): f"127.0.0.1:{house.port}"},
                            secret_key=Fernet.generate_key().decode())
        app = create_app(settings, database, guest)
        with database.transaction() as session:
            tokens = {scope: create_token(session, "acme", scope=scope)[0] for scope in ("run", "approve", "admin")}
        try:
            if guest is not None:
                guest.start()  # what the app's lifespan does; uvicorn runs here without it
            with serving_in_thread(app) as url:
                yield Served(url, house, tokens)
        finally:
            app.state.guest.close()
            app.state.gateway.close() if hasattr(app.state, "gateway") else None
