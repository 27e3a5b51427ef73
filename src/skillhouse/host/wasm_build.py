"""Building the guest WebAssembly component, and the cache that makes only the first run pay for it.

``componentize-py`` turns a Python app module (which adapts ``host/wit/agent.wit`` to the guest) and the
pure packages it imports into a component; ``--stub-wasi`` replaces every WASI import with a trap,
so the component's only imports are the host functions of the WIT world. Wasmtime then compiles the
component to native code, which is serialized next to it.

Both files live in a cache directory. The component's key hashes the staged sources, the WIT file,
the tool versions and the engine configuration; the compiled code's key adds what native code depends on besides them: the
engine configuration, the wasmtime version, and the machine (operating system, architecture, CPU
features), since wasmtime compiles for the CPU it runs on. A change to any of them builds (or only
compiles) afresh and nothing else does, so a restart loads in well under a second. A lock file keeps
two processes from building the same key at once.

The cache directory is ``$SKILLHOUSE_GUEST_CACHE`` when set, else ``<data dir>/guest``.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import wasmtime
from wasmtime import _ffi as capi
from wasmtime.component import Component

from skillhouse.errors import Unavailable
from skillhouse.settings_env import guest_cache_dir
from skillhouse.sha256 import sha256

SOURCE_ROOT = Path(__file__).resolve().parents[1]  # the skillhouse package
# package data, so an installed wheel can build the guest as a checkout does
WIT_PATH = Path(__file__).resolve().parent / "wit" / "agent.wit"
WORLD = "agent"
AGENT_APP_MODULE = Path(__file__).resolve().parent / "wasm_app" / "agent_app.py"
# What the engine is configured with; a serialized component only loads into the same configuration.
ENGINE_CONFIG = "epoch_interruption=1 concurrency_support=0"

Progress = Callable[[str], None]


class GuestBuildError(Unavailable):
    """The component could not be built: ``code`` is ``builder-missing``, ``wit-missing`` or ``build-failed``;
    the message holds the builder's own words. Fix the installation, then ``skillhouse guest build``."""

    code = "build-failed"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code=code)


@dataclass(frozen=True)
class GuestApp:
    """What goes into a component: the app module exporting the WIT world, and the packages it imports.

    ``packages`` maps dotted package names to their source directories (or a module's name to its ``.py``
    file); their ``.py`` files are staged under the dotted path (parents get empty ``__init__.py`` files),
    and the app module is staged at the top level, so nothing else from the environment ends up in the
    component.
    """

    module: Path
    packages: tuple[tuple[str, Path], ...] = ()


# the guest imports the error tree's root (stdlib only), so the component carries that one module too
AGENT_APP = GuestApp(AGENT_APP_MODULE, (("skillhouse.guest", SOURCE_ROOT / "guest"),
                                        ("skillhouse.errors", SOURCE_ROOT / "errors.py")))


@dataclass(frozen=True)
class BuiltComponent:
    """The cached component binary, its compiled form, and whether this call had to build them."""

    key: str
    native: str
    """The compiled code's key (see :func:`native_key`)."""
    wasm: Path
    compiled: Path
    built: bool
    build_seconds: float
    compile_seconds: float


def default_cache_dir() -> Path:
    """The guest cache of this process's settings, for a caller that was handed no cache directory."""
    return Path(guest_cache_dir())


def make_engine(*, interruptible: bool = True) -> wasmtime.Engine:
    """An engine whose runaway guests can be interrupted by epoch (see :data:`ENGINE_CONFIG`).

    Without the component model's concurrency support (async exports and tasks, which the guest does
    not use): with it, every export call set up and tore down a task in wasmtime, about a tenth of
    what a call that does nothing costs.

    ``interruptible=False`` is the same engine without epoch interruption, whose guests nothing can stop:
    never run, only measured against (bench_wasm, what the timeout costs); its compiled code is not the
    cache's (:data:`ENGINE_CONFIG` is the interruptible engine's).
    """
    config = wasmtime.Config()
    config.epoch_interruption = interruptible
    # wasmtime-py's Config has no property for it; the C API's setter takes the config's pointer
    capi.wasmtime_config_concurrency_support_set(config.ptr(), False)
    return wasmtime.Engine(config)


def tool_versions() -> dict[str, str]:
    return {name: installed_version(name) for name in ("componentize-py", "wasmtime")}


def installed_version(name: str) -> str:
    """The installed version of the distribution ``name``, whose top-level module has its name (``-`` read as ``_``).

    Read from the ``<name>-<version>.dist-info`` folder installers write beside the module: every warm start
    needs both tools' versions for the cache keys, and importing :mod:`importlib.metadata` cost more than the
    rest of the cache lookup (about a fifth of a warm start in a new process). Anything else (no such folder,
    or several) is left to :func:`importlib.metadata.version`.
    """
    module = name.replace("-", "_")
    spec = importlib.util.find_spec(module)  # a top-level name: found, not imported
    if spec is not None and spec.origin is not None:
        prefix, suffix = f"{module}-", ".dist-info"
        found = [entry for entry in os.listdir(Path(spec.origin).parent.parent)
                 if entry.startswith(prefix) and entry.endswith(suffix)]  # fmt: skip
        if len(found) == 1:
            return found[0][len(prefix) : -len(suffix)]
    from importlib.metadata import version  # only here: see above

    return version(name)


def staged_files(app: GuestApp) -> dict[str, bytes]:
    """Relative path in the build directory to content, for every file the component is built from."""
    files: dict[str, bytes] = {f"{app.module.stem}.py": app.module.read_bytes()}
    for dotted, directory in app.packages:
        parts = dotted.split(".")
        for depth in range(1, len(parts)):
            files.setdefault("/".join([*parts[:depth], "__init__.py"]), b"")
        if directory.is_file():  # a single module
            files["/".join(parts) + ".py"] = directory.read_bytes()
            continue
        for source in sorted(directory.rglob("*.py")):
            relative = source.relative_to(directory).as_posix()
            files["/".join([*parts, relative])] = source.read_bytes()
    return files


def cache_key(app: GuestApp, wit_path: Path = WIT_PATH) -> str:
    """The component's key: its staged sources, the WIT world, the tool versions and the engine configuration."""
    parts: list[tuple[str, bytes]] = sorted(staged_files(app).items())
    parts.append(("wit", wit_path.read_bytes()))
    parts.extend((name, version.encode()) for name, version in sorted(tool_versions().items()))
    parts.append(("engine", ENGINE_CONFIG.encode()))
    return _digest(parts, 32)


def machine() -> str:
    """What native code compiled here depends on: operating system, architecture and CPU features."""
    features = ""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:  # not Linux: the processor's name is the best identity there is
        import platform  # only here: every warm start calls this, and os.uname answers the rest

        cpuinfo = f"flags: {platform.processor()}"
    for line in cpuinfo.splitlines():
        if line.startswith(("flags", "Features")):  # x86 and Arm spell it differently
            features = " ".join(sorted(line.partition(":")[2].split()))
            break
    system = os.uname()
    return f"{system.sysname}-{system.machine}-{_digest([('cpu', features.encode())], 12)}"


def native_key(component_key: str, machine_id: str | None = None) -> str:
    """The compiled code's key: the component's, the engine configuration, wasmtime's version, the machine."""
    parts = [("component", component_key.encode()), ("engine", ENGINE_CONFIG.encode()),
             ("wasmtime", installed_version("wasmtime").encode()),
             ("machine", (machine() if machine_id is None else machine_id).encode())]
    return _digest(parts, 16)


def _digest(parts: list[tuple[str, bytes]], length: int) -> str:
    digest = sha256()  # CPython's own: hashlib would load OpenSSL, a tenth of a warm start in a new process
    for name, content in parts:
        # lengths first so no two different inputs hash the same stream
        digest.update(f"{len(name)}:{name}:{len(content)}:".encode())
        digest.update(content)
    return digest.hexdigest()[:length]


def ensure_component(
    app: GuestApp = AGENT_APP,
    cache_dir: Path | None = None,
    *,
    engine: wasmtime.Engine | None = None,
    wit_path: Path = WIT_PATH,
    progress: Progress | None = None,
    machine_id: str | None = None,
) -> BuiltComponent:
    """The cached component for ``app``, building and compiling it first when the cache lacks it.

    ``progress`` hears of each slow step before it starts (nothing when the cache has both files);
    ``machine_id`` stands in for :func:`machine` (tests of the compiled code's key).
    """
    if not wit_path.is_file():
        raise GuestBuildError(
            "wit-missing", f"{wit_path}: the WIT world is not there (the installation is incomplete: reinstall skillhouse)"
        )
    cache_dir = default_cache_dir() if cache_dir is None else cache_dir
    cache_dir.mkdir(parents=True, exist_ok=True)
    key = cache_key(app, wit_path)
    native = native_key(key, machine_id)
    name = f"{app.module.stem}-{key}"
    wasm, compiled = cache_dir / f"{name}.wasm", cache_dir / f"{name}.{native}.cwasm"
    with _locked(cache_dir / f"{name}.lock"):
        if compiled.is_file() and wasm.is_file():
            return BuiltComponent(key, native, wasm, compiled, built=False, build_seconds=0.0, compile_seconds=0.0)
        started = time.perf_counter()
        if not wasm.is_file():
            if progress:
                progress("building the guest component with componentize-py (first run only)")
            _componentize(app, wit_path, wasm)
        built_at = time.perf_counter()
        if progress:
            progress("compiling the guest component to native code with wasmtime (first run on this machine)")
        engine = make_engine() if engine is None else engine
        _write_atomically(compiled, bytes(Component.from_file(engine, wasm).serialize()))
        done = time.perf_counter()
    return BuiltComponent(key, native, wasm, compiled, True, built_at - started, done - built_at)


def discard_compiled(built: BuiltComponent) -> None:
    """Remove compiled code the engine refused to load, so the next :func:`ensure_component` compiles it anew."""
    built.compiled.unlink(missing_ok=True)


def _componentize(app: GuestApp, wit_path: Path, output: Path) -> None:
    # imported by the build alone: a warm start, which only reads the cache, does without them
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="skillhouse-guest-") as scratch:
        stage = Path(scratch) / "stage"
        for relative, content in staged_files(app).items():
            target = stage / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        partial = Path(scratch) / "component.wasm"
        command = [
            *_builder_command(),
            "--wit-path", str(wit_path), "--world", WORLD, "--quiet",
            "componentize", "--stub-wasi", "--python-path", str(stage),
            "--output", str(partial), app.module.stem,
        ]  # fmt: skip
        # The builder's own environment, passed through (not a setting of ours): without VIRTUAL_ENV it
        # adds no site-packages, so the component holds the stage only.
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        env["RUST_BACKTRACE"] = "0"
        proc = subprocess.run(command, cwd=stage, env=env, capture_output=True, text=True)
        if proc.returncode != 0 or not partial.is_file():
            detail = _failure_summary(proc.stderr or proc.stdout)
            raise GuestBuildError("build-failed", f"componentize-py failed for {app.module.name}:\n{detail}")
        _write_atomically(output, partial.read_bytes())


def _failure_summary(output: str) -> str:
    """The builder's own error: without its wrapper script's frames and the wasm backtrace under it."""
    kept: list[str] = []
    for line in output.splitlines():
        if line.startswith(("Caused by:", "Stack backtrace:")):
            break
        wrapper = "bin/componentize-py" in line or "sys.exit(script())" in line or set(line.strip()) <= {"^"}
        if not wrapper and line.strip() != "Traceback (most recent call last):":
            kept.append(line)
    return "\n".join(kept).strip()[:2000]


def _builder_command() -> list[str]:
    import shutil  # the build's alone, as in _componentize

    beside = Path(sys.executable).parent / "componentize-py"
    found = str(beside) if beside.is_file() else shutil.which("componentize-py")
    if found is None:
        raise GuestBuildError(
            "builder-missing", "componentize-py is not installed (pip install componentize-py)"
        )
    return [found]


def _write_atomically(path: Path, content: bytes) -> None:
    partial = path.with_name(path.name + f".{os.getpid()}.partial")
    partial.write_bytes(content)
    os.replace(partial, path)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
