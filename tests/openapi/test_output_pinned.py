"""The wizard's output on every corpus spec, pinned: the release digest, the written files and the report.

Performance work on the import (parsing, rendering, compiling, the compatibility report) must not
change a byte of what it produces. A deliberate change of output updates these pins in the same commit,
with the reason in its message.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from tests.openapi.specs import SPECS, import_of

from skillhouse.openapi import ImportResult

# spec: (release digest, sha256 of the written files, sha256 of the report), hex cut to 32 characters
PINNED: dict[str, tuple[str, str, str]] = {
    "jira-platform.json": ("sha256:4365de31a3a7ae1d1ae4c9bc1c497fe0fd6d91d5a5e9717accf3060d80c73087", "5ee94e0c07778cd69f0d1eebc477e5e3", "3d7092d6117f76544adb7573a7c801a1"),
    "notion.json": ("sha256:277616f5bdf075a72ce461f236b7942160897e64ad6f2f9d910d6b19838a5315", "2ad1d16c0dff3d2825bec89d84c010e7", "3bba8de6dfb7b50a094275cee98839a0"),
    "openai.yaml": ("sha256:11cf7a8e523c4d767aa818427715738a9f9804932e2e4886696882defc59b459", "1864e10f6186c4cfee68f1f599d74f73", "12de5452fa6a4154a7b8b05a0c96b29a"),
    "petstore-v3.yaml": ("sha256:67d6086f1a3746d73bae09e3392c30943cacd72664fa64127a2f5575e7796271", "16a2a71791f299b2efd9a6b0b2f45330", "4dba98fc225d7003e37ee36c72dfa7bd"),
    "readme-3.0-discriminators.json": ("sha256:be4debe7258d1eceb609503c8475325d9d1ecfb21091b5cfabf95f8797f0ee02", "1e6f81501fc56c5db82e8c87d85779b5", "b6efd2f2e756f302dbe9a59617dc3285"),
    "readme-3.0-parameters-style.json": ("sha256:faba68f26d8e5f9843cab8e81bee00b0b340ffa605c0af6b810da9c6da61e55a", "a752306f45050a4da30eac65fd4d8867", "439d2e432ef8e8e20efde8a3d432aa6e"),
    "readme-3.0-schema-circular.json": ("sha256:d0a724d67fb87f017330f707f2084e49c0627169e89df0b6674afdf4aa480c96", "a5ae71de79fb41dd879382a5caf8d460", "7f174dc25f7e60cf561dbb7bd0266a3a"),
    "readme-3.0-star-trek.json": ("sha256:5d7695b71dc383aa8998309352d188e0841c8f052823db2f61cc6d51f63bb19e", "e2b0270d857768a6c0bcdba5e4ccd960", "cf0b29271e531d7470dbb781f10cb95d"),
    "readme-3.1-schema-types.json": ("sha256:197b4a63d28417c47ce222aa2b7710e18335102115b9a41ebcbf238cb077ef7d", "75827874bfbb880db4535e51da8b57ec", "9bbd3a1e29fd17719c693e2df4d5ef6e"),
    "slack-web-swagger2.json": ("sha256:5d39139bdbf6bed05a63a656d6630f20f8080c34f201b5e90afbca40f05e775a", "848668f291c630816744a6138b2b03e8", "e22ca99c77d9939e61f32bd448107514"),
    "spotify.yaml": ("sha256:b47bd0963532de0b884298f0b37890c93c0bbd4100f7166badf220c4d2d01e6a", "1cd107487ed02d4bcf8db221549e8378", "32804dd1d8ada796f6d6131b7e34f919"),
    "stripe-2018-12.json": ("sha256:f367c312618fed62f32d036c7cf862267fb606ce7f99b0c56fc3497f8c6094a7", "c3b15db326886916f6e23f0d88288f57", "f5c6a2c3ffa251159b716b56815d9b76"),
    "stripe-2023-09.yaml": ("sha256:550e914d33db7ce6f384b75083ea03a9ebbd368b09fb8ac61a7d2348f036003a", "48946e27dcb2df4772b8197e7ae45623", "9cfb0cb8b81059f8f15e114644fac935"),
    "twilio-api-v2010.json": ("sha256:b7f11cc7e6ea010bb9eb28dbdcebf0b086d4aa462ed6e4bda66d8ea5ae51b01e", "8c6cae62e950ef06c332d2bcf5bed6ef", "5680f21937a7f89306b3999ca5c14f20"),
}


def files_digest(result: ImportResult) -> str:
    h = hashlib.sha256()
    for name in sorted(result.files):
        h.update(name.encode() + b"\0" + result.files[name].encode() + b"\0")
    return h.hexdigest()[:32]


def report_digest(result: ImportResult) -> str:
    report = {**result.report.as_dict(), "spec": ""}  # the spec's label depends on how it was given
    return hashlib.sha256(json.dumps(report, sort_keys=True).encode()).hexdigest()[:32]


def test_every_corpus_spec_is_pinned() -> None:
    assert sorted(PINNED) == sorted(p.name for p in SPECS)


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_the_import_of_each_corpus_spec_produces_exactly_the_pinned_output(path: Path) -> None:
    result = import_of(path)
    assert result.compiled is not None
    assert (result.compiled.digest, files_digest(result), report_digest(result)) == PINNED[path.name]
