"""The ``skillhouse`` command."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from skillhouse.json_types import ReleaseDocument, ToolAnswer, ToolDefinition

if TYPE_CHECKING:
    from rich.console import Console
    from typer.models import CommandInfo

    from skillhouse.skill import SkillError

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


class _LazyConsole:
    """A rich Console made on first use: importing rich costs ~25 ms of start-up most commands never need."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr
        self._console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=self._stderr, highlight=False, soft_wrap=True)
        return getattr(self._console, name)


err = cast("Console", _LazyConsole(stderr=True))
out = cast("Console", _LazyConsole(stderr=False))


def _report(errors: list[SkillError]) -> None:
    for error in errors:
        # plain lines: editors and CI annotate FILE:LINE
        print(str(error), file=sys.stderr)


def _compiled_or_exit(path: Path, version: str | None = None) -> Any:
    # imported here, not at the top: `skillhouse --help` need not load the compiler
    from skillhouse.compiler import compile_dir

    compiled, errors = compile_dir(path, version)
    if compiled is None:
        _report(errors)
        raise typer.Exit(1)
    return compiled


@app.command()
def check(paths: Annotated[list[Path], typer.Argument(help="Skill package directories.")]) -> None:
    """Check skill packages; print each error as FILE:LINE: CODE: message."""
    from skillhouse.compiler import compile_dir  # here: start-up time (see _compiled_or_exit)

    failed = 0
    for path in paths:
        compiled, errors = compile_dir(path)
        if compiled is None:
            _report(errors)
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
    compiled = _compiled_or_exit(path, version)
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
    # here: start-up time (see _compiled_or_exit); a cached release needs no more than neutral_tool
    from skillhouse.compiler import neutral_tool

    document = _release_document(path)
    definitions = [neutral_tool(op) for op in document["operations"]]
    if provider is None:
        if deferred or shape is not None:
            err.print("[red]--deferred and --shape need --provider[/red]")
            raise typer.Exit(2)
        print(json.dumps(definitions, indent=2, ensure_ascii=False))
        return
    from skillhouse.compiler.profiles import ProfileError, listing_problem, provider_tools

    # With native deferral the provider's tool search replaces the guest's load_tools.
    eager = [t for t in _guest_eager_tools() if t["name"] != "load_tools"] if deferred else []
    try:
        listing = provider_tools(definitions, provider, deferred=deferred, shape=shape, eager=eager)
    except ProfileError as problem:
        err.print(f"[red]error: {problem.code}: {problem.message}[/red]")
        raise typer.Exit(2) from None
    report = document["compatibility"]["profiles"].get(provider, {})
    for name, verdict in report.items():
        if verdict["status"] == "refused":
            err.print(f"[yellow]{name} left out for {provider}: {verdict['reason']}[/yellow]")
    too_many = None if deferred else listing_problem(provider, len(listing))
    if too_many is not None:
        err.print(f"[yellow]{provider}: {too_many}[/yellow]")
    print(json.dumps(listing, indent=2, ensure_ascii=False))


def _release_document(path: Path) -> ReleaseDocument:
    """The release of the package in ``path``: read from the cache when this exact package was compiled before."""
    # here: start-up time (see _compiled_or_exit)
    from skillhouse.cli.environment import settings_or_exit
    from skillhouse.release_cache import cached_release, remember_release

    cache = settings_or_exit().release_cache
    document = cached_release(cache, path)
    if document is None:
        document = _compiled_or_exit(path).document
        remember_release(cache, path, document)
    return document


def _guest_eager_tools() -> list[ToolDefinition]:
    # here: start-up time (see _compiled_or_exit)
    from skillhouse.compiler.eager_tools import EAGER_TOOLS

    return list(EAGER_TOOLS)


@app.command()
def translate(
    path: Annotated[Path, typer.Argument(help="A skill package directory.")],
    tool: Annotated[str, typer.Argument(help="Full tool name, or the operation name the skill lists.")],
    arguments: Annotated[str, typer.Argument(help="The call's arguments as a JSON object.")],
) -> None:
    """Print the request a call becomes (nothing is sent), or the refusal with exit status 1."""
    # here: start-up time (see _compiled_or_exit)
    from skillhouse.compiler.eager_tools import EAGER_TOOLS
    from skillhouse.guest import (
        BoundSkill,
        Catalogue,
        InvalidArguments,
        Violation,
        build_request,
    )

    compiled = _compiled_or_exit(path)
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
    # here: start-up time (see _compiled_or_exit)
    from skillhouse.cli.environment import settings_or_exit
    from skillhouse.cli.output import ImportProgress, skill_directory_or_exit
    from skillhouse.openapi import RefPolicy, SpecError, import_openapi, load_spec, write_skill
    from skillhouse.openapi.curation import curation_of, spec_skill_name

    release_cache = settings_or_exit().release_cache

    roots = tuple(allow_ref_root or ())
    for root in roots:
        if not root.is_dir():
            print(f"--allow-ref-root {root}: not a directory", file=sys.stderr)
            raise typer.Exit(2)
    fetch = None
    if allow_remote_refs:
        from skillhouse.cli.remote_refs import fetch_document  # here: httpx only when remote refs are allowed

        fetch = fetch_document
    try:
        with ImportProgress() as progress:
            progress.parsing(spec)
            document = load_spec(spec, RefPolicy(roots=roots, fetch=fetch))
            # the skill's curation.yaml, if it has one, is applied on every import
            curation = curation_of(skill_directory_or_exit(out_dir, spec_skill_name(document.root, name)))
            result = import_openapi(
                document, name=name, include=include or (), exclude=exclude or (), server=server,
                progress=progress.operations, curation=curation,
            )  # fmt: skip
    except (SpecError, OSError) as exc:
        code = exc.code if isinstance(exc, SpecError) else "unreadable-spec"
        print(f"error: {code}: {spec}: cannot import: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None
    target = skill_directory_or_exit(out_dir, result.name)
    write_skill(result, target)
    curation_refused = curation is not None and bool(curation.problems)
    if result.compiled is not None and not curation_refused:  # `skillhouse tools` on the new skill then reads this instead of compiling
        # here: start-up time (see _compiled_or_exit)
        from skillhouse.release_cache import remember_release

        remember_release(release_cache, target, result.compiled.document)
    result.report.spec = str(spec)
    for line in result.report.lines(verbose):
        print(line, file=sys.stderr)
    if not verbose and any(o.status != "written" for o in result.report.outcomes):
        print("each operation's changes and reasons: --verbose, or --report FILE", file=sys.stderr)
    if report_file is not None:
        report_file.write_text(json.dumps(result.report.as_dict(), indent=2, ensure_ascii=False) + "\n")
    state = f"checked, {result.compiled.digest}" if result.compiled is not None else "NOT passing check: see skillhouse check"
    if curation_refused:
        state = "NOT passing check: curation.yaml has problems (above)"
    # plain print: rich (~20 ms of start-up) is for the live progress bar on a terminal only
    print(f"wrote {target} ({state})", file=sys.stderr)


@app.command("export")
def export_command(
    path: Annotated[Path, typer.Argument(help="A skill package directory or a release JSON file.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory the bundle goes in, as DIR/NAME.")],
) -> None:
    """Export a skill as an Agent Skills bundle with a generated "The call" reference per operation."""
    # here: start-up time (see _compiled_or_exit)
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
        document = _compiled_or_exit(path).document
    target = skill_directory_or_exit(out_dir, str(document["skill"]))
    files = export_release(document)
    write_bundle(files, target)
    err.print(f"wrote {target} ({len(files)} files)")


def _add_registry_commands() -> None:
    # here: start-up time (see _compiled_or_exit)
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
    # here: start-up time (see _compiled_or_exit)
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
    # here: start-up time (see _compiled_or_exit)
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
    # here: start-up time (see _compiled_or_exit)
    from skillhouse.cli.mcp_command import run_mcp

    raise typer.Exit(run_mcp(skill, tenant, http, guest, subject))


def _add_gateway_commands() -> None:
    # here: start-up time (see _compiled_or_exit)
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

