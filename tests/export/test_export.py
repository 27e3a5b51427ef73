"""The Agent Skills export: SKILL.md that validates, and a reference with "The call" per operation."""

from __future__ import annotations

import json
from pathlib import Path

from skills_ref.validator import validate as validate_agent_skill
from typer.testing import CliRunner

from skillhouse.cli import app
from skillhouse.compiler import compile_dir
from skillhouse.export import example_value, export_release, write_bundle

HOLLOWBROOK = Path(__file__).resolve().parents[2] / "examples" / "hollowbrook"


def _release() -> dict[str, object]:
    compiled, errors = compile_dir(HOLLOWBROOK)
    assert compiled is not None, errors
    return compiled.document


def test_the_hollowbrook_export_validates_and_has_a_reference_per_operation_and_document(tmp_path: Path) -> None:
    files = export_release(_release())
    root = write_bundle(files, tmp_path / "hollowbrook")
    assert validate_agent_skill(root) == []
    assert sorted(files) == [
        "SKILL.md",
        "references/cancel_booking.md",
        "references/charge.md",
        "references/check_availability.md",
        "references/create_booking.md",
        "references/house_rules.md",
        "references/list_rooms.md",
    ]


def test_the_call_section_says_method_url_where_each_argument_goes_and_gives_an_example_body() -> None:
    text = export_release(_release())["references/create_booking.md"]
    call = text[text.index("## The call") :]
    assert "`POST http://hollowbrook.local:8084/bookings`" in call
    assert "| `room_id` | body | `room_id` | yes | integer |" in call
    assert "| `note` | body | `note` | no | string |" in call
    example = json.loads(call.split("```json\n", 1)[1].split("\n```", 1)[0])
    assert set(example) == {"room_id", "guest_name", "arrival", "departure"}
    assert "does not act twice" in call


def test_a_gated_operation_says_a_person_approves_it() -> None:
    text = export_release(_release())["references/charge.md"]
    assert "A person approves this request before it is sent" in text


def test_examples_follow_the_schema() -> None:
    schema = {"type": "object", "required": ["when", "n", "kind"], "properties": {
        "when": {"type": "string", "format": "date"}, "n": {"type": "integer", "minimum": 5},
        "kind": {"enum": ["a", "b"]}, "skip": {"type": "string"}}}
    assert example_value(schema) == {"when": "2024-01-31", "n": 5, "kind": "a"}


def test_export_command_writes_a_bundle_from_a_package_or_a_release_file(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["export", str(HOLLOWBROOK), "--out", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    assert validate_agent_skill(tmp_path / "a" / "hollowbrook") == []
    release = tmp_path / "release.json"
    release.write_text(json.dumps(_release()))
    result = runner.invoke(app, ["export", str(release), "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "b" / "hollowbrook" / "references" / "charge.md").read_text() == (
        tmp_path / "a" / "hollowbrook" / "references" / "charge.md"
    ).read_text()


def test_export_command_refuses_a_file_that_is_not_a_release(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text("[1, 2]")
    result = CliRunner().invoke(app, ["export", str(bad), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1


def test_export_follows_the_import_rule_for_out(tmp_path: Path) -> None:
    runner = CliRunner()
    # --out names the parent even when it is called like the skill
    result = runner.invoke(app, ["export", str(HOLLOWBROOK), "--out", str(tmp_path / "hollowbrook")])
    assert result.exit_code == 0, result.output
    assert validate_agent_skill(tmp_path / "hollowbrook" / "hollowbrook") == []
    again = runner.invoke(app, ["export", str(HOLLOWBROOK), "--out", str(tmp_path / "hollowbrook")])
    assert again.exit_code == 0, again.output
    taken = tmp_path / "taken" / "hollowbrook"
    taken.mkdir(parents=True)
    (taken / "keep.txt").write_text("mine")
    refused = runner.invoke(app, ["export", str(HOLLOWBROOK), "--out", str(tmp_path / "taken")])
    assert refused.exit_code == 2 and refused.stderr.startswith("error: out-not-a-skill: ")
    assert [p.name for p in taken.iterdir()] == ["keep.txt"]
