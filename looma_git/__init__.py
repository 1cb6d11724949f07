"""looma: a git-anchored model of the work coding agents do."""

__version__ = "0.1.0"
