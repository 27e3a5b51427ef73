"""The client's import weighs no server stack, and its one table sends every code to a class of the error
tree: the codes it names by class, any other by the HTTP status it came with."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import httpx
import pytest

from skillhouse.client import AsyncClient, Client
from skillhouse.client.errors import (
    CODE_CLASSES,
    ClientError,
    Conflict,
    ConnectionRequired,
    NotFound,
    RequestRefused,
    ServerFailure,
    ServiceUnavailable,
    UpstreamFailed,
    class_for,
    error_for,
)
from skillhouse.client.exchange import answer_error
from skillhouse.errors import CallerError, ExternalFailure, Signal, family

SERVER_STACK = {"fastapi", "starlette", "sqlalchemy", "alembic", "uvicorn"}


def test_importing_the_client_loads_neither_fastapi_nor_sqlalchemy() -> None:
    shown = subprocess.run([sys.executable, "-c", "import json, sys, skillhouse.client; print(json.dumps(sorted(sys.modules)))"],
                           capture_output=True, text=True, timeout=60, check=True)
    loaded = {name.split(".")[0] for name in json.loads(shown.stdout)}
    assert {"httpx", "pydantic"} <= loaded  # the record is real: the client's own libraries are there
    assert loaded & SERVER_STACK == set()


def test_every_code_in_the_table_is_a_class_in_exactly_one_family() -> None:
    for code, kind in CODE_CLASSES.items():
        assert issubclass(kind, ClientError) and family(kind) is not None, code
    assert family(CODE_CLASSES["approval-required"]) is Signal
    assert family(CODE_CLASSES["rate-limited"]) is Signal and family(CODE_CLASSES["guest-building"]) is Signal
    assert issubclass(CODE_CLASSES["upstream-unresolved"], ExternalFailure)


@pytest.mark.parametrize(("status", "kind"), [
    (404, NotFound), (409, Conflict), (418, RequestRefused), (422, RequestRefused), (None, RequestRefused),
    (500, ServerFailure), (501, ServerFailure), (502, UpstreamFailed), (503, ServiceUnavailable),
])  # fmt: skip
def test_a_code_the_table_does_not_name_goes_to_the_class_of_its_status(status: int | None, kind: type) -> None:
    assert class_for("a-code-from-a-newer-server", status) is kind


def test_a_success_answer_that_is_not_the_body_the_client_reads_is_a_server_failure() -> None:
    # what a client meets behind a proxy that answers for the server, or a server of another version
    elsewhere = httpx.MockTransport(lambda request: httpx.Response(200, json={"hello": "world"}))
    with Client("http://127.0.0.1:9", "skh_x", transport=elsewhere) as client, \
            pytest.raises(ServerFailure) as unexpected:
        client.approval("apr_1")
    assert unexpected.value.code == "unexpected-answer" and unexpected.value.status == 200


def test_an_answer_that_is_not_the_error_body_is_still_an_error_of_its_status() -> None:
    proxy = httpx.Response(502, text="<html>Bad Gateway</html>", request=httpx.Request("GET", "http://x/v1/approvals"))
    error = answer_error(proxy)
    assert isinstance(error, UpstreamFailed) and error.code == "http-error" and error.status == 502
    refused = answer_error(httpx.Response(422, json={"error": {"code": "check-failed", "message": "see problems",
                                                               "problems": [{"code": "body-on-get", "message": "m",
                                                                             "file": "list_rooms.md", "line": 3}]}}))
    assert isinstance(refused, CallerError) and refused.code == "check-failed"
    assert [(p.file, p.line, p.code) for p in refused.problems] == [("list_rooms.md", 3, "body-on-get")]


def test_the_async_client_has_every_method_of_the_blocking_one_with_the_same_parameters() -> None:
    blocking = {name: member for name, member in inspect.getmembers(Client, inspect.isfunction) if not name.startswith("_")}
    awaited = {name: member for name, member in inspect.getmembers(AsyncClient, inspect.isfunction) if not name.startswith("_")}
    assert set(awaited) == set(blocking) - {"close"} | {"aclose"}
    for name, method in blocking.items():
        if name == "close":
            continue
        assert inspect.iscoroutinefunction(awaited[name]), name
        assert inspect.signature(awaited[name]).parameters == inspect.signature(method).parameters, name


def test_a_call_that_needs_the_subjects_connection_is_a_signal_carrying_the_url_to_give_the_person() -> None:
    # a call's own answer (``{"error": {...}}`` in the call's body), as the client reads it
    held = error_for({"code": "connection-required", "message": "connect first", "origin": "https://api.example.com",
                      "subject": "ada", "connect_url": "https://auth.example.com/authorize?state=s"}, None)
    assert isinstance(held, ConnectionRequired) and family(type(held)) is Signal
    assert held.connect_url == "https://auth.example.com/authorize?state=s"
