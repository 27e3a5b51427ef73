"""The round trip's Swagger 2.0 validator refuses what a Swagger 2.0 server would refuse."""

from __future__ import annotations

from typing import Any

from tests.openapi.swagger2_requests import problems

SPEC: dict[str, Any] = {
    "swagger": "2.0",
    "basePath": "/api",
    "paths": {
        "/chat.post/{channel}": {
            "post": {
                "parameters": [
                    {"name": "channel", "in": "path", "required": True, "type": "string"},
                    {"name": "token", "in": "header", "required": True, "type": "string"},
                    {"name": "limit", "in": "query", "type": "integer", "maximum": 10},
                    {"name": "ids", "in": "query", "type": "array", "items": {"type": "integer"}},
                    {"name": "text", "in": "formData", "required": True, "type": "string"},
                ]
            }
        }
    },
}


def request(query: str = "", body: str | None = "text=hi") -> dict[str, Any]:
    return {"method": "POST", "url": f"https://slack.test/api/chat.post/C1{query}",
            "headers": {"Content-Type": "application/x-www-form-urlencoded"}, "body": body}


def test_a_request_the_operation_accepts_has_no_problems() -> None:
    assert problems(SPEC, request("?limit=3&ids=1,2")) == []


def test_each_kind_of_mistake_is_found() -> None:
    assert problems(SPEC, request("?limit=30")) != []
    assert problems(SPEC, request("?ids=1,x")) != []
    assert problems(SPEC, request("?colour=red")) == ["undeclared query parameter 'colour'"]
    assert problems(SPEC, request(body=None)) == ["required formData parameter 'text' is missing"]
    assert problems(SPEC, {**request(), "url": "https://slack.test/api/nope"}) != []
