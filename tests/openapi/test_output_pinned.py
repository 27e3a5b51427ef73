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
    "jira-platform.json": ("sha256:327dc1957ff861692a629b3787356205bd072d18ce4a9cfd6f918cecc13b7e46", "2ff6a47573e2fe446c3ba7b4fa4cef15", "d85ddd09e9355af4162bed709ef92d3d"),
    "notion.json": ("sha256:c40136bedd5cbf937a2dee23d82177a385e61e5bc68065df5776f1e9846275dd", "ec66ca074ad6a9fe161fd71c3657c92c", "1a1bd5332d06174a13882ed8a4f15248"),
    "openai.yaml": ("sha256:08bd02b794e033655d117c3afe6c66194e431d1ca0094ffcf02bd28a65e7e570", "1a7d572bbfb1b340339ce81e1b3320a0", "4dfe30b20180613359e3903dc589263b"),
    "petstore-v3.yaml": ("sha256:cc41bf2e746cc5c53c46bacbd52de2bc10fc075be7346a85fdcfc36269870a91", "16a2a71791f299b2efd9a6b0b2f45330", "5e328a2e5134631bb0c9094292403ccf"),
    "readme-3.0-discriminators.json": ("sha256:9fd039d4b9d33bf820e89e741187d5c9841e89053bd7a7721076b6bbd51dbab3", "9e03b8f2243374d359427ff1134a62fd", "e82f7992e4f9c00f4f1fa6107728f33e"),
    "readme-3.0-parameters-style.json": ("sha256:adca959af01d3f3480199ab24dcd5d9eda48d9dfb0365eda6cd03dbd83cd6fe1", "17cbf41c4a718dbd506de7daf9fa6dea", "60e79f280f77120d6ac7b09eb2d1abf2"),
    "readme-3.0-schema-circular.json": ("sha256:a23488aaa05ceb267d9f7502d587c5c4d089587731377246a8aa730158e46539", "a5ae71de79fb41dd879382a5caf8d460", "6e335e95863c4dec5ec640aa1894b477"),
    "readme-3.0-star-trek.json": ("sha256:e65c726c591f4a5efc7fe5050fdfc60e802aab22b985722242f070b12da1f7cd", "501eb4cd75c12f194dd4dc4e7140399c", "1196940a763ea93fdd4ad61f7763ba2d"),
    "readme-3.1-schema-types.json": ("sha256:0c17bd11138f80e93b41849f71d57fdc46cdc4ce7c167073b020aa70d5a27685", "cc70173f362371003face413f20916a8", "5a1d631a03318793bfd737443a837941"),
    "slack-web-swagger2.json": ("sha256:95e1867f1eeeff4b9ad7c8ab511ff6439f19f98a3361e558df76ad0266f7d4a6", "52236db17fe83932e481c22b2cfd0c23", "b193030cb5ba3a6a9aa9ac4eb421dd5d"),
    "spotify.yaml": ("sha256:df15cf1a54d000f83231727f3d8048527af1fbec4c6e6e69d96748b5721ed4b1", "f1e2ec1c0b7a566a3a3c38a8573c8a7c", "40f5785bc3f1c3f9aceb80137e659021"),
    "stripe-2018-12.json": ("sha256:59adba38064dc3eb5e0e75f03a57409ff1987242a85cdb190894d9ac79ab70c1", "f4d09bfec7757f687c7e465b7f896835", "4c11e627fd6a57109b070886da1f0f4c"),
    "stripe-2023-09.yaml": ("sha256:7286ff3bd9251b9d15544e7a68aa39e9cefefd96fb8d5c8ed7677e89bc0d3c80", "3c8ad8fcad19e0f672486eab36f124f7", "6a2d7d5ae2f19ebcfd87777c2e7230de"),
    "twilio-api-v2010.json": ("sha256:da06a6351a0b8c0b8efddc733d477830cda440657c84540a87f1d73e40140a79", "8c6cae62e950ef06c332d2bcf5bed6ef", "dc6d6cfefef0ccf6381c83091c1b8d58"),
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
