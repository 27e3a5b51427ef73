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
    "jira-platform.json": ("sha256:18b55de16d8fc70a7f00dcf14270996841fd80ede23b0deb990eab9c266023e4", "138f150f797cad396fb6e35710e6345a", "ff3156caac19b8f8e80435ea9256e00c"),
    "notion.json": ("sha256:0533b62101b349e2020874c2df8d2625ebeafd68e29d570243928f338b9a74fa", "5e29d8872db0c8548fc77ae613f79fb1", "edb747fbbc04e9e42d4827464d6237ee"),
    "openai.yaml": ("sha256:b37e7381fd5369a4d7cae7a24ad6d71c342c83ff0e819e74243f52717b3b82f1", "6c29d2f244bcc55cd2ddad2a53e0de28", "f3d7848dc55ac8a1abe9621ae6ea8e91"),
    "petstore-v3.yaml": ("sha256:cc41bf2e746cc5c53c46bacbd52de2bc10fc075be7346a85fdcfc36269870a91", "16a2a71791f299b2efd9a6b0b2f45330", "4dba98fc225d7003e37ee36c72dfa7bd"),
    "readme-3.0-discriminators.json": ("sha256:197542ad795b43fa81dca8c924ce01a3381e544fd3832bad25f066ff94814892", "1e6f81501fc56c5db82e8c87d85779b5", "b6efd2f2e756f302dbe9a59617dc3285"),
    "readme-3.0-parameters-style.json": ("sha256:f416b72a59b79d7738c1049f4b6602d18e187191d862953ef60a0f644c490c0b", "a752306f45050a4da30eac65fd4d8867", "439d2e432ef8e8e20efde8a3d432aa6e"),
    "readme-3.0-schema-circular.json": ("sha256:a23488aaa05ceb267d9f7502d587c5c4d089587731377246a8aa730158e46539", "a5ae71de79fb41dd879382a5caf8d460", "7f174dc25f7e60cf561dbb7bd0266a3a"),
    "readme-3.0-star-trek.json": ("sha256:5d7695b71dc383aa8998309352d188e0841c8f052823db2f61cc6d51f63bb19e", "e2b0270d857768a6c0bcdba5e4ccd960", "cf0b29271e531d7470dbb781f10cb95d"),
    "readme-3.1-schema-types.json": ("sha256:ea86bbe16cf2ac563b4d74bc62a35b80a3d7cf13dad16667ce15f78e987ce550", "95c789ed3afa2077707782541325cbbb", "4e37b30159e208594e9624acdc98cf77"),
    "slack-web-swagger2.json": ("sha256:85d49f07d04455aa2cbfa9763267472e58133b127efb0728e8c8bd15c4e46a5a", "848668f291c630816744a6138b2b03e8", "e22ca99c77d9939e61f32bd448107514"),
    "spotify.yaml": ("sha256:c64759072f1db21d79257f22fed024d24bdc749e7f3d4e88985986a33fc5542e", "1cd107487ed02d4bcf8db221549e8378", "32804dd1d8ada796f6d6131b7e34f919"),
    "stripe-2018-12.json": ("sha256:50cf5bb20658e85c6ada828d4d64782ddf2496f762acbc21a88b78e15a07be3d", "c3b15db326886916f6e23f0d88288f57", "f5c6a2c3ffa251159b716b56815d9b76"),
    "stripe-2023-09.yaml": ("sha256:c6c835ebf375c020325299e56ff50b37f2d3a083c081e7b84d07bea10bd00bdf", "48946e27dcb2df4772b8197e7ae45623", "9cfb0cb8b81059f8f15e114644fac935"),
    "twilio-api-v2010.json": ("sha256:da06a6351a0b8c0b8efddc733d477830cda440657c84540a87f1d73e40140a79", "8c6cae62e950ef06c332d2bcf5bed6ef", "5680f21937a7f89306b3999ca5c14f20"),
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
