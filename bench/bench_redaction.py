"""Redacting a 1 MB answer that echoes a bound secret: the per-answer cost of ``gateway/redaction.py``."""

from __future__ import annotations

import json
import statistics
import time

from skillhouse.gateway.exchange import FetchResponse
from skillhouse.gateway.redaction import REDACTED, Redactor, forms_of

SECRET = "tok_9/Zq+x=&<a>'\"b%2F c"


def bodies() -> dict[str, str]:
    """About 1 MB each: a JSON listing with no escapes, and text with a percent, an entity and a JSON escape every 110 bytes."""
    plain = json.dumps([{"id": i, "name": f"room {i}", "url": f"https://h.example/r/{i}"} for i in range(14_500)])
    escaped = ("x" * 100 + "%20&amp;\\n") * (1_048_576 // 110)
    return {"JSON, no escapes": plain, "an escape every 110 bytes": escaped}


def run() -> str:
    redactor = Redactor([SECRET, f"Bearer {SECRET}"])
    lines = ["## bench_redaction", "", f"One bearer credential ({len(forms_of(SECRET).literals)} precomputed spellings, "
             "computed once per secret); the secret echoed once in the middle of the body; CPU time, median of 5.", "",
             "| body | size | redact + withhold check |", "|---|---|---|"]  # fmt: skip
    for label, body in bodies().items():
        echoed = body[: len(body) // 2] + SECRET + body[len(body) // 2 :]
        times = []
        for _ in range(5):
            started = time.process_time()
            answer = redactor.answer(200, {"Location": f"https://x.example/cb?t={SECRET}"}, echoed)
            times.append(time.process_time() - started)
            assert isinstance(answer, FetchResponse) and answer.body.count(REDACTED) == 1
        lines.append(f"| {label} | {len(echoed) / 1e6:.2f} MB | {statistics.median(times) * 1000:.0f} ms |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
