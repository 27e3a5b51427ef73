"""``make demo``: what skillhouse does, shown on the Hollowbrook guesthouse skill."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table

from skillhouse.compiler import compile_dir, neutral_tool

HOLLOWBROOK = Path(__file__).resolve().parents[2] / "examples" / "hollowbrook"


def main() -> int:
    console = Console()
    console.rule("[bold]skillhouse demo: Hollowbrook[/bold]")
    console.print(f"$ skillhouse check {HOLLOWBROOK.name}")
    compiled, errors = compile_dir(HOLLOWBROOK)
    if compiled is None:
        for error in errors:
            console.print(f"[red]{error}[/red]")
        return 1
    console.print(f"[green]ok[/green]: {len(compiled.operations)} operations, release {compiled.digest}\n")

    table = Table(title="Operations as tools", show_lines=False)
    for column in ("tool", "request", "arguments", "identity", "approval"):
        table.add_column(column)
    for op in compiled.operations:
        args = ", ".join(f"{a.name} ({a.location})" for a in op.arguments)
        table.add_row(
            op.tool_name,
            f"{op.method} {op.url}",
            args,
            ", ".join(op.identity) or "-",
            op.approval["matches"] if op.approval else "-",
        )
    console.print(table)

    booking = next(op for op in compiled.operations if op.name == "create_booking")
    console.print(Panel(Syntax(json.dumps(neutral_tool(booking), indent=2), "json"), title="$ skillhouse tools: create_booking"))
    size = len(compiled.canonical())
    console.print(f"$ skillhouse compile: canonical release JSON, {size} bytes, {compiled.digest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
