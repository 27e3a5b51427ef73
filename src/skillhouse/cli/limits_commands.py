"""``skillhouse limits list|set|delete``: a tenant's rate limits, on the store the settings name.

The same store and checks the API's ``/v1/limits`` uses, so a limit set here holds on every replica
from the next call on. ``list`` also prints the waits upstreams asked for (``429``/``503`` with
``Retry-After``) that have not passed. Every refusal prints ``error: CODE: message`` and exits 1
(2 for bad settings).
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from skillhouse.cli.gateway_commands import Tenant, _gateway

limits_app = typer.Typer(help="Rate limits per tenant, operation and upstream host, held across replicas.",
                         no_args_is_help=True)

Scope = Annotated[str, typer.Option("--scope", help="tenant (every call), operation (one tool) or host.")]
Subject = Annotated[str, typer.Option("--subject", help="skill.operation for an operation limit, the host name for a "
                                                        "host limit; empty for a tenant limit.")]


@limits_app.command("list")
def limits_list(tenant: Tenant) -> None:
    """One line per limit (scope, subject, requests per window), then one per upstream wait in force."""
    with _gateway() as gateway:
        for limit in gateway.limits.limits(tenant):
            print(f"{limit.scope}\t{limit.subject or '-'}\t{limit.shown}")
        for wait in gateway.limits.waits(tenant):
            print(f"upstream-wait\t{wait.host}\tanswered {wait.status}\tuntil {wait.until:.0f}")


@limits_app.command("set")
def limits_set(
    tenant: Tenant,
    scope: Scope,
    subject: Subject = "",
    requests: Annotated[int | None, typer.Option("--requests", help="Calls admitted per window (also the largest "
                                                                    "burst); with --window.")] = None,
    window: Annotated[float | None, typer.Option("--window", help="The window, in seconds.")] = None,
    concurrent: Annotated[int | None, typer.Option("--concurrent", help="Calls in flight at once.")] = None,
) -> None:
    """Set (or change) a limit: REQUESTS calls per WINDOW seconds, CONCURRENT calls at once, or both."""
    with _gateway() as gateway:
        limit = gateway.limits.set(tenant, scope, subject, requests, window, concurrent)
    print(f"set the {limit.name} limit of tenant {tenant}: {limit.shown}", file=sys.stderr)


@limits_app.command("delete")
def limits_delete(tenant: Tenant, scope: Scope, subject: Subject = "") -> None:
    """Remove a limit; calls stop being held by it at once."""
    with _gateway() as gateway:
        gateway.limits.delete(tenant, scope, subject)
    print(f"deleted the {scope} limit{f' on {subject}' if subject else ''} of tenant {tenant}", file=sys.stderr)


def add_limits_commands(app: typer.Typer) -> None:
    app.add_typer(limits_app, name="limits")
