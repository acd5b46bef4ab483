"""flarespec: a declarative YAML-spec validator framework."""

__version__ = "0.1.0"
