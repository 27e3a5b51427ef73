"""The wizard: an OpenAPI 2.0/3.0/3.1 spec to a skill package that the compiler accepts.

Operations are named first (over the whole spec, so a name does not depend on the filters), then
each is built, fitted to the size cap and rendered. The package is compiled in memory before it is
handed back; an operation the compiler refuses is skipped with the compiler's reason, so what is
written always passes ``skillhouse check``. One defective operation never costs the others.
"""

from __future__ import annotations

import fnmatch
import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urljoin

from skillhouse.compiler.expansion import SCHEMA_LIMIT, Expansions, new_expansions
from skillhouse.compiler.release import CompiledSkill, compile_package
from skillhouse.openapi.document import SpecDocument, SpecError, Unresolved, load_spec
from skillhouse.openapi.json_block import indented_json
from skillhouse.openapi.naming import StemRegistry, operation_stem
from skillhouse.openapi.operations import build_operation, response_problems
from skillhouse.openapi.parameters import Skip
from skillhouse.openapi.references import RefPolicy, Spot
from skillhouse.openapi.render import (
    clean_text,
    manifest_file,
    operation_markdown,
    skill_name,
    types_as_read,
    types_file,
)
from skillhouse.openapi.report import ConverterError, ImportReport, OperationOutcome
from skillhouse.openapi.schemas import SchemaConverter
from skillhouse.openapi.security import requirements, scheme_templates
from skillhouse.openapi.shrink import expanded_size, fit_schema, fits_as_written
from skillhouse.records import record, replace
from skillhouse.skill import read_package
from skillhouse.skill.files import RECORD_FILE
from skillhouse.skill.frontmatter import MarkdownFile
from skillhouse.skill.package import MANIFEST, MAX_FILE_BYTES, TYPES

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.json_types import JsonObject, JsonSchema
    from skillhouse.openapi.curation import CurationRun  # applying a curation.yaml loads its module
    from skillhouse.openapi.report import Status

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
_NOT_UNICODE = ("a name or pattern of the operation is not Unicode text: it holds a lone surrogate (an unpaired "
                "\\ud800-\\udfff escape in the spec), which UTF-8, and so the request, cannot carry; write the "
                "character the escape was meant to be, or its pair")  # fmt: skip
Progress = Callable[[int, int], None]


@record
class ImportResult:
    """The written package (file name to text), the report, and the compiled skill."""

    name: str
    files: dict[str, str]
    report: ImportReport
    compiled: CompiledSkill | None


@record
class _Found:
    stem: str
    method: str
    path: str
    op: dict[str, Any]
    path_item: dict[str, Any]
    item_spot: Spot
    """Where the path item is (references in it are relative to its document)."""
    op_spot: Spot
    """Where the operation object is (in another file when the operation is a ``$ref``)."""
    problem: Unresolved | None = None
    """Why the operation or its path item could not be read (a reference that cannot be followed)."""


def import_openapi(
    spec: str | Path | SpecDocument,
    name: str | None = None,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    progress: Progress | None = None,
    server: str | None = None,
    curation: CurationRun | None = None,
    refs: RefPolicy | None = None,
) -> ImportResult:
    """Build the skill package for ``spec``; :class:`SpecError` only when the spec cannot be read.

    ``server`` replaces the spec's base URL (needed when the spec gives none that is absolute);
    ``refs`` says where a spec read from a file may follow references beyond its directory tree.
    ``curation`` is the skill's ``curation.yaml`` to apply (see :mod:`skillhouse.openapi.curation`).
    """
    with _collector_paused():
        return _import(spec, name, include, exclude, progress, server, curation, refs)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for the import, then resumed (when it was running).

    An import builds hundreds of thousands of containers (the parsed spec, the schemas, the release)
    that stay alive until it returns; the collector, which starts every few hundred allocations and now
    and then walks every tracked object, found nothing to free among them and cost 7-10% of the import's
    CPU (Twilio's spec, medians of 8 fresh processes). Reference counting still frees at once whatever is
    not in a cycle; the few cycles an import leaves (an exception with its traceback) are collected once
    the collector runs again. Other threads of the process go without the collector meanwhile.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _import(
    spec: str | Path | SpecDocument,
    name: str | None,
    include: Iterable[str],
    exclude: Iterable[str],
    progress: Progress | None,
    server: str | None,
    curation: CurationRun | None,
    refs: RefPolicy | None,
) -> ImportResult:
    label = "spec" if isinstance(spec, SpecDocument) else str(spec)
    # A spec loaded here is referenced only inside _convert, so it is freed before the compile,
    # the import's peak: the compile holds the package and its release, no longer the parsed spec.
    # Its path items are dropped one by one as their operations are converted (not a caller's document,
    # and not with a curation, which holds every operation found).
    loaded = not isinstance(spec, SpecDocument)
    document = spec if isinstance(spec, SpecDocument) else load_spec(spec, refs)
    converted = _convert(document, label, name, include, exclude, progress, server, curation, release=loaded and curation is None)
    del document
    chosen, outcomes = converted.name, converted.outcomes
    # The shared types from here on are as reading types.json back gives them (the converter's own are freed).
    types = converted.types = types_as_read(converted.types)
    files = {filename: markdown.text for filename, markdown in converted.rendered.items()}
    compiled = _compile_as_rendered(converted, types, files)
    if compiled is None:
        compiled = _compile_dropping_refused(chosen, files, converted.manifest.text, types, outcomes)
    report = converted.report
    report.outcomes = [outcomes[stem] for stem in converted.order]
    if curation is not None:  # curation hook: the record the package check holds the overlay against
        files[RECORD_FILE] = curation.record(files)
        report.curation, report.curation_lines = curation.report(), curation.summary()
    return ImportResult(chosen, files, report, compiled)


@record
class _Converted:
    """What the spec gave: the rendered operation files, SKILL.md, the shared types and the outcomes."""

    name: str
    rendered: dict[str, MarkdownFile]
    manifest: MarkdownFile
    types: dict[str, JsonSchema]
    outcomes: dict[str, OperationOutcome]
    order: list[str]
    """The selected operations' stems in spec order."""
    report: ImportReport


def _convert(
    document: SpecDocument,
    label: str,
    name: str | None,
    include: Iterable[str],
    exclude: Iterable[str],
    progress: Progress | None,
    server: str | None,
    curation: CurationRun | None = None,
    release: bool = False,
) -> _Converted:
    """The spec's operations converted and rendered; with ``release``, each path item is dropped from the
    spec once its operations are (see :meth:`SpecDocument.release_path_item`)."""
    problems_before = len(document.problems)  # a document imported again keeps the earlier import's problems
    root = document.root
    base_urls = [server.rstrip("/")] if server else _base_urls(document)
    info = _mapping(root.get("info"))
    chosen = name or skill_name(clean_text(info.get("title")))
    report = ImportReport(spec=label, skill=chosen)
    report.security = _security(document)
    report.credentials = _credentials(document, base_urls[0])
    found = list(_operations(document))
    # the filters read once (and none matched without any): 0.4% of Jira's import was matching nothing per operation
    include, exclude = list(include), list(exclude)
    wanted = [f for f in found if _selected(f, include, exclude)] if include or exclude else list(found)
    report.filtered = len(found) - len(wanted)
    if curation is not None:  # curation hook: hide, rename and redescribe before building
        wanted = curation.select(found, wanted)
    conv = SchemaConverter(document)
    expansions = new_expansions()
    rendered: dict[str, MarkdownFile] = {}
    outcomes: dict[str, OperationOutcome] = {}
    listing: list[tuple[str, str]] = []
    order, total = [f.stem for f in wanted], len(wanted)
    # Taken from the end of a reversed list, so no list holds an operation once it is converted
    pending = wanted[::-1]
    del found, wanted
    index = 0
    while pending:
        item = pending.pop()
        index += 1
        outcome, markdown = _one(conv, document, item, base_urls[0], server is None, expansions)
        if curation is not None:  # curation hook: arguments and approval of the built operation
            outcome, markdown = curation.finish(item.stem, outcome, markdown, conv.types)
        outcomes[item.stem] = outcome
        required = requirements(item.op["security"] if "security" in item.op else root.get("security"))
        if required:
            report.scopes[outcome.name] = required
        if markdown is not None:
            rendered[markdown.path] = markdown
            listing.append((item.stem, " ".join(clean_text(item.op.get("summary")).split())[:200]))
        if progress is not None:
            progress(index, total)
        if release and (not pending or pending[-1].path != item.path):  # the path's last operation
            document.release_path_item(item.path)
    report.problems = list(dict.fromkeys(document.problems[problems_before:]))
    manifest = manifest_file(chosen, info, base_urls, report.security, listing)
    return _Converted(chosen, rendered, manifest, conv.types, outcomes, order, report)


def write_skill(result: ImportResult, out_dir: str | Path) -> Path:
    """Write ``result``'s files into ``out_dir``, replacing operation files an earlier import left."""
    target = Path(out_dir)
    target.mkdir(parents=True, exist_ok=True)
    for stale in target.iterdir():
        if stale.is_file() and (stale.suffix == ".md" or stale.name in ("types.json", RECORD_FILE)) and stale.name not in result.files:
            stale.unlink()
    for filename, text in result.files.items():
        (target / filename).write_text(text, encoding="utf-8")
    return target


def _one(
    conv: SchemaConverter, document: SpecDocument, item: _Found, base_url: str, own_servers: bool, expansions: Expansions
) -> tuple[OperationOutcome, MarkdownFile | None]:
    def outcome(status: Status, notes: list[str]) -> OperationOutcome:
        return OperationOutcome(item.stem, item.method, item.path, status, tuple(dict.fromkeys(notes)))

    conv.notes = []
    if item.problem is not None:  # reported only for an operation selected, in spec order
        document.problems.append(item.problem.problem)
        return outcome("skipped", [str(item.problem)]), None
    try:
        url = (_own_server(item, base_url, conv.notes) if own_servers else None) or base_url
        built = build_operation(conv, item.method, item.path, item.op, item.path_item, url, _consumes(document, item), item.item_spot, item.op_spot)
        notes = [*built.notes, *conv.notes, *response_problems(document, item.op, item.op_spot)]
        text = _schema_text(built.schema)
        if text is None or not fits_as_written(text):
            size = expanded_size(built.schema, conv.types, expansions)
            if size is None or size > SCHEMA_LIMIT:
                fitted = fit_schema(built.schema, conv.types)
                if fitted is None:
                    return outcome("skipped", [f"the schema cannot be shrunk under {SCHEMA_LIMIT} bytes"]), None
                built.schema, dropped = fitted
                text = None
                notes.append(f"schema over {SCHEMA_LIMIT} bytes shrunk: " + "; ".join(dropped))
        summary, description, deprecated = item.op.get("summary"), item.op.get("description"), item.op.get("deprecated") is True
        markdown = operation_markdown(f"{item.stem}.md", built, summary, description, deprecated, text)
    except Unresolved as exc:
        document.problems.append(exc.problem)
        return outcome("skipped", [str(exc)]), None
    except Skip as exc:
        return outcome("skipped", [str(exc)]), None
    except RecursionError:
        return outcome("skipped", ["the operation's schemas are nested too deeply"]), None
    except UnicodeEncodeError:  # texts are mended (schemas.carried_text); a name or a pattern cannot be
        return outcome("skipped", [_NOT_UNICODE]), None
    except SpecError:
        raise  # the spec itself (read again for a reference) cannot be read: the whole import stops
    except Exception as exc:
        # Anything else is a bug of ours: this operation is skipped, the import goes on, and the
        # report says where, so it is seen (the fuzz tests assert none happens) rather than swallowed.
        error = converter_error(exc, item.method, item.path)
        return replace(outcome("skipped", [error.note()]), error=error), None
    return outcome("adapted" if notes else "written", notes), markdown


def _schema_text(schema: JsonSchema) -> str | None:
    """The schema's text as its operation file will hold it, made before its size is measured (see
    :func:`fits_as_written`); ``None`` when it cannot be written, so the measure fails first, as it always did."""
    try:
        return indented_json(schema)
    except Exception:
        return None


def converter_error(exc: Exception, method: str, path: str) -> ConverterError:
    """``exc``, raised converting ``method path``, located for the report."""
    pointer = "/paths/" + path.replace("~", "~0").replace("/", "~1") + "/" + method.lower()
    package = Path(__file__).resolve().parent.parent
    import traceback  # here: only a converter bug needs it, and its import is slow

    raised_at = "unknown"
    for frame in traceback.extract_tb(exc.__traceback__):
        source = Path(frame.filename).resolve()
        if source.is_relative_to(package):
            raised_at = f"{source.relative_to(package).as_posix()}:{frame.lineno}"
    return ConverterError(pointer, type(exc).__name__, str(exc)[:200], raised_at)


def _compile_as_rendered(converted: _Converted, types: dict[str, JsonSchema], files: dict[str, str]) -> CompiledSkill | None:
    """The package compiled from the operation files' data as rendered, or ``None`` if anything is refused.

    Reading the files back would parse each one's YAML and give the same data (a test holds the two
    equal on the corpus and on fuzzed specs); only the key lines would differ, and those appear only in
    errors. So a clean compile is taken as is, and any error sends the caller to the reading path,
    which places each error on its line. SKILL.md is taken with the data it was rendered from too, and
    ``types`` is handed as reading ``types.json`` gives it (:func:`types_as_read`: sorted keys are the
    order the compiler sees), where the reader would take it without a word.

    The rendered data is taken out of ``converted``: it is freed once compiled, before the text of
    ``types.json`` is made (at the end of the compile, with the release built, that was the import's peak).
    """
    rendered, converted.rendered = converted.rendered, {}
    if any(not _read_as_is(filename, markdown.text) for filename, markdown in rendered.items()):
        return None
    if not all(isinstance(schema, dict | bool) for schema in types.values()):
        return None  # the reader refuses it: the reading path says why
    manifest = converted.manifest
    package, read_errors = read_package(converted.name, {MANIFEST: manifest.text}, label="", parsed={MANIFEST: manifest})
    package = replace(package, files=tuple(rendered[filename] for filename in sorted(rendered)), types=types)
    del rendered
    compiled, errors = compile_package(package)
    del package
    if read_errors or errors:
        return None
    written = {MANIFEST: manifest.text}
    if types:
        written[TYPES] = types_file(types)
        if len(written[TYPES]) > MAX_FILE_BYTES:
            return None  # the reader refuses it: the reading path says why
    files.update(written)
    return compiled


def _read_as_is(filename: str, text: str) -> bool:
    """Whether the package reader would take ``filename`` as an operation file without a word."""
    if "/" in filename or filename.startswith(".") or not filename.endswith(".md") or filename == MANIFEST:
        return False
    return len(text) * 4 <= MAX_FILE_BYTES or len(text.encode("utf-8")) <= MAX_FILE_BYTES


def _compile_dropping_refused(
    name: str, files: dict[str, str], manifest: str, types: dict[str, JsonSchema], outcomes: dict[str, OperationOutcome]
) -> CompiledSkill | None:
    # The compiler has the last word: what it refuses is skipped with its reason, and the rest recompiled.
    for _ in range(3):
        package_files: dict[str, bytes | str] = {**files, "SKILL.md": manifest}
        types_json = types_file(types) if types else None
        if types_json is not None:
            package_files["types.json"] = types_json
        package, read_errors = read_package(name, package_files, label="")
        compiled, errors = compile_package(package)
        errors = sorted(set(read_errors) | set(errors))
        refused = {e.file for e in errors if e.file in files}
        if not errors:
            files["SKILL.md"] = manifest
            if types_json is not None:
                files["types.json"] = types_json
            return compiled
        if not refused:
            return None
        for filename in refused:
            stem = filename.removesuffix(".md")
            reasons = [f"{e.code}: {e.message}" for e in errors if e.file == filename]
            old = outcomes[stem]
            outcomes[stem] = OperationOutcome(old.name, old.method, old.path, "skipped", tuple(reasons))
            del files[filename]
    return None


def _operations(document: SpecDocument) -> Iterator[_Found]:
    stems = StemRegistry()
    for path, raw_item in document.root.get("paths", {}).items():
        if not isinstance(path, str):
            continue
        item, item_spot = raw_item, Spot("").child("paths", path)
        try:
            if isinstance(raw_item, dict) and "$ref" in raw_item:  # what it is is said only for a reference
                item, item_spot = document.follow(raw_item, item_spot, f"path item {path!r}")
        except Unresolved as exc:
            # its operations are unknown: one skipped entry for the path says which reference to fix
            yield _Found(stems.claim(operation_stem(None, "any", path)), "*", path, {}, {}, Spot(""), Spot(""), exc)
            continue
        if not isinstance(item, dict):
            continue
        for key, raw_op in item.items():
            if key not in HTTP_METHODS:
                continue
            method = key.upper()
            problem = None
            op_spot = item_spot.child(key)
            try:
                op = raw_op
                if isinstance(raw_op, dict) and "$ref" in raw_op:  # what it is is said only for a reference
                    op, op_spot = document.follow(raw_op, op_spot, f"operation {method} {path}")
            except Unresolved as exc:
                op, problem = {}, exc
            op = op if isinstance(op, dict) else {}
            stem = stems.claim(operation_stem(op.get("operationId"), method, path))
            yield _Found(stem, method, path, op, item, item_spot, op_spot, problem)


def _selected(item: _Found, include: list[str], exclude: list[str]) -> bool:
    keys = [item.stem, f"{item.method} {item.path}", str(item.op.get("operationId", ""))]
    tags = item.op.get("tags")
    if isinstance(tags, list):
        keys.extend(f"tag:{t}" for t in tags if isinstance(t, str))
    if include and not any(fnmatch.fnmatchcase(k, p) for k in keys for p in include):
        return False
    return not any(fnmatch.fnmatchcase(k, p) for k in keys for p in exclude)


def _server_url(servers: Any) -> str | None:
    if not isinstance(servers, list):
        return None
    for server in servers:
        if isinstance(server, dict) and isinstance(server.get("url"), str):
            url = str(server["url"])
            for var, spec in _mapping(server.get("variables")).items():
                default = spec.get("default") if isinstance(spec, dict) else None
                if isinstance(default, str | int):
                    url = url.replace("{" + str(var) + "}", str(default))
            return url.rstrip("/")
    return None


def _base_urls(document: SpecDocument) -> list[str]:
    root = document.root
    if document.version == "2.0":
        host = root.get("host")
        if not isinstance(host, str) or not host:
            raise SpecError("the Swagger 2.0 spec has no 'host', so its operations have no URL; give one with --server")
        schemes: list[Any] = root["schemes"] if isinstance(root.get("schemes"), list) else []
        scheme = "https" if "https" in schemes or not schemes else str(schemes[0])
        base_path = root.get("basePath") if isinstance(root.get("basePath"), str) else ""
        return [f"{scheme}://{host}{base_path}".rstrip("/")]
    url = _server_url(root.get("servers"))
    if url is None or not url.startswith(("http://", "https://")):
        raise SpecError(f"the spec's first server URL ({url or 'none'}) is not an absolute http(s) URL; give one with --server")
    return [url]


def _own_server(item: _Found, base_url: str, notes: list[str]) -> str | None:
    """The operation's or path's own server, where it names one (a relative one taken from the spec's server)."""
    for where, servers in (("operation", item.op.get("servers")), ("path", item.path_item.get("servers"))):
        url = _server_url(servers)
        if url is None:
            continue
        if url.startswith(("http://", "https://")):
            return url
        joined = urljoin(base_url + "/", url).rstrip("/")
        if joined.startswith(("http://", "https://")):
            notes.append(f"the {where}'s server {url!r} is relative; taken from the spec's server as {joined}")
            return joined
    return None


def _consumes(document: SpecDocument, item: _Found) -> list[Any]:
    consumes = item.op.get("consumes", document.root.get("consumes", []))
    return consumes if isinstance(consumes, list) else []


def _mapping(value: Any) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _credentials(document: SpecDocument, base_url: str) -> list[JsonObject]:
    """A binding template per security scheme (``openapi/security.py``)."""
    schemes = _mapping(document.root.get("components")).get("securitySchemes") or document.root.get("securityDefinitions") or {}
    if not isinstance(schemes, dict):
        return []
    out: list[JsonObject] = []
    for scheme_name, scheme in schemes.items():
        scheme, _ = document.deref(scheme, "")
        if isinstance(scheme, dict):
            out += scheme_templates(str(scheme_name), scheme, base_url)
    return out


def _security(document: SpecDocument) -> list[str]:
    schemes = _mapping(document.root.get("components")).get("securitySchemes") or document.root.get("securityDefinitions") or {}
    if not isinstance(schemes, dict):
        return []
    out = []
    for scheme_name, scheme in schemes.items():
        scheme, _ = document.deref(scheme, "")
        if isinstance(scheme, dict):
            kind = " ".join(str(scheme.get(k)) for k in ("type", "scheme", "in", "name") if isinstance(scheme.get(k), str))
            out.append(f"{scheme_name} ({kind})" if kind else str(scheme_name))
    return out
