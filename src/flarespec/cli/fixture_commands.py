"""``flarespec fixture``: write synthetic packets for tests, demos and spec work."""

from __future__ import annotations

import click

DEFAULT_SPEC = "flare/bce032c0"


def spec_constants(spec_ref: str) -> dict:
    """Constants of a resolved spec, by bundled id or by file path."""
    from pathlib import Path

    from flarespec.adapter.select import bundled_specs, compile_file

    if Path(spec_ref).is_file():
        return compile_file(spec_ref).constants
    for spec in bundled_specs():
        if spec.id == spec_ref:
            return spec.constants
    raise click.BadParameter(f"no bundled spec {spec_ref!r}; see `flarespec spec list`",
                             param_hint="--spec")


@click.group()
def fixture():
    """Synthetic evidence: complete, valid, deterministic packets (always labelled synthetic)."""


@fixture.command("write")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--spec", "spec_ref", default=DEFAULT_SPEC, show_default=True,
              help="Bundled spec id or spec file whose constants shape the packet.")
@click.option("--repetitions", default=1, show_default=True, type=click.IntRange(min=1))
@click.option("--target-arch", default="sm120", show_default=True,
              type=click.Choice(["sm120", "sm121"]))
@click.option("--seed", default=0, show_default=True, type=int, help="Seeds the client timings.")
@click.option("--package-size", default=4096, show_default=True, type=click.IntRange(min=64),
              help="Bytes of the labelled non-model package file.")
@click.option("--pair", is_flag=True,
              help="Write DIRECTORY/baseline and DIRECTORY/candidate: comparable, different timings.")
def write(directory, spec_ref, repetitions, target_arch, seed, package_size, pair):
    """Write a synthetic packet (or a --pair) into the empty or missing DIRECTORY."""
    from flarespec.fixtures.writer import write_packet, write_pair

    constants = spec_constants(spec_ref)
    options = dict(repetitions=repetitions, target_arch=target_arch, seed=seed,
                   package_size=package_size)
    try:
        if pair:
            baseline, candidate = write_pair(directory, constants, **options)
            click.echo(f"baseline:  {baseline}\ncandidate: {candidate}")
        else:
            click.echo(str(write_packet(directory, constants, **options)))
    except FileExistsError as problem:
        raise click.ClickException(f"{problem} (choose an empty or new directory)") from None
