"""Reading skill packages: SKILL.md, operation frontmatter, plain documents and types.json."""

from skillhouse.skill.errors import ALL_CODES, SkillError, SkillPackageError
from skillhouse.skill.frontmatter import Frontmatter, MarkdownFile
from skillhouse.skill.package import (
    SkillManifest,
    SkillPackage,
    package_files,
    read_package,
    read_package_dir,
)

__all__ = [
    "ALL_CODES",
    "Frontmatter",
    "MarkdownFile",
    "SkillError",
    "SkillManifest",
    "SkillPackage",
    "SkillPackageError",
    "package_files",
    "read_package",
    "read_package_dir",
]
