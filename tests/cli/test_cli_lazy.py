"""Subcommand modules are imported only when used (flarespec.cli.lazy): help lists every
command with its own short help, and `--help` or `measure` import none of the others."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from flarespec.cli import main
from flarespec.cli.lazy import LazyGroup, load

GROUPS = {"flarespec": main, "spec": main.get_command(click.Context(main), "spec"),
          "fixture": main.get_command(click.Context(main), "fixture")}
LAZY = [(group_name, name) for group_name, group in GROUPS.items()
        for name in group.lazy]


@pytest.mark.parametrize("group_name, name", LAZY)
@pytest.mark.parametrize("limit", [20, 45, 74, 200])
def test_a_lazy_summary_is_the_commands_own_short_help(group_name, name, limit):
    """Listed from the map, shortened as click shortens the command's own help."""
    target, summary = GROUPS[group_name].lazy[name]
    command = load(target)
    assert click.Command(name, help=summary).get_short_help_str(limit) == \
        command.get_short_help_str(limit)


@pytest.mark.parametrize("group_name", sorted(GROUPS))
def test_every_command_is_listed_as_click_lists_it(group_name):
    group = GROUPS[group_name]
    fresh = LazyGroup(group.name, commands=[c for n, c in group.commands.items()
                                            if n not in group.lazy], lazy=group.lazy)
    lazily, eagerly = click.HelpFormatter(width=100), click.HelpFormatter(width=100)
    fresh.format_commands(click.Context(fresh), lazily)
    click.Group.format_commands(group, click.Context(group), eagerly)
    assert lazily.getvalue() == eagerly.getvalue()
    assert set(fresh.list_commands(click.Context(fresh))) == \
        set(group.list_commands(click.Context(group)))


def imported_by(*arguments: str) -> set[str]:
    """The flarespec and standard modules a new process imports to run the command line."""
    script = ("import json, sys\nfrom flarespec.cli import main\ntry:\n"
              f"    main({list(arguments)!r})\nexcept SystemExit:\n    pass\n"
              "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, timeout=120)
    return set(json.loads(done.stdout.splitlines()[-1]))


SPEC_TOOLING = {"flarespec.cli.spec_commands", "flarespec.cli.fixture_commands",
                "flarespec.cli.diff_command", "flarespec.cli.spec_test_command",
                "flarespec.review.render", "flarespec.review.diff", "urllib.request"}


def tooling_rooms(modules: set[str]) -> set[str]:
    """The modules of the review and authoring rooms among ``modules``."""
    return {m for m in modules if m.startswith(("flarespec.review", "flarespec.authoring"))}


def test_top_level_help_imports_no_subcommand_module():
    modules = imported_by("--help")
    assert not modules & SPEC_TOOLING and not tooling_rooms(modules)
    assert not {m for m in modules if m.startswith(("flarespec.compiler", "flarespec.engine"))}


def test_measure_imports_no_spec_tooling(packet_pair, tmp_path):
    a, b = packet_pair
    modules = imported_by("measure", "--packet", str(a), "--peer", str(b), "--output",
                          str(tmp_path / "r.json"), "--quiet")
    assert "flarespec.adapter.commands" in modules
    assert not modules & SPEC_TOOLING and not tooling_rooms(modules)


def test_spec_help_lists_its_lazy_commands_without_importing_them():
    modules = imported_by("spec", "--help")
    assert "flarespec.cli.spec_commands" in modules
    assert not modules & (SPEC_TOOLING - {"flarespec.cli.spec_commands"})
    assert not tooling_rooms(modules)


# What a measure whose spec comes from the compiled-spec cache never needs: the YAML parser
# and the spec's own schema, the token grammar of ${...} constants, the shape compiler, the
# suggestions for a misspelt name.
SPEC_COMPILING = {"yaml", "flarespec.compiler.yamlparse", "flarespec.compiler.metaschema",
                  "flarespec.compiler.tokens", "flarespec.compiler.shapes", "difflib"}


def test_measure_from_the_cache_imports_no_yaml_parser(packet_pair, tmp_path):
    a, b = packet_pair
    arguments = ("measure", "--packet", str(a), "--peer", str(b), "--output",
                 str(tmp_path / "r.json"), "--quiet")
    imported_by(*arguments)  # compiles and stores the bundled specs if the cache lacks them
    modules = imported_by(*arguments)
    assert "flarespec.compiler.compile" in modules and not modules & SPEC_COMPILING
