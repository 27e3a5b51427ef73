"""The ``skillhouse`` command as a Typer app: every command, its options and help.

``skillhouse`` (:func:`skillhouse.cli.main`) runs ``import-openapi`` and ``tools`` without importing
this module when their argv is plain (:mod:`skillhouse.cli.fast`); their bodies are in
:mod:`skillhouse.cli.hot_commands`, which both paths call.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from skillhouse.cli import hot_commands
from skillhouse.cli.hot_commands import compiled_or_exit, report_errors
from skillhouse.cli.output import err, out
from skillhouse.json_types import ToolAnswer

if TYPE_CHECKING:
    from typer.models import CommandInfo

_APP_SETTINGS: dict[str, Any] = {
    "name": "skillhouse",
    "help": "HTTP operations declared in skill files, offered to LLM agents as tools.",
    "no_args_is_help": True,
    "add_completion": False,
    "pretty_exceptions_enable": False,
    # plain help and usage errors: rich's help rendering alone would double `skillhouse --help`'s start-up
    "rich_markup_mode": None,
}
app = typer.Typer(**_APP_SETTINGS)


@app.command()
def check(paths: Annotated[list[Path], typer.Argument(help="Skill package directories.")]) -> None:
    """Check skill packages; print each error as FILE:LINE: CODE: message."""
    from skillhouse.compiler import compile_dir  # here: start-up time (see hot_commands.compiled_or_exit)

    failed = 0
    for path in paths:
        compiled, errors = compile_dir(path)
        if compiled is None:
            report_errors(errors)
            failed += 1
        else:
            ops = len(compiled.operations)
            err.print(f"[green]ok[/green] {path}: {ops} operation{'s' if ops != 1 else ''}, {compiled.digest}")
    if failed:
        err.print(f"[red]{failed} of {len(paths)} package{'s' if len(paths) != 1 else ''} failed[/red]")
        raise typer.Exit(1)


@app.command("compile")
def compile_(
    path: Annotated[Path, typer.Argument(help="A skill package directory.")],
    out_file: Annotated[Path | None, typer.Option("--out", help="Write the release here instead of stdout.")] = None,
    version: Annotated[str | None, typer.Option("--version", help="Release version (default: metadata.version).")] = None,
) -> None:
    """Compile a skill package into its canonical release JSON."""
    compiled = compiled_or_exit(path, version)
    data = compiled.canonical()
    if out_file is None:
        sys.stdout.buffer.write(data + b"\n")
        sys.stdout.flush()
    else:
        out_file.write_bytes(data)
        err.print(f"wrote {out_file} ({len(data)} bytes, {compiled.digest})")


@app.command()
def tools(
    path: Annotated[Path, typer.Argument(help="A skill package directory.")],
    provider: Annotated[
        str | None, typer.Option("--provider", help="openai, openai-strict, anthropic, gemini, bedrock or mcp.")
    ] = None,
    deferred: Annotated[
        bool, typer.Option("--deferred", help="Use the provider's native deferred loading (tool search).")
    ] = False,
    shape: Annotated[
        str | None, typer.Option("--shape", help="OpenAI: chat (Chat Completions) or responses.")
    ] = None,
) -> None:
    """Print the tool definitions as JSON: neutral, or as PROVIDER's API accepts them."""
    hot_commands.tools(path, provider, deferred, shape)


@app.command()
def translate(
    path: Annotated[Path, typer.Argument(help="A skill package directory.")],
    tool: Annotated[str, typer.Argument(help="Full tool name, or the operation name the skill lists.")],
    arguments: Annotated[str, typer.Argument(help="The call's arguments as a JSON object.")],
) -> None:
    """Print the request a call becomes (nothing is sent), or the refusal with exit status 1."""
    # here: start-up time (see hot_commands.compiled_or_exit)
    from skillhouse.compiler.eager_tools import EAGER_TOOLS
    from skillhouse.guest import (
        BoundSkill,
        Catalogue,
        InvalidArguments,
        Violation,
        build_request,
    )

    compiled = compiled_or_exit(path)
    catalogue = Catalogue([BoundSkill.from_document(compiled.document)], EAGER_TOOLS)
    resolution = catalogue.resolve(tool)
    answer: ToolAnswer
    if resolution.tool is None:
        answer = {
            "error": {
                "code": resolution.code or "unknown-tool",
                "message": f"no operation {tool!r} in {path}",
                "candidates": resolution.candidates,
            }
        }
    else:
        try:
            decoded = json.loads(arguments)
            answer = build_request(catalogue.operations[resolution.tool], decoded)
        except (json.JSONDecodeError, RecursionError) as exc:
            where = f" at character {exc.pos}" if isinstance(exc, json.JSONDecodeError) else ""
            problem = Violation("$", "not-json", f"a JSON object of arguments (it did not parse{where})")
            answer = InvalidArguments([problem]).document(resolution.tool)
        except InvalidArguments as refusal:
            answer = refusal.document(resolution.tool)
    print(json.dumps(answer, indent=2, ensure_ascii=False))
    if "error" in answer:
        raise typer.Exit(1)


@app.command("import-openapi")
def import_openapi_command(
    spec: Annotated[Path, typer.Argument(help="An OpenAPI 3.x or Swagger 2.0 spec, JSON or YAML.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory the skill goes in, as DIR/NAME.")],
    name: Annotated[str | None, typer.Option("--name", help="Skill name (default: from the spec's title).")] = None,
    include: Annotated[list[str] | None, typer.Option("--include", help="Only operations matching (glob on name, operationId, 'METHOD /path', tag:T).")] = None,
    exclude: Annotated[list[str] | None, typer.Option("--exclude", help="Leave out operations matching (same patterns).")] = None,
    server: Annotated[str | None, typer.Option("--server", help="Base URL instead of the spec's servers.")] = None,
    report_file: Annotated[Path | None, typer.Option("--report", help="Also write the full report as JSON here.")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", help="A line per operation, with what was changed or why skipped.")] = False,
    allow_remote_refs: Annotated[bool, typer.Option("--allow-remote-refs", help="Fetch $refs to http(s) URLs (refused by default).")] = False,
    allow_ref_root: Annotated[list[Path] | None, typer.Option("--allow-ref-root", help="A directory outside the spec's own that file $refs may read (repeatable).")] = None,
) -> None:
    """Write a skill package from an OpenAPI spec into DIR/NAME; print a summary of what became tools."""
    hot_commands.import_openapi(
        spec, out_dir, name, include, exclude, server, report_file, verbose, allow_remote_refs, allow_ref_root
    )


@app.command("export")
def export_command(
    path: Annotated[Path, typer.Argument(help="A skill package directory or a release JSON file.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory the bundle goes in, as DIR/NAME.")],
) -> None:
    """Export a skill as an Agent Skills bundle with a generated "The call" reference per operation."""
    # here: start-up time (see hot_commands.compiled_or_exit)
    from skillhouse.cli.output import skill_directory_or_exit
    from skillhouse.export import export_release, write_bundle

    if path.is_file():
        try:
            document = json.loads(path.read_bytes())
        except (ValueError, RecursionError) as exc:
            print(f"{path}: not a release JSON document: {exc}", file=sys.stderr)
            raise typer.Exit(1) from None
        if not isinstance(document, dict) or "skill" not in document or "operations" not in document:
            print(f"{path}: not a release document (no 'skill' and 'operations')", file=sys.stderr)
            raise typer.Exit(1)
    else:
        document = compiled_or_exit(path).document
    target = skill_directory_or_exit(out_dir, str(document["skill"]))
    files = export_release(document)
    write_bundle(files, target)
    err.print(f"wrote {target} ({len(files)} files)")


def _add_registry_commands() -> None:
    # here: start-up time (see hot_commands.compiled_or_exit)
    from skillhouse.cli.registry_commands import add_registry_commands

    add_registry_commands(app)


_add_registry_commands()


@app.command("build-guest")
def build_guest(
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir", help="Where to cache it (default: SKILLHOUSE_GUEST_CACHE, else <data dir>/guest)."
        ),
    ] = None,
) -> None:
    """Build the guest WebAssembly component and compile it, unless the cache already has this version."""
    # here: start-up time (see hot_commands.compiled_or_exit)
    from skillhouse.cli.environment import settings_or_exit
    from skillhouse.host.wasm_build import GuestBuildError, ensure_component

    cache_dir = cache_dir or settings_or_exit().guest_cache_dir()
    with err.status("looking for the guest component in the cache") as status:
        try:
            built = ensure_component(cache_dir=cache_dir, progress=status.update)
        except GuestBuildError as exc:
            print(f"error: {exc.code}: the guest build failed: {exc.message}", file=sys.stderr)
            raise typer.Exit(1) from None
    if built.built:
        err.print(f"built in {built.build_seconds:.1f} s, compiled in {built.compile_seconds:.1f} s")
    else:
        err.print("already built for these sources")
    out.print(str(built.compiled))


@app.command("hollowbrook-server")
def hollowbrook_server(
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0: any free port).")] = 8084,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    verbose: Annotated[bool, typer.Option("--verbose", help="Log every request to stderr.")] = False,
) -> None:
    """Run the Hollowbrook guesthouse API (the example skill's upstream) until interrupted."""
    # here: start-up time (see hot_commands.compiled_or_exit)
    from skillhouse.examples.hollowbrook_server import serve

    serve(host, port, verbose)


@app.command("mcp")
def mcp_command(
    skill: Annotated[list[str], typer.Option("--skill", help="A published release to bind, NAME@VERSION (repeatable).")],
    tenant: Annotated[str | None, typer.Option("--tenant", help="Tenant whose releases to bind (default: SKILLHOUSE_TOKEN's).")] = None,
    http: Annotated[int | None, typer.Option("--http", help="Serve streamable HTTP on 127.0.0.1:PORT (/mcp) instead of stdio.")] = None,
    guest: Annotated[str | None, typer.Option("--guest", help="Guest runner: wasm or inprocess (default: SKILLHOUSE_GUEST).")] = None,
    subject: Annotated[str | None, typer.Option(
        "--subject", help="The end user the turn acts for (their OAuth connections are used).")] = None,
) -> None:
    """Serve a turn's tools over MCP (stdio, or streamable HTTP with --http); every call goes through the gateway."""
    # here: start-up time (see hot_commands.compiled_or_exit)
    from skillhouse.cli.mcp_command import run_mcp

    raise typer.Exit(run_mcp(skill, tenant, http, guest, subject))


@app.command("eval")
def eval_command(
    tasks_file: Annotated[Path, typer.Argument(metavar="TASKS", help="A task set (YAML), e.g. examples/evals/hollowbrook.yaml.")],
    model: Annotated[str, typer.Option("--model", help="openai:MODEL, anthropic:MODEL, or scripted (each task's scripted plans).")],
    runs: Annotated[int, typer.Option("--runs", "-n", help="Runs of each task in each arm.")] = 5,
    arm: Annotated[list[str] | None, typer.Option("--arm", help="tools or raw (repeatable; default both).")] = None,
    task: Annotated[list[str] | None, typer.Option("--task", help="Only this task id (repeatable).")] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="Also write the report as JSON here.")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="The model server's URL (default: OPENAI_BASE_URL or ANTHROPIC_BASE_URL).")] = None,
    guest: Annotated[str | None, typer.Option("--guest", help="Guest runner: wasm or inprocess (default: SKILLHOUSE_GUEST).")] = None,
    max_steps: Annotated[int | None, typer.Option("--max-steps", help="Steps of the agent loop per turn (default: the task file's).")] = None,
    confidence: Annotated[float, typer.Option("--confidence", help="Of the success rate's Wilson interval.")] = 0.95,
    transcripts: Annotated[bool, typer.Option("--transcripts", help="Put every run's messages in the JSON report.")] = False,
) -> None:
    """Run a task set against a model in two arms (skillhouse tools, raw fetch_url) and report side by side."""
    # here: start-up time (see hot_commands.compiled_or_exit)
    from skillhouse.cli.eval_command import run_eval

    raise typer.Exit(run_eval(tasks_file, model, runs, arm or [], task or [], json_path, guest, base_url, max_steps,
                              confidence, transcripts))


def _add_gateway_commands() -> None:
    # here: start-up time (see hot_commands.compiled_or_exit)
    from skillhouse.cli.gateway_commands import add_gateway_commands
    from skillhouse.cli.limits_commands import add_limits_commands

    add_gateway_commands(app)
    add_limits_commands(app)


_add_gateway_commands()


def command_app(args: Sequence[str]) -> typer.Typer:
    """The app as ``skillhouse ARGS`` needs it: only the command (or command group) ``args`` starts with.

    Before running a command, Typer turns every registered command into a click command (reading each
    signature and its annotations), which costs each start-up more than the command's own imports on a
    small input. The narrowed app parses and helps exactly as the full one for that command (a callback
    that does nothing keeps it a group, so ``skillhouse NAME ...`` reads the same); anything else, such
    as ``--help`` or an unknown name, gets the full app, which lists and suggests every command.
    """
    name = args[0] if args else ""
    commands = [c for c in app.registered_commands if _command_name(c) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return app
    narrow = typer.Typer(**_APP_SETTINGS, callback=_no_group_options)
    narrow.registered_commands = commands
    narrow.registered_groups = groups
    return narrow


def _command_name(command: CommandInfo) -> str:
    # Typer's own rule for a command registered without a name
    function_name = getattr(command.callback, "__name__", "")
    return command.name or function_name.lower().replace("_", "-")


def _no_group_options() -> None:
    """The top-level group takes no options of its own."""


def main() -> None:
    command_app(sys.argv[1:])()

