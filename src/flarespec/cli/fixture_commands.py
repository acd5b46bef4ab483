"""``flarespec fixture``: write synthetic packets for tests, demos and spec work."""

from __future__ import annotations

import sys

import click

from flarespec.cli.lazy import LazyGroup

# name -> ("module:attribute", summary listed by `flarespec fixture --help` without importing it)
LAZY_COMMANDS = {
    "check": ("flarespec.cli.spec_test_command:fixture_check",
              "Alias of `flarespec spec test` (same options, same code)."),
}


def open_for_writing(spec_ref: str | None):
    """The compiled spec to write packets for (default: ``writers.default_spec``), checked
    against its writer's declaration; a problem is a usage error naming ``--spec``. A spec
    that does not lint is refused first (``refuse_unlinted``): the writer never writes
    evidence its own spec rejects."""
    from flarespec.fixtures.writers import default_spec, prepare
    from flarespec.compiler.errors import SpecInvalid
    from flarespec.compiler.open import open_compiled

    try:
        ref = spec_ref or default_spec().id
        refuse_unlinted(ref)
        spec = open_compiled(ref)
        prepare(spec)
    except SpecInvalid as problem:
        raise click.BadParameter(f"\n{problem}", param_hint="--spec") from None
    return spec


def refuse_unlinted(ref: str) -> None:
    """Lint ``ref`` (a bundled id or a spec file) as ``spec lint`` does; on an error print
    every error to stderr, each on a line of its own starting with its file:line:column
    (as ``spec lint`` and ``spec diff`` print them, so an editor's problem matcher reads
    them), and exit 2, before anything is written.
    Bundled specs are linted too (an editable install's may be edited); one spec is linted
    once per process and set of file contents (its writer check: authoring/writer_lint.py)."""
    from flarespec.authoring.lint import lint

    [result] = lint([ref])
    if not result.errors:
        return
    count = len(result.errors)
    click.echo(f"error: spec {ref} does not lint ({count} error{'s' * (count != 1)}): no "
               f"packet is written (`flarespec spec lint {ref}` says the same)", err=True)
    for issue in result.errors:
        click.echo(str(issue), err=True)
    sys.exit(2)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _writer_params() -> list[click.Option]:
    """One click option per command-line option the installed writers declare (merged by
    name); values are checked against the spec's writer once the spec is loaded."""
    from flarespec.fixtures.writers import discover

    merged: dict[str, tuple] = {}
    for writer in discover().values():
        for option in writer.options:
            if option.cli:
                first, writers = merged.get(option.name, (option, []))
                merged[option.name] = (first, writers + [writer.name])
    return [_click_option(option, writers) for option, writers in merged.values()]


def _click_option(option, writers: list[str]) -> click.Option:
    if option.choices_from:
        default = f"one of the spec's constant {option.choices_from}; default: its first"
    else:
        default = f"default: {option.default}"
    if option.type is int:
        kind = click.INT if option.minimum is None else click.IntRange(min=option.minimum)
    else:
        kind = {bool: None}.get(option.type, click.STRING)
    name = option.name.replace("_", "-")
    decls = [f"--{name}/--no-{name}"] if option.type is bool else [f"--{name}"]
    return click.Option([*decls, option.name], type=kind, default=None,
                        help=f"{option.help} ({default}; writer {', '.join(writers)})")


class _WithWriterOptions(click.Command):
    """A command whose writer options are added when it is parsed or its help is shown,
    so ``flarespec --help`` does not import the writers."""

    def get_params(self, ctx):
        if not getattr(self, "_writer_options_added", False):
            self.params.extend(_writer_params())
            self._writer_options_added = True
        return super().get_params(ctx)


@click.group(cls=LazyGroup, lazy=LAZY_COMMANDS)
def fixture():
    """Synthetic evidence: complete, valid, deterministic packets (always labelled synthetic)."""


@fixture.command("write", cls=_WithWriterOptions)
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--spec", "spec_ref",
              help="Bundled spec id or spec file to write for; its `writer:` key names the "
                   "writer (default: the newest bundled spec with a writer).")
@click.option("--pair", is_flag=True,
              help="Write DIRECTORY/baseline and DIRECTORY/candidate: comparable, different timings.")
def write(directory, spec_ref, pair, **options):
    """Write a synthetic packet (or a --pair) into the empty or missing DIRECTORY.

    \b
    Which files exist and where comes from the spec's documents, what they hold from its
    constants and shapes; the options below are declared by the writers and checked against
    the spec's writer. The spec is linted first (as `flarespec spec lint` does, the writer
    check included): on a lint error nothing is written, the errors are printed, exit 2.
    Example:
      flarespec fixture write out/pair --pair --repetitions 2
    """
    from flarespec.fixtures.writers import WriterError, write_packet, write_pair

    spec = open_for_writing(spec_ref)
    given = {name: value for name, value in options.items() if value is not None}
    try:
        if pair:
            baseline, candidate = write_pair(directory, spec, **given)
            click.echo(f"baseline:  {baseline}\ncandidate: {candidate}")
        else:
            click.echo(str(write_packet(directory, spec, **given)))
    except WriterError as problem:
        hint = _flag(problem.option) if problem.option else None
        raise click.BadParameter(str(problem), param_hint=hint) from None
    except FileExistsError as problem:
        raise click.ClickException(f"{problem} (choose an empty or new directory)") from None

