"""Per-call cost of the guest: validating a call's arguments and translating it into its request.

Hollowbrook's ``create_booking`` (five flat arguments) and Stripe's ``POST /v1/checkout/sessions``
as the OpenAPI wizard imports it from the vendored ``stripe-2023-09.yaml`` (tests/data/openapi) (a form-encoded
operation whose expanded schema is about 25 KB), each called with realistic arguments.
"""

from __future__ import annotations

import statistics
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.corpus import corpus_spec

from skillhouse.compiler import compile_dir
from skillhouse.guest import build_request, translate, validate

ROOT = Path(__file__).resolve().parents[1]
STRIPE_SPEC = corpus_spec("stripe-2023-09.yaml")

BOOKING = {
    "room_id": 2,
    "guest_name": "Ada Lovelace",
    "arrival": "2031-06-01",
    "departure": "2031-06-03",
    "note": "late",
}
CHECKOUT = {
    "mode": "payment",
    "success_url": "https://shop.example/done?session={CHECKOUT_SESSION_ID}",
    "cancel_url": "https://shop.example/cart",
    "customer_email": "ada@example.org",
    "line_items": [{"price": "price_1Nroom", "quantity": 2}, {"price": "price_1Nbreakfast", "quantity": 4}],
    "metadata": {"booking_id": "bk_0001", "channel": "agent"},
    "payment_method_types": ["card"],
    "allow_promotion_codes": False,
    "expires_at": 1790000000,
    "expand": ["payment_intent", "line_items"],
}


def _per_call_us(action: Callable[[], Any]) -> float:
    """Median microseconds per call over five timed runs."""
    timer = timeit.Timer(action, timer=time.process_time)
    number, _ = timer.autorange()
    runs = timer.repeat(repeat=5, number=number)
    return statistics.median(runs) / number * 1e6


def _row(label: str, operation: dict[str, Any], arguments: dict[str, Any]) -> str:
    build_request(operation, arguments)  # refuses here, not inside the timing, if the arguments are wrong
    schema = operation["schema"]
    checked = _per_call_us(lambda: validate(schema, arguments))
    translated = _per_call_us(lambda: translate(operation, arguments))
    both = _per_call_us(lambda: build_request(operation, arguments))
    size = len(str(schema))
    return f"| {label} | {size:,} | {checked:.1f} | {translated:.1f} | {both:.1f} |"


def _stripe_checkout() -> dict[str, Any] | None:
    try:
        from skillhouse.openapi import import_openapi
    except ImportError:
        return None
    result = import_openapi(STRIPE_SPEC, include=["POST /v1/checkout/sessions"])
    if result.compiled is None or not result.compiled.document["operations"]:
        return None
    operation: dict[str, Any] = result.compiled.document["operations"][0]
    return operation


def run() -> str:
    compiled, errors = compile_dir(ROOT / "examples" / "hollowbrook")
    assert compiled is not None, errors
    booking = next(op for op in compiled.document["operations"] if op["name"] == "create_booking")
    rows = [_row("Hollowbrook `create_booking` (json)", booking, BOOKING)]
    checkout = _stripe_checkout() if STRIPE_SPEC.exists() else None
    if checkout is not None:
        rows.append(_row("Stripe `POST /v1/checkout/sessions` (form, via the wizard)", checkout, CHECKOUT))
    lines = [
        "## Guest: validation and translation per call",
        "",
        "CPU time, median of five timed runs, microseconds per call, in one process. `build_request` is what a tool",
        "call costs the guest before `fetch_url`: every violation collected, then the request built.",
        "",
        "| operation | schema chars | validate µs | translate µs | build_request µs |",
        "|---|---:|---:|---:|---:|",
        *rows,
    ]
    if checkout is None:
        lines += ["", "The Stripe operation was not measured: the wizard could not import it here."]
    lines += ["", "The same cost against FastMCP's OpenAPI tool, in one process, is in the section of `bench_fastmcp_call`."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
