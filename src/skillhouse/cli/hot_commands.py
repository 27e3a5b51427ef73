"""What ``import-openapi`` and ``tools`` do, without Typer: both the Typer commands and the fast entry
(:mod:`skillhouse.cli.fast`) call these, so the two paths print the same bytes and exit alike.

A refusal ends the command with :class:`SystemExit` (its status), never ``typer.Exit``: importing Typer
and click is ~75 ms of each process's start-up, which the fast entry exists to skip. Under Typer a
``SystemExit`` passes through click unchanged, so the exit status is the same either way.

Every import of skillhouse's own cores is inside the function that needs it: each one buys start-up
time for the commands that do not (``tools`` on a cached release needs no parser, no compiler).
"""

from __future__ import annotations

import sys

# Not `from typing import TYPE_CHECKING`: typing is start-up time `tools` on a cached listing never needs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from pathlib import Path

    from skillhouse.compiler import CompiledSkill
    from skillhouse.json_types import ReleaseDocument, ToolDefinition
    from skillhouse.skill import SkillError


def report_errors(errors: list[SkillError]) -> None:
    """Each error as a plain ``FILE:LINE: CODE: message`` line on stderr (editors and CI annotate those)."""
    for error in errors:
        print(str(error), file=sys.stderr)


def compiled_or_exit(path: Path, version: str | None = None) -> CompiledSkill:
    """The package in ``path`` compiled, or its errors printed and exit status 1."""
    # here: start-up time; `skillhouse --help` and a cached `tools` need no compiler
    from skillhouse.compiler import compile_dir

    compiled, errors = compile_dir(path, version)
    if compiled is None:
        report_errors(errors)
        raise SystemExit(1)
    return compiled


def release_document(path: Path) -> ReleaseDocument:
    """The release of the package in ``path``: read from the cache when this exact package was compiled before."""
    # here: start-up time (see compiled_or_exit)
    from skillhouse.cli.environment import release_cache_or_exit
    from skillhouse.release_cache import cached_release, remember_release

    cache = release_cache_or_exit()
    document = cached_release(cache, path)
    if document is None:
        document = compiled_or_exit(path).document
        remember_release(cache, path, document)
    return document


def listing_text(definitions: list[ToolDefinition]) -> str:
    """Tool definitions as ``skillhouse tools`` prints them (the release cache keeps the neutral ones so)."""
    import json  # here: start-up time, as every import in this module; printing a kept listing needs no json

    return json.dumps(definitions, indent=2, ensure_ascii=False)


def neutral_definitions(document: ReleaseDocument) -> list[ToolDefinition]:
    """The provider-neutral tool definition of each of the release's operations."""
    # here: start-up time (see compiled_or_exit); a release needs no more of the compiler than this
    from skillhouse.compiler import neutral_tool

    return [neutral_tool(op) for op in document["operations"]]


def guest_eager_tools() -> list[ToolDefinition]:
    """The guest's own tools (``load_tools`` and the like), as a turn offers them."""
    # here: start-up time (see compiled_or_exit)
    from skillhouse.compiler.eager_tools import EAGER_TOOLS

    return list(EAGER_TOOLS)


def tools(path: str | os.PathLike[str], provider: str | None, deferred: bool, shape: str | None) -> None:
    """``skillhouse tools``: the tool definitions as JSON, neutral or as ``provider``'s API accepts them.

    ``path`` is a ``Path`` from Typer, text from the fast entry: printing a kept listing needs no ``pathlib``."""
    # here: start-up time (see compiled_or_exit)
    from skillhouse.cli.environment import release_cache_or_exit
    from skillhouse.release_cache import cached_listing, remember_listing

    cache = release_cache_or_exit()
    plain = provider is None and not deferred and shape is None
    # the listing `import-openapi` kept for exactly this package: printed as is, nothing decoded or compiled
    kept = cached_listing(cache, path) if plain else None
    if kept is not None:
        print(kept)
        return
    from pathlib import Path  # here: start-up time (see above)

    from skillhouse.cli.output import err  # here: start-up time (see compiled_or_exit)

    document = release_document(Path(path))
    definitions = neutral_definitions(document)
    if provider is None:
        if deferred or shape is not None:
            err.print("[red]--deferred and --shape need --provider[/red]")
            raise SystemExit(2)
        text = listing_text(definitions)
        remember_listing(cache, path, text)
        print(text)
        return
    from skillhouse.compiler.profiles import ProfileError, listing_problem, provider_tools

    # With native deferral the provider's tool search replaces the guest's load_tools.
    eager = [t for t in guest_eager_tools() if t["name"] != "load_tools"] if deferred else []
    try:
        listing = provider_tools(definitions, provider, deferred=deferred, shape=shape, eager=eager)
    except ProfileError as problem:
        err.print(f"[red]error: {problem.code}: {problem.message}[/red]")
        raise SystemExit(2) from None
    report = document["compatibility"]["profiles"].get(provider, {})
    for name, verdict in report.items():
        if verdict["status"] == "refused":
            err.print(f"[yellow]{name} left out for {provider}: {verdict['reason']}[/yellow]")
    too_many = None if deferred else listing_problem(provider, len(listing))
    if too_many is not None:
        err.print(f"[yellow]{provider}: {too_many}[/yellow]")
    print(listing_text(listing))


def import_openapi(
    spec: Path,
    out_dir: Path,
    name: str | None,
    include: list[str] | None,
    exclude: list[str] | None,
    server: str | None,
    report_file: Path | None,
    verbose: bool,
    allow_remote_refs: bool,
    allow_ref_root: list[Path] | None,
) -> None:
    """``skillhouse import-openapi``: write the skill into ``out_dir``/NAME and print a summary on stderr."""
    # here: start-up time (see compiled_or_exit)
    from skillhouse.cli.environment import release_cache_or_exit
    from skillhouse.cli.output import ImportProgress, skill_directory_or_exit
    from skillhouse.openapi import RefPolicy, SpecError, import_openapi, load_spec, write_skill
    from skillhouse.openapi.render import spec_skill_name
    from skillhouse.skill.files import CURATION_FILE

    release_cache = release_cache_or_exit()

    roots = tuple(allow_ref_root or ())
    for root in roots:
        if not root.is_dir():
            print(f"--allow-ref-root {root}: not a directory", file=sys.stderr)
            raise SystemExit(2)
    fetch = None
    if allow_remote_refs:
        from skillhouse.cli.remote_refs import fetch_document  # here: httpx only when remote refs are allowed

        fetch = fetch_document
    try:
        with ImportProgress() as progress:
            progress.parsing(spec)
            document = load_spec(spec, RefPolicy(roots=roots, fetch=fetch))
            # the skill's curation.yaml, if it has one, is applied on every import (its module loaded only then)
            directory = skill_directory_or_exit(out_dir, spec_skill_name(document.root, name))
            curation = None
            if (directory / CURATION_FILE).is_file():
                from skillhouse.openapi.curation import curation_of

                curation = curation_of(directory)
            result = import_openapi(
                document, name=name, include=include or (), exclude=exclude or (), server=server,
                progress=progress.operations, curation=curation,
            )  # fmt: skip
    except (SpecError, OSError) as exc:
        code = exc.code if isinstance(exc, SpecError) else "unreadable-spec"
        print(f"error: {code}: {spec}: cannot import: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    target = skill_directory_or_exit(out_dir, result.name)
    write_skill(result, target)
    curation_refused = curation is not None and bool(curation.problems)
    # `skillhouse tools` on the new skill then reads this instead of compiling
    if result.compiled is not None and not curation_refused:
        # here: start-up time (see compiled_or_exit)
        from skillhouse.release_cache import remember_release

        # with the listing `tools` prints: the definitions are at hand here, so `tools` need not decode the release
        listing = listing_text(neutral_definitions(result.compiled.document))
        remember_release(release_cache, target, result.compiled.document, listing=listing)
    result.report.spec = str(spec)
    for line in result.report.lines(verbose):
        print(line, file=sys.stderr)
    if not verbose and any(o.status != "written" for o in result.report.outcomes):
        print("each operation's changes and reasons: --verbose, or --report FILE", file=sys.stderr)
    if report_file is not None:
        import json  # here: start-up time (see listing_text)

        report_file.write_text(json.dumps(result.report.as_dict(), indent=2, ensure_ascii=False) + "\n")
    state = (
        f"checked, {result.compiled.digest}"
        if result.compiled is not None
        else "NOT passing check: see skillhouse check"
    )
    if curation_refused:
        state = "NOT passing check: curation.yaml has problems (above)"
    # plain print: rich (~20 ms of start-up) is for the live progress bar on a terminal only
    print(f"wrote {target} ({state})", file=sys.stderr)
