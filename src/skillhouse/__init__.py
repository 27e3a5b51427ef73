"""skillhouse: HTTP operations declared in skill files, offered to LLM agents as tools."""

__version__ = "0.1.0"
