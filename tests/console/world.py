"""A small world for console tests: two tenants, published Hollowbrook releases, a running house,
the real gateway, and turns that call tools through the guest exactly as an agent's would."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from cryptography.fernet import Fernet
from fastapi import FastAPI
from tests.gateway.wire import fetch_json
from tests.real_parts import guest_cache

from skillhouse.api.app import create_app
from skillhouse.gateway import BoundReleases, CredentialStore, Gateway, GatewayConfig, TurnContext
from skillhouse.gateway.oauth_client import authorization_code_client
from skillhouse.host.runner import InProcessRunner
from skillhouse.host.turn import TurnHost
from skillhouse.registry.releases import publish_version
from skillhouse.registry.skills import put_version, validate_version
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings
from skillhouse.store import Database, open_database
from skillhouse.store.gateway_tables import OAuthConnectionRow, TurnRow

HOLLOWBROOK = Path(__file__).resolve().parents[2] / "examples" / "hollowbrook"
TENANT, RIVAL = "acme", "rival"
SECRET_KEY = Fernet.generate_key().decode()
"""The served console's credential key: the busy tenant's bindings are sealed with it."""

# 1.1.0: the charge takes an optional currency and a longer description; cancelling is gone
CHARGE_1_1 = """\
---
operation:
  method: POST
  url: http://hollowbrook.local:8084/charges
  body: [booking_id, amount_cents, description, currency]
  optional: [currency]
  integer: [amount_cents]
  identity: [booking_id, amount_cents]
approval:
  matches: POST /charges
  reason: A person confirms every charge to a guest's card.
---
Charge a booking's card an amount in cents of the given currency (euro unless said otherwise).

The charge is held until a person approves it.
"""


def hollowbrook_files() -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in HOLLOWBROOK.iterdir() if path.is_file()}


def publish(database: Database, tenant: str, skill: str, version: str, files: dict[str, str]) -> dict[str, Any]:
    """Upload, validate and publish through the registry's use cases; the release document."""
    with database.transaction() as session:
        put_version(session, tenant, skill, version, files)
        validate_version(session, tenant, skill, version)
        release, _ = publish_version(session, tenant, skill, version)
    return release.document


@dataclass
class World:
    database: Database
    gateway: Gateway
    tokens: dict[str, str]
    releases: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def turn(self, tenant: str, turn_id: str, version: str = "1.0.0") -> Turn:
        document = self.releases[(tenant, version)]
        record_turn(self.database, tenant, turn_id, document)
        context = TurnContext(tenant, turn_id, BoundReleases([document]))
        host = TurnHost([document], fetch=lambda request: self.gateway.fetch(context, request))
        return Turn(InProcessRunner(host))


@dataclass
class Turn:
    """One turn's guest; :meth:`call` is a model's tool call, answered as the model would see it."""

    runner: InProcessRunner

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = json.loads(self.runner.call_tool(tool, json.dumps(arguments)))
        return answer

    def book(self, guest: str, arrival: str, departure: str, room_id: int = 2) -> str:
        answer = self.call("hollowbrook_create_booking", {"room_id": room_id, "guest_name": guest,
                                                          "arrival": arrival, "departure": departure})
        assert answer.get("status") == 201, answer
        return str(json.loads(answer["body"])["booking_id"])

    def charge(self, booking_id: str, amount_cents: int, description: str) -> dict[str, Any]:
        return self.call("hollowbrook_charge", {"booking_id": booking_id, "amount_cents": amount_cents,
                                                "description": description})


def record_turn(database: Database, tenant: str, turn_id: str, document: dict[str, Any]) -> None:
    """Record the turn as ``POST /v1/turns`` would (its profile and bound release), so pages can say who asked."""
    with database.transaction() as session:
        if session.get(TurnRow, turn_id) is None:
            bound = {"skill": document["skill"], "version": document["version"], "digest": document["digest"]}
            session.add(TurnRow(id=turn_id, tenant_id=tenant, profile="openai", releases=[bound], created_at=time.time()))


def build_world(database_url: str, house_port: int) -> World:
    database = open_database(database_url)
    tokens: dict[str, str] = {}
    with database.transaction() as session:
        for tenant in (TENANT, RIVAL):
            tokens[tenant], _ = create_token(session, tenant, label=f"{tenant} console", scope="admin")
    gateway = Gateway(database, GatewayConfig(resolve={("hollowbrook.local", 8084): f"127.0.0.1:{house_port}"}))
    world = World(database, gateway, tokens)
    files = hollowbrook_files()
    world.releases[(TENANT, "1.0.0")] = publish(database, TENANT, "hollowbrook", "1.0.0", files)
    newer = {name: text for name, text in files.items() if name != "cancel_booking.md"} | {"charge.md": CHARGE_1_1}
    world.releases[(TENANT, "1.1.0")] = publish(database, TENANT, "hollowbrook", "1.1.0", newer)
    world.releases[(RIVAL, "1.0.0")] = publish(database, RIVAL, "hollowbrook", "1.0.0", files)
    with database.transaction() as session:
        put_version(session, RIVAL, "rival-secrets", "0.1.0", files | {"SKILL.md": files["SKILL.md"].replace(
            "name: hollowbrook", "name: rival-secrets")})
    return world


def console_app(world: World) -> FastAPI:
    settings = Settings(database_url=world.database.url, guest_cache=guest_cache(), secret_key=SECRET_KEY)
    return create_app(settings, database=world.database)


@contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """``app`` served by uvicorn on a loopback port in a thread; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="console", daemon=True)
    thread.start()
    started = threading.Event()
    # uvicorn has no start event to wait on; check its flag while joining the thread briefly
    for _ in range(3000):  # up to 30 s on a busy machine
        if server.started or not thread.is_alive():
            started.set()
            break
        thread.join(0.01)
    assert started.is_set() and server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


BUSY = "busy"
BIG_TOOLS = 120
_BIG_KINDS = ("shipment", "invoice", "parcel", "supplier")


def big_skill_files(count: int = BIG_TOOLS) -> dict[str, str]:
    """A skill of ``count`` read-only operations, a quarter of them about shipments (what the filter finds)."""
    files = {"SKILL.md": "---\nname: warehouse\ndescription: A large warehouse API, for paging and filtering.\n"
                         "metadata:\n  version: \"1.0.0\"\n---\n# Warehouse\n\nLook things up in the warehouse.\n"}
    for number in range(count):
        kind = _BIG_KINDS[number % len(_BIG_KINDS)]
        files[f"get_{kind}_{number:03d}.md"] = (
            f"---\noperation:\n  method: GET\n  url: https://warehouse.example/{kind}s/{number}\n---\n"
            f"Read {kind} record {number} of the warehouse, with its history.\n"
        )
    return files


def add_busy_tenant(world: World, approvals: int = 25, refused: int = 40) -> None:
    """A third tenant with more rows than a page: ``approvals`` held charges (each its own approval), ``refused``
    refused requests in the audit trail, a release of :data:`BIG_TOOLS` tools, and two credential bindings
    with one person's connection (so the credentials page shows its tables and every form)."""
    store = CredentialStore(world.database, SECRET_KEY)
    store.put(BUSY, "https://api.busy.example", "header", "busy-key-not-shown", "X-Api-Key")
    client = authorization_code_client("https://id.busy.example/authorize", "https://id.busy.example/token", "busy-app",
                                       "busy-client-secret", "https://skillhouse.busy.example/v1/connections/callback",
                                       ["profile"], "https://id.busy.example/revoke")
    store.put_client(BUSY, "https://people.busy.example", client)
    now = time.time()
    with world.database.transaction() as session:
        session.add(OAuthConnectionRow(tenant_id=BUSY, subject="ada@busy.example", origin="https://people.busy.example",
                                       client_id="busy-app", access_token=store.seal("busy-access"), refresh_token=None,
                                       scopes="profile", expires_at=now + 3600, connected_at=now, refreshed_at=now))
    with world.database.transaction() as session:
        world.tokens[BUSY], _ = create_token(session, BUSY, label="busy console", scope="admin")
    files = hollowbrook_files()
    world.releases[(BUSY, "1.0.0")] = publish(world.database, BUSY, "hollowbrook", "1.0.0", files)
    newer = {name: text for name, text in files.items() if name != "cancel_booking.md"} | {"charge.md": CHARGE_1_1}
    publish(world.database, BUSY, "hollowbrook", "1.1.0", newer)
    publish(world.database, BUSY, "warehouse", "1.0.0", big_skill_files())
    record_turn(world.database, BUSY, "turn-busy", world.releases[(BUSY, "1.0.0")])
    context = TurnContext(BUSY, "turn-busy", BoundReleases([world.releases[(BUSY, "1.0.0")]]))
    for number in range(approvals):
        body = json.dumps({"amount_cents": 100 + number, "booking_id": f"bk_{number:04d}", "description": "room"})
        answer = fetch_json(world.gateway, context, {"method": "POST", "url": "http://hollowbrook.local:8084/charges",
                                               "headers": {"Content-Type": "application/json"}, "body": body})
        assert answer["error"]["code"] == "approval-required", answer
    for number in range(refused):
        answer = fetch_json(world.gateway, context, {"method": "GET", "url": f"https://elsewhere.example/{number}",
                                               "headers": {}, "body": None})
        assert answer["error"]["code"] == "egress-refused", answer
