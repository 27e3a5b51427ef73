"""Reading the documentation's Markdown the way the drift tests need it: sections, fenced blocks, tables."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
TITLE = re.compile(r'title="([^"]+)"')


@dataclass(frozen=True)
class Block:
    """A fenced code block: its language, its ``title="..."`` (a file name) if any, and its text."""

    language: str
    title: str | None
    text: str


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def sections(text: str, level: int) -> dict[str, str]:
    """Heading text to the section under it (up to the next heading of the same or a higher level)."""
    marks = "#" * level
    pattern = re.compile(rf"^{marks} (.+)$", re.MULTILINE)
    # a '#' line inside a fenced block is not a heading: find headings in a copy with the blocks blanked
    masked = FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    found = list(pattern.finditer(masked))
    out: dict[str, str] = {}
    for index, match in enumerate(found):
        end = found[index + 1].start() if index + 1 < len(found) else len(text)
        rest = text[match.end():end]
        masked_rest = masked[match.end():end]
        higher = re.search(rf"^#{{1,{level - 1}}} ", masked_rest, re.MULTILINE) if level > 1 else None
        out[match.group(1).strip()] = rest[: higher.start()] if higher else rest
    return out


def blocks(text: str) -> list[Block]:
    out = []
    for language, rest, body in FENCE.findall(text):
        title = TITLE.search(rest)
        out.append(Block(language, title.group(1) if title else None, body))
    return out


def first_column(text: str) -> list[str]:
    """The backticked names in the first column of every table row in ``text`` (header rows skipped)."""
    names = []
    for line in text.splitlines():
        cell = re.match(r"^\|\s*`([^`]+)`", line)
        if cell:
            names.append(cell.group(1))
    return names
