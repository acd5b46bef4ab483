"""Command groups whose subcommands are imported only when one of them runs.

Every ``flarespec`` process starts by importing the command line: with all subcommand
modules imported up front, ``flarespec --help`` and ``flarespec measure`` paid for the spec
diff machinery (urllib, http, email, xml) they never use. A ``LazyGroup`` names each lazy
subcommand by ``"module:attribute"`` plus its one-line summary, which its help lists
without importing the module (tests/cli/test_cli_lazy.py keeps each summary equal to the
command's own short help).
"""

from __future__ import annotations

import importlib

import click


class LazyGroup(click.Group):
    """A click group with some subcommands given as ``{name: ("module:attribute",
    summary)}``: imported on first use (a run, its own ``--help``, completion)."""

    def __init__(self, *args, lazy: dict[str, tuple[str, str]] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy and name not in self.commands:
            self.add_command(load(self.lazy[name][0]), name)
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As click lists commands, with a lazy command not yet imported shortened from its
        summary exactly as click shortens a command's help."""
        commands = [(name, self.commands.get(name) or click.Command(name, help=self.lazy[name][1]))
                    for name in self.list_commands(ctx)]
        commands = [(name, command) for name, command in commands if not command.hidden]
        if commands:
            limit = formatter.width - 6 - max(len(name) for name, _ in commands)
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit))
                                    for name, command in commands])


def load(target: str) -> click.Command:
    """The command at ``"module:attribute"``."""
    module_name, attribute = target.split(":")
    return getattr(importlib.import_module(module_name), attribute)
