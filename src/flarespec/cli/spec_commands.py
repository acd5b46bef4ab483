"""``flarespec spec``: list, show, lint and diff specs."""

from __future__ import annotations

import sys

import click

from flarespec.cli.formats import emit, format_options
from flarespec.cli.lazy import LazyGroup

# name -> ("module:attribute", summary listed by `flarespec spec --help` without importing it)
LAZY_COMMANDS = {
    "diff": ("flarespec.cli.diff_command:diff",
             "Show what changed between two specs, field by field, classed by what it does "
             "to the set of accepted inputs: tightening, loosening, review (undecidable: the "
             "reason is given) or neutral (wording)."),
    "impact": ("flarespec.cli.diff_command:impact",
               "Run OLD and NEW over stored inputs and show whose verdict flips, and why."),
    "test": ("flarespec.cli.spec_test_command:spec_test",
             "Run the cases of each SPEC (bundled id or file; default: every bundled spec "
             "that has a catalog) and check them strictly."),
    "new": ("flarespec.cli.spec_new_command:spec_new",
            "Scaffold a child of the spec FROM (bundled id or file) for REVISION."),
    "schema": ("flarespec.cli.spec_schema_command:spec_schema", "Print the JSON Schema of a spec file, a catalog or an acks file (for editors)."),
}


def _open(spec_ref: str):
    """The resolved spec (bundled id or file); a problem is printed, exit 2."""
    from flarespec.compiler.errors import SpecInvalid
    from flarespec.compiler.open import open_spec

    try:
        return open_spec(spec_ref)
    except SpecInvalid as problem:
        click.echo(str(problem), err=True)
        sys.exit(2)


@click.group(cls=LazyGroup, lazy=LAZY_COMMANDS)
def spec():
    """Work with specs: the contract as versioned YAML.

    \b
    A SPEC is a bundled id (see `flarespec spec list`) or a spec file; a file finds its
    parent (extends) beside it, named after the parent id's last segment, then among the
    bundled specs.
    """


@spec.command("kinds")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per kind, in a list.")
def list_kinds(name, as_json):
    """List the assertion kinds a rule's `assert` may name, each with its documentation (or
    NAME's alone). Every kind is one function in engine/kinds.py; see docs/spec-language.md
    "Assertion kinds".

    \b
    flarespec spec kinds
    flarespec spec kinds range
    flarespec spec kinds --json
    """
    import inspect
    import json

    from flarespec.engine.kinds import KINDS
    from flarespec.compiler.errors import did_you_mean

    if name is not None and name not in KINDS:
        click.echo(f"error: unknown assertion kind {name!r}{did_you_mean(name, KINDS)}",
                   err=True)
        sys.exit(2)
    kinds = [KINDS[name]] if name else [KINDS[key] for key in sorted(KINDS)]
    if as_json:
        click.echo(json.dumps([{"name": kind.name, "collective": kind.collective,
                                "accepts_empty": kind.accepts_empty, "doc": kind.doc}
                               for kind in kinds], indent=2, ensure_ascii=False))
        return
    for kind in kinds:
        traits = ", ".join(trait for trait, on in (("collective", kind.collective),
                                                   ("accepts an empty selection",
                                                    kind.accepts_empty)) if on)
        click.echo(f"{kind.name}" + (f"  ({traits})" if traits else ""))
        doc = inspect.cleandoc(kind.doc)
        doc = doc if name else doc.split("\n\n")[0]
        click.echo("".join(f"    {line}\n" for line in doc.splitlines()).rstrip("\n"))


@spec.command("list")
def list_specs():
    """List the bundled specs and what each applies to (a spec without applies_to is
    never chosen for a packet: it is used only when named with --spec)."""
    from flarespec.adapter.select import describe_condition, is_draft
    from flarespec.compiler.open import bundled_loadable

    specs, problems = bundled_loadable()
    for compiled in specs:
        draft = "  (draft: never chosen for a packet)" if is_draft(compiled) else ""
        click.echo(f"{describe_condition(compiled)}  [{len(compiled.rules)} rules]  "
                   f"{compiled.resolved.chain[0].path}{draft}")
    for issue in problems:
        click.echo(f"error: {issue} (this file is skipped: no packet is matched against it)",
                   err=True)
    if problems:
        raise SystemExit(2)


@spec.command("show")
@click.argument("spec_ref", metavar="SPEC")
@click.option("--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True,
              help="yaml: each rule preceded by comments saying where it runs and whether "
                   "SPEC inherited, overrode, added or renamed it; json: the same under "
                   "rule_runs and rule_status.")
def show(spec_ref, fmt):
    """Print SPEC resolved: extends applied, constants substituted, id and title first,
    each rule marked inherited / overridden / added / renamed (relative to its parent) and,
    when SPEC compiles, where it runs: per element of the iteration whose documents are
    released element by element, before its elements, or after them (such a rule reads
    released documents again: docs/spec-language.md, "How a spec is processed")."""
    from flarespec.engine.schedule import placements
    from flarespec.review.show import render_json, render_yaml
    from flarespec.compiler.errors import SpecInvalid
    from flarespec.compiler.open import open_compiled

    resolved = _open(spec_ref)
    try:
        runs = placements(open_compiled(spec_ref))
    except SpecInvalid:  # shown as resolved; `spec lint` says what does not compile
        runs = None
    click.echo(render_json(resolved, runs) if fmt == "json" else render_yaml(resolved, runs))


@spec.command("lint")
@click.argument("spec_refs", nargs=-1, required=True, metavar="SPEC...")
@format_options()
@click.option("--strict", is_flag=True, help="Warnings fail too (exit 2).")
def lint(spec_refs, fmt, root, strict):
    """Check specs and report every issue at once, each at file:line:column with a code.

    \b
    Errors: YAML and shape, extends, unknown kinds, hooks, documents, iterations,
    constants and rule ids (with a "did you mean"), path and formula syntax, kind and hook
    arguments, placeholders that cannot be filled, references to dropped documents, and an
    applies_to that overlaps another spec of the library (both ids named).
    Warnings: no applies_to, ${...} kept as text inside constants, applies_to overlap that
    cannot be decided, rule literals equal to a constant's value.
    \b
    flarespec spec lint specs/shop/v2.yaml
    flarespec spec lint --format sarif specs/shop/*.yaml > lint.sarif
    \b
    Exit 0 when no spec has an error (warnings allowed unless --strict), 2 otherwise.
    """
    from flarespec.authoring.lint import lint as run, lint_report

    report = lint_report(run(list(spec_refs)), strict)
    emit(report, fmt, root=root)
    sys.exit(0 if report.ok else 2)
