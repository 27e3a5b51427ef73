"""The built component: what it imports and exports, and the cache that builds it only once."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import wasmtime
from wasmtime.component import Component, ComponentInstanceType, FuncType

from skillhouse.host import InProcessRunner, TurnHost, make_runner
from skillhouse.host.wasm_build import (
    AGENT_APP,
    WIT_PATH,
    BuiltComponent,
    GuestApp,
    GuestBuildError,
    cache_key,
    ensure_component,
    installed_version,
    machine,
    make_engine,
    native_key,
    staged_files,
)
from skillhouse.host.wasm_runner import HOST_INTERFACE, WasmRunner, loaded_component
from skillhouse.settings import Settings


def wit_functions(block: str) -> list[str]:
    """The function names declared in ``interface <block>`` or ``world <block>`` of host/wit/agent.wit."""
    text = WIT_PATH.read_text()
    body = re.search(rf"(?:interface|world) {block} \{{(.*?)\n\}}", text, re.S)
    assert body is not None
    return re.findall(r"^\s*(?:export )?([a-z-]+): func", body.group(1), re.M)


def loaded(built: BuiltComponent) -> tuple[wasmtime.Engine, Component]:
    engine = make_engine()
    return engine, Component.deserialize_file(engine, str(built.compiled))


def test_the_component_imports_nothing_but_the_host_interface_of_the_wit_world(
    agent_component: BuiltComponent,
) -> None:
    engine, component = loaded(agent_component)

    imports = component.type.imports(engine)

    assert list(imports) == [HOST_INTERFACE]  # no wasi:filesystem, wasi:sockets, wasi:cli, ...
    interface = imports[HOST_INTERFACE].ty
    assert isinstance(interface, ComponentInstanceType)
    functions = interface.exports(engine)
    assert sorted(functions) == sorted(wit_functions("host"))
    assert all(isinstance(item.ty, FuncType) for item in functions.values())


def test_the_component_exports_the_guest_functions_of_the_wit_world(agent_component: BuiltComponent) -> None:
    engine, component = loaded(agent_component)

    exports = component.type.exports(engine)

    assert set(wit_functions("agent")) == {"list-tools", "call-tool", "run-turn"}
    assert set(wit_functions("agent")) <= set(exports)


def test_a_second_build_of_the_same_sources_is_served_from_the_cache(
    agent_component: BuiltComponent, cache_dir: Path
) -> None:
    again = ensure_component(cache_dir=cache_dir)

    assert not again.built
    assert (again.wasm, again.compiled) == (agent_component.wasm, agent_component.compiled)


def test_the_component_carries_the_guest_and_the_error_tree_root_and_nothing_else_of_skillhouse() -> None:
    staged = staged_files(AGENT_APP)
    ours = sorted(path for path in staged if path.startswith("skillhouse/") and not path.startswith("skillhouse/guest/"))
    assert ours == ["skillhouse/__init__.py", "skillhouse/errors.py"]
    assert staged["skillhouse/__init__.py"] == b""
    assert staged["skillhouse/errors.py"] == dict(AGENT_APP.packages)["skillhouse.errors"].read_bytes()


def test_the_cache_key_changes_with_the_guest_sources_the_error_root_and_the_wit_file(tmp_path: Path) -> None:
    guest, errors = tmp_path / "guest", tmp_path / "errors.py"
    shutil.copytree(dict(AGENT_APP.packages)["skillhouse.guest"], guest)
    shutil.copyfile(dict(AGENT_APP.packages)["skillhouse.errors"], errors)
    app = GuestApp(AGENT_APP.module, (("skillhouse.guest", guest), ("skillhouse.errors", errors)))
    wit = tmp_path / "agent.wit"
    shutil.copyfile(WIT_PATH, wit)
    original = cache_key(app, wit)
    assert cache_key(app, wit) == original == cache_key(AGENT_APP, WIT_PATH)

    (guest / "catalogue.py").write_text((guest / "catalogue.py").read_text() + "\n# changed\n")
    changed_source = cache_key(app, wit)
    errors.write_text(errors.read_text() + "\n# changed\n")
    changed_root = cache_key(app, wit)
    wit.write_text(wit.read_text() + "\n")

    assert len({original, changed_source, changed_root, cache_key(app, wit)}) == 4


def test_a_wit_file_that_does_not_parse_is_a_build_error_saying_where(tmp_path: Path) -> None:
    wit = tmp_path / "agent.wit"
    wit.write_text(
        WIT_PATH.read_text().replace("eager-tools: func() -> string", "eager-tools: func() -> strng")
    )

    with pytest.raises(GuestBuildError) as failure:
        ensure_component(cache_dir=tmp_path / "cache", wit_path=wit)

    assert failure.value.code == "build-failed"
    assert "strng" in failure.value.message and f"{wit}:" in failure.value.message
    assert "Traceback" not in failure.value.message
    assert not list((tmp_path / "cache").glob("*.wasm"))


def test_a_missing_wit_file_is_a_build_error(tmp_path: Path) -> None:
    with pytest.raises(GuestBuildError) as failure:
        ensure_component(cache_dir=tmp_path, wit_path=tmp_path / "agent.wit")

    assert failure.value.code == "wit-missing"


def test_make_runner_gives_a_wasm_runner_for_the_wasm_kind(hollowbrook: dict[str, object]) -> None:
    runner = make_runner(TurnHost([hollowbrook], lambda request: {}), "wasm")

    assert isinstance(runner, WasmRunner)
    assert isinstance(make_runner(TurnHost([hollowbrook], lambda request: {}), "inprocess"), InProcessRunner)


def test_skillhouse_guest_chooses_the_runner_and_wasm_is_the_default_without_a_fallback() -> None:
    assert Settings.from_env({"SKILLHOUSE_GUEST": "inprocess"}).guest == "inprocess"
    assert Settings.from_env({"SKILLHOUSE_GUEST": "wasm"}).guest == "wasm"
    assert Settings.from_env({}).guest == "wasm"  # never the in-process guest unless asked for by name


def test_the_build_guest_command_names_the_cached_component_without_building_again(
    agent_component: BuiltComponent, cache_dir: Path
) -> None:
    from typer.testing import CliRunner

    from skillhouse.cli import app

    result = CliRunner().invoke(app, ["build-guest", "--cache-dir", str(cache_dir)])

    assert result.exit_code == 0
    assert result.stdout.strip() == str(agent_component.compiled)


def test_the_compiled_codes_key_changes_with_the_machine_and_the_component() -> None:
    here = machine()

    assert here.startswith(f"{platform.system()}-{platform.machine()}-")
    assert machine() == here
    assert len({native_key("a", here), native_key("a", "Linux-aarch64-0123456789ab"), native_key("b", here)}) == 3


def test_compiled_code_for_another_machine_is_compiled_anew_from_the_cached_component(
    agent_component: BuiltComponent, tmp_path: Path
) -> None:
    shutil.copy2(agent_component.wasm, tmp_path / agent_component.wasm.name)
    steps: list[str] = []

    other = ensure_component(cache_dir=tmp_path, progress=steps.append, machine_id="Linux-x86_64-another-cpu")
    again = ensure_component(cache_dir=tmp_path, progress=steps.append, machine_id="Linux-x86_64-another-cpu")

    assert other.built and other.key == agent_component.key and other.native != agent_component.native
    assert other.compiled.name != agent_component.compiled.name and other.compiled.is_file()
    assert len(steps) == 1 and "wasmtime" in steps[0]  # compiled only: the component was not built again
    assert not again.built and again.compiled == other.compiled
    engine = make_engine()
    assert Component.deserialize_file(engine, str(other.compiled)) is not None


def test_compiled_code_the_engine_refuses_is_compiled_again_on_load(agent_component: BuiltComponent, tmp_path: Path) -> None:
    shutil.copy2(agent_component.wasm, tmp_path / agent_component.wasm.name)
    (tmp_path / agent_component.compiled.name).write_bytes(b"\x7fELF written by some other wasmtime")

    loaded = loaded_component(cache_dir=tmp_path)

    assert loaded.component is not None
    assert (tmp_path / agent_component.compiled.name).stat().st_size == agent_component.compiled.stat().st_size


def test_the_tools_versions_are_those_importlib_metadata_reads() -> None:
    for name in ("componentize-py", "wasmtime"):
        assert installed_version(name) == importlib.metadata.version(name)


def test_a_distribution_without_a_dist_info_folder_beside_its_module_is_looked_up_by_importlib_metadata() -> None:
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        installed_version("no-such-distribution-anywhere")


def installed_at(site: Path, name: str, *versions: str) -> None:
    """A module ``name`` in ``site`` with one ``.dist-info`` folder per version, as an installer leaves them."""
    (site / name).mkdir()
    (site / name / "__init__.py").write_text("")
    for version in versions:
        info = site / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def test_the_version_is_read_from_the_one_dist_info_folder_beside_the_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed_at(tmp_path, "skillhouse_fake_tool", "1.2.3")
    monkeypatch.syspath_prepend(str(tmp_path))

    assert installed_version("skillhouse-fake-tool") == "1.2.3"


def test_several_dist_info_folders_are_left_to_importlib_metadata(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    installed_at(tmp_path, "skillhouse_fake_tool", "1.0", "2.0")
    monkeypatch.syspath_prepend(str(tmp_path))

    assert installed_version("skillhouse-fake-tool") == importlib.metadata.version("skillhouse-fake-tool")


def test_a_warm_start_loads_the_cached_component_without_importing_what_only_a_build_needs(
    agent_component: BuiltComponent,
) -> None:
    script = (
        "import sys; from skillhouse.host.wasm_runner import loaded_component; loaded_component(); "
        "print(' '.join(m for m in ('importlib.metadata', 'subprocess', 'tempfile', 'shutil') if m in sys.modules))"
    )
    env = {**os.environ, "SKILLHOUSE_GUEST_CACHE": str(agent_component.compiled.parent)}

    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)

    assert result.stdout.split() == []


def test_a_warm_start_imports_neither_the_guest_s_loop_nor_the_settings_dataclass_nor_openssl(
    agent_component: BuiltComponent,
) -> None:
    # the host reads the guest's values and Host only; the cache directory through settings_env; SHA-256 from
    # CPython's own module: each of these was a part of a new process's warm start
    script = (
        "import sys; from skillhouse.host import TurnHost, make_runner; "
        "make_runner(TurnHost([], lambda r: {}), 'wasm').list_tools(); "
        "print(' '.join(m for m in ('skillhouse.guest.guest', 'skillhouse.guest.translation', "
        "'skillhouse.guest.validation', 'skillhouse.settings', 'hashlib', '_hashlib') if m in sys.modules))"
    )
    env = {**os.environ, "SKILLHOUSE_GUEST_CACHE": str(agent_component.compiled.parent)}

    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)

    assert result.stdout.split() == []


def test_the_engine_without_interruption_is_another_configuration_than_the_cache_s(agent_component: BuiltComponent) -> None:
    # the cache's compiled code is the interruptible engine's: the other engine refuses it, as any engine whose
    # configuration differs must (a guest it ran could not be stopped); it is for measuring what the timeout costs
    with pytest.raises(wasmtime.WasmtimeError):
        Component.deserialize_file(make_engine(interruptible=False), str(agent_component.compiled))

    assert Component.deserialize_file(make_engine(), str(agent_component.compiled)) is not None
