"""What a person decides an approval on, read from the held request: summary, key arguments, who asked."""

from __future__ import annotations

import json
from typing import Any

from skillhouse.api.console.approval_facts import Argument, approval_facts, first_sentence, request_arguments
from skillhouse.gateway import Approval


def approval(url: str, body: Any, operation: str | None = "shop.refund") -> Approval:
    canonical = {"method": "POST", "url": url, "headers": {}, "body": body}
    return Approval("apr_1", "acme", "turn-1", operation, "", canonical, "sha256:00", "pending", 1.0, 2.0, None)


def test_key_arguments_put_amounts_ids_and_names_first_then_the_rest_in_the_requests_order() -> None:
    body = {"text": json.dumps({"note": "n", "colour": "red", "order_id": "o_1", "amount": 250, "tags": ["a"],
                                "size": "L", "customer_name": "Ada", "extra": {"x": 1}})}
    facts = approval_facts(approval("https://shop.example/refunds?currency=eur", body),
                           {"description": "Refund part of an order. The money goes back to the card."}, "2.0.0")
    assert facts.summary == "Refund part of an order."
    assert [a.name for a in facts.key_arguments] == ["currency", "amount", "order_id", "customer_name", "note", "colour"]
    assert facts.argument_count == 9
    assert (facts.skill, facts.version) == ("shop", "2.0.0")


def test_every_argument_is_shown_as_sent_lists_and_objects_as_json() -> None:
    body = {"text": json.dumps({"amount": 250, "tags": ["a", "b"], "extra": {"x": 1}, "name": "Zoë"})}
    assert request_arguments(approval("https://shop.example/r", body).canonical) == [
        Argument("amount", "250"), Argument("tags", '["a", "b"]'), Argument("extra", '{"x": 1}'), Argument("name", "Zoë")]
    assert request_arguments(approval("https://shop.example/r", {"text": "a=1&b=two"}).canonical) == [
        Argument("a", "1"), Argument("b", "two")]
    assert request_arguments(approval("https://shop.example/r", {"json": {"k": True}}).canonical) == [Argument("k", "true")]
    assert request_arguments(approval("https://shop.example/r", None).canonical) == []


def test_without_the_operation_the_summary_is_the_request_itself() -> None:
    facts = approval_facts(approval("https://shop.example/refunds?x=1", None, operation=None), None, None)
    assert facts.summary == "POST shop.example/refunds"
    assert (facts.skill, facts.version, facts.key_arguments) == (None, None, [Argument("x", "1")])


def test_the_first_sentence_stops_at_its_full_stop_and_joins_lines() -> None:
    assert first_sentence("Charge a card\nin cents. Held for a person.") == "Charge a card in cents."
    assert first_sentence("No full stop") == "No full stop"
