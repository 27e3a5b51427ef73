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
    "jira-platform.json": ("sha256:40072283fcec65e84d4787deec24898bc94e87b74792560d2e176b7b4ff98148", "7e2e87cabdafd3ab311924eee9727b14", "8a4d2fd6d631776bcc02336b36c2dded"),
    "notion.json": ("sha256:a8fdbd2a3bc33df6fa015b18e859e2e3e2718f0e1d48ace5614b58cca5e11498", "307fa14d8e07c70ad55ad8a22f5e22bf", "e3c47832172d717dd7c4071d0a040747"),
    "openai.yaml": ("sha256:11cf7a8e523c4d767aa818427715738a9f9804932e2e4886696882defc59b459", "1864e10f6186c4cfee68f1f599d74f73", "b8d5667da6fe40465ee5e74a60c512d7"),
    "petstore-v3.yaml": ("sha256:67d6086f1a3746d73bae09e3392c30943cacd72664fa64127a2f5575e7796271", "16a2a71791f299b2efd9a6b0b2f45330", "f1a1d2111e1541a82016e89f622e39b1"),
    "readme-3.0-discriminators.json": ("sha256:ce38f31c6b220cf38047154b87b9bce76623a9ef432e0e471def33f5a9aef20a", "9e03b8f2243374d359427ff1134a62fd", "e82f7992e4f9c00f4f1fa6107728f33e"),
    "readme-3.0-parameters-style.json": ("sha256:faba68f26d8e5f9843cab8e81bee00b0b340ffa605c0af6b810da9c6da61e55a", "a752306f45050a4da30eac65fd4d8867", "121d508fc751aec2a27e9271cd232c59"),
    "readme-3.0-schema-circular.json": ("sha256:d0a724d67fb87f017330f707f2084e49c0627169e89df0b6674afdf4aa480c96", "a5ae71de79fb41dd879382a5caf8d460", "6e335e95863c4dec5ec640aa1894b477"),
    "readme-3.0-star-trek.json": ("sha256:e65c726c591f4a5efc7fe5050fdfc60e802aab22b985722242f070b12da1f7cd", "501eb4cd75c12f194dd4dc4e7140399c", "1196940a763ea93fdd4ad61f7763ba2d"),
    "readme-3.1-schema-types.json": ("sha256:197b4a63d28417c47ce222aa2b7710e18335102115b9a41ebcbf238cb077ef7d", "75827874bfbb880db4535e51da8b57ec", "50b5c10b288a0dd429ca290b98e7e8f9"),
    "slack-web-swagger2.json": ("sha256:2d1c9f5e514b30e0916f6f970d0c6585806e1b09df00687eabecd6aef15dabf8", "52236db17fe83932e481c22b2cfd0c23", "5b94cd65c937f51a41a89c561743ce26"),
    "spotify.yaml": ("sha256:9f323d2ada452acd9b5d8829d9e7dd1ad3841c13d90a69ff819dd71d9a7a45b0", "f1e2ec1c0b7a566a3a3c38a8573c8a7c", "f0355b9b5ff18f03013509c458243cfd"),
    "stripe-2018-12.json": ("sha256:e8210393c708176f943cafae1afacaf8edc3ea0304ec5b7804b00f086324aa0d", "b4d6968d3be822188e3b86645003dbb9", "267e8e5071ca398af835d5d217ff75f1"),
    "stripe-2023-09.yaml": ("sha256:3aa6191a37877e4806defb28cc91d75424bf2e43db2440fc24da9f1696e8b003", "318a17f1b366338b3be2773130553d47", "5bf5d3f875431c01bb67ceabc05f2360"),
    "twilio-api-v2010.json": ("sha256:b7f11cc7e6ea010bb9eb28dbdcebf0b086d4aa462ed6e4bda66d8ea5ae51b01e", "8c6cae62e950ef06c332d2bcf5bed6ef", "8c32e2a99043dcd666a00243c4eb301e"),
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
