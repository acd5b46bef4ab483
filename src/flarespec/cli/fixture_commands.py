"""``flarespec fixture``: write synthetic packets for tests, demos and spec work."""

from __future__ import annotations

import click

DEFAULT_SPEC = "flare/bce032c0"


def spec_constants(spec_ref: str) -> dict:
    """Constants of a resolved spec, by bundled id or by file path."""
    from pathlib import Path

    from flarespec.adapter.select import bundled_specs, compile_file
    from flarespec.spec.errors import SpecInvalid

    if Path(spec_ref).exists() or Path(spec_ref).is_symlink():  # a FIFO too: refused by name
        try:
            return compile_file(spec_ref).constants
        except SpecInvalid as problem:
            raise click.BadParameter(f"\n{problem}", param_hint="--spec") from None
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


@fixture.command("check")
@click.argument("catalog", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--spec", "spec_path", type=click.Path(exists=True, dir_okay=False),
              help="Validate with this spec file (and write packets from its constants) "
                   "instead of the catalog's bundled spec: see what an edit changes.")
@click.option("-k", "pattern", help="Only cases whose name contains this text.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def check(catalog, spec_path, pattern, fmt):
    """Build every case of CATALOG (default: the bundled Flare catalog), measure it, and
    compare with the rule ids it expects. Exit 0 when every case behaves as expected."""
    import json
    import sys

    from flarespec.fixtures.catalog import load_catalog
    from flarespec.fixtures.check import bundled_catalog_dir, check_catalog

    catalog = catalog or bundled_catalog_dir() / "flare" / "catalog.yaml"
    spec_id, cases = load_catalog(catalog)
    cases = [case for case in cases if not pattern or pattern in case.name]
    constants = spec_constants(spec_path or spec_id)
    results = check_catalog(cases, constants, spec_path)
    if fmt == "json":
        click.echo(json.dumps([{k: v for k, v in vars(r).items() if k != "violations"}
                               for r in results], indent=2))
    else:
        for result in results:
            mark = "ok  " if result.ok else ("xfail" if result.known_issue else "FAIL")
            line = f"{mark} {result.name}: expected {result.expected}"
            click.echo(line if result.ok else f"{line}; got {result.got}")
        failed = sum(not r.ok and not r.known_issue for r in results)
        click.echo(f"{len(results) - failed}/{len(results)} cases as expected", err=True)
    sys.exit(0 if all(r.ok or r.known_issue for r in results) else 2)
