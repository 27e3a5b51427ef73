"""Compile a generated package of 1,000 operations: time and peak memory."""

from __future__ import annotations

import json
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from skillhouse.compiler import compile_dir

OPERATIONS = 1000


def generate(root: Path, count: int = OPERATIONS) -> Path:
    """A package mixing flat-list and schema-form operations that share types."""
    pkg = root / "generated"
    pkg.mkdir()
    (pkg / "SKILL.md").write_text("---\nname: generated\ndescription: A generated skill for benchmarks.\n---\nUse it.\n")
    types = {
        "Address": {"type": "object", "properties": {"line1": {"type": "string"}, "city": {"type": "string"}, "country": {"type": "string", "pattern": "^[A-Z]{2}$"}}},
        "Customer": {"type": "object", "properties": {"name": {"type": "string"}, "address": {"$ref": "#/types/Address"}, "tags": {"type": "array", "items": {"type": "string"}}}},
        "Node": {"type": "object", "properties": {"id": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/types/Node"}}}},
    }
    (pkg / "types.json").write_text(json.dumps(types))
    for i in range(count):
        if i % 2:
            text = (
                "---\noperation:\n  method: POST\n"
                f"  url: https://api.test/v1/things{i}/{{thing_id}}/items\n"
                "  query: [dry_run]\n  body: [sku, quantity, note, tags]\n  optional: [dry_run, note, tags]\n"
                "  integer: [quantity]\n  boolean: [dry_run]\n  list: [tags]\n  identity: [sku, quantity]\n"
                f"---\nAdd an item to thing {i}.\n\nMore prose about the operation.\n"
            )
        else:
            schema = {
                "type": "object",
                "required": ["customer"],
                "properties": {
                    "customer": {"$ref": "#/types/Customer"},
                    "tree": {"$ref": "#/types/Node"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                    "status": {"type": "string", "enum": ["open", "closed"]},
                },
            }
            text = (
                f"---\noperation:\n  method: PUT\n  url: https://api.test/v1/customers{i}/{{id}}\n  query: [limit]\n"
                f"  schema: |\n    {json.dumps(schema)}\n---\nReplace customer {i}.\n"
            )
        (pkg / f"op_{i:04d}.md").write_text(text)
    return pkg


def run() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        pkg = generate(Path(tmp))
        times = []
        for _ in range(3):
            start = time.process_time()
            compiled, errors = compile_dir(pkg)
            times.append(time.process_time() - start)
            assert compiled is not None and not errors, errors[:3]
        tracemalloc.start()
        compile_dir(pkg)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        size = len(compiled.canonical())
    median = statistics.median(times)
    return (
        "## Compile: a generated package of 1,000 operations\n\n"
        "| measure | value |\n|---|---|\n"
        f"| read + check + compile + hash (CPU time, median of 3) | {median * 1000:.0f} ms ({median / OPERATIONS * 1e6:.0f} µs per operation) |\n"
        f"| peak memory allocated while compiling (tracemalloc) | {peak / 1e6:.1f} MB |\n"
        f"| canonical release size | {size / 1e6:.2f} MB |\n"
    )


if __name__ == "__main__":
    print(run())
