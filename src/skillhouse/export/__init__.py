"""The Agent Skills export: a release as a SKILL.md bundle with generated "The call" references."""

from skillhouse.export.bundle import export_release, reference_file, the_call, write_bundle
from skillhouse.export.examples import example_value

__all__ = ["example_value", "export_release", "reference_file", "the_call", "write_bundle"]
