"""``flarespec spec``: list, show, lint and diff specs."""

from __future__ import annotations

import json
import sys

import click


def _load(spec_ref: str):
    """A resolved spec by bundled id or file path; SpecInvalid propagates."""
    from pathlib import Path

    from flarespec.spec.load import SpecLibrary
    from flarespec.spec.resolve import resolve

    # any path that exists is a file; read_spec_file refuses a FIFO, device or directory
    if Path(spec_ref).exists() or Path(spec_ref).is_symlink():
        library, spec_file = SpecLibrary.for_file(spec_ref)
        return resolve(spec_file, library)
    library = SpecLibrary()
    spec_file = library.get(spec_ref)
    if spec_file is None:
        raise click.BadParameter(f"{spec_ref!r} is neither a file nor a bundled spec id")
    return resolve(spec_file, library)


@click.group()
def spec():
    """Work with specs: the contract as versioned YAML."""


@spec.command("list")
def list_specs():
    """List the bundled specs and what each applies to."""
    from flarespec.adapter.select import bundled_specs, describe_condition

    for compiled in bundled_specs():
        click.echo(f"{describe_condition(compiled)}  [{len(compiled.rules)} rules]  "
                   f"{compiled.resolved.chain[0].path}")


@spec.command("show")
@click.argument("spec_ref")
@click.option("--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True)
def show(spec_ref, fmt):
    """Print SPEC_REF (id or file) resolved: extends applied, constants substituted."""
    import yaml

    from flarespec.spec.errors import SpecInvalid

    try:
        resolved = _load(spec_ref)
    except SpecInvalid as problem:
        click.echo(str(problem), err=True)
        sys.exit(2)
    data = resolved.plain()
    if fmt == "json":
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))


@spec.command("lint")
@click.argument("spec_refs", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json: one object per spec with its issues (for CI annotations).")
def lint(spec_refs, fmt):
    """Check specs: shape, names, paths, formulas, kind arguments; errors as file:line:column.

    Exit 0 when every spec compiles, 2 otherwise.
    """
    from flarespec.spec.compile import compile_spec
    from flarespec.spec.errors import SpecInvalid

    results = []
    for spec_ref in spec_refs:
        try:
            compiled = compile_spec(_load(spec_ref))
            results.append({"spec": spec_ref, "id": compiled.id, "ok": True,
                            "rules": len(compiled.rules), "issues": []})
        except SpecInvalid as problem:
            results.append({"spec": spec_ref, "ok": False,
                            "issues": [issue.as_dict() for issue in problem.issues]})
    if fmt == "json":
        click.echo(json.dumps(results, indent=2))
    else:
        for result in results:
            if result["ok"]:
                click.echo(f"{result['spec']}: ok ({result['id']}, {result['rules']} rules)")
            for issue in result["issues"]:
                where = ":".join(str(issue[k]) for k in ("file", "line", "column") if issue[k])
                click.echo(f"{where + ': ' if where else ''}{issue['message']} [{issue['code']}]")
    sys.exit(0 if all(result["ok"] for result in results) else 2)


@spec.command("diff")
@click.argument("old_ref")
@click.argument("new_ref")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def diff(old_ref, new_ref, fmt):
    """Compare two resolved specs rule by rule (keyed by rule id) for review."""
    from flarespec.spec.diff import diff_specs, render_diff
    from flarespec.spec.errors import SpecInvalid

    try:
        changes = diff_specs(_load(old_ref).plain(), _load(new_ref).plain())
    except SpecInvalid as problem:
        click.echo(str(problem), err=True)
        sys.exit(2)
    if fmt == "json":
        click.echo(json.dumps(changes, indent=2))
    else:
        click.echo(render_diff(changes))
