"""docs/integrations.md: one example per framework, and each runs as far as defining its ``book`` function
(its imports, the integration's names); booking itself is tests/integrations/, with each framework's test
model, as the examples need a real model."""

from __future__ import annotations

import inspect

from tests.docs.pages import FENCE, page


def test_each_framework_has_an_example_whose_imports_and_names_exist() -> None:
    examples = [text for language, _, text in FENCE.findall(page("integrations.md")) if language == "python"]
    modules = ["pydantic_ai", "langchain", "openai_agents", "google_adk"]
    assert [next(m for m in modules if f"skillhouse.integrations.{m} import" in code) for code in examples] == modules
    for code in examples:
        scope: dict[str, object] = {}
        exec(compile(code, "docs/integrations.md", "exec"), scope)
        assert callable(scope["book"]) and list(inspect.signature(scope["book"]).parameters)[:2] == ["url", "token"]
