"""``flarespec spec new``: scaffold a child spec for a new revision (logic: authoring/scaffold.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

EXIT_USAGE = 2

HELP = """Scaffold a child of the spec FROM (bundled id or file) for REVISION.

The draft extends FROM, pins applies_to to REVISION (the parent's condition, with the
constant it reads restated for the new revision), and comments on what usually changes:
constants, drop_documents, drop_rules, rules (renamed_from). As written it lints clean.

\b
Without --out the draft goes to stdout. An existing --out file is refused (exit 2)
unless --force.
\b
The first line, `# yaml-language-server: $schema=...`, gives editors the spec schema
shipped with this flarespec (see `flarespec spec schema --help`): relative to the --out
file, or on stdout the absolute file:// URI of this machine's copy.
\b
Example:
  flarespec spec new --from shop/v1 --revision 0123abcd... --out specs/shop/0123abcd.yaml
  flarespec spec lint specs/shop/0123abcd.yaml
"""


@click.command("new", help=HELP)
@click.option("--from", "parent_ref", required=True, metavar="ID|FILE",
              help="The spec the new revision starts from (usually the newest of its family).")
@click.option("--revision", required=True, help="The new revision (e.g. a full commit SHA).")
@click.option("--id", "spec_id", help="The new spec's id (default: FROM's family and the "
                                      "revision's first 8 characters).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the draft here instead of stdout.")
@click.option("--force", is_flag=True, help="Replace an existing --out file.")
def spec_new(parent_ref, revision, spec_id, out, force):
    from flarespec.compiler.errors import SpecInvalid
    from flarespec.compiler.open import open_spec
    from flarespec.authoring.scaffold import scaffold, schema_reference

    try:
        parent = open_spec(parent_ref)
        text = scaffold(parent, revision, spec_id, schema_reference(out))
    except SpecInvalid as problem:
        click.echo(str(problem), err=True)
        sys.exit(EXIT_USAGE)
    if out is None:
        click.echo(text, nl=False)
        return
    from flarespec.adapter.receipt import OutputRefused, refuse_inputs

    try:  # even with --force: the draft would replace the spec it is drafted from
        refuse_inputs(out, out, [(str(layer.path), "a spec file (FROM or a parent)")
                                 for layer in parent.chain])
    except OutputRefused as refused:
        click.echo(f"error: --out refused: {refused}; nothing was written", err=True)
        sys.exit(EXIT_USAGE)
    if out.exists() and not force:
        click.echo(f"error: {out} exists; pass --force to replace it", err=True)
        sys.exit(EXIT_USAGE)
    from flarespec.cli.formats import write_file

    write_file(out, text, "--out")
    click.echo(f"wrote {out}: next, `flarespec spec lint {out}`", err=True)
