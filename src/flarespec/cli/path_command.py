"""``flarespec path``: what a JSONPath selects from one file, as a spec's rule sees it."""

from __future__ import annotations

import sys

import click

EXIT_REFUSED = 2
# Characters of JSON text printed at most (twice the default document size): a value prints
# its indentation once per level, so `$..*` over a 2 KB file of 984 nested arrays printed
# 636M characters (2.4 GB) before this bound refused it.
MAX_PRINTED = 64 << 20
LOADERS = ("json", "jsonl", "csv", "sse", "prometheus", "text")  # built in; plug-ins too


def _option(_ctx, _param, values: tuple) -> dict:
    """``-o KEY=VALUE`` pairs as loader options; a value is read as JSON when it is JSON
    (``data_json=true``, ``max_mib=8``), else kept as text (``terminator=END``)."""
    import json

    options = {}
    for pair in values:
        key, equals, text = pair.partition("=")
        if not equals or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--option")
        try:
            options[key] = json.loads(text)
        except ValueError:
            options[key] = text
    return options


@click.command("path")
@click.argument("query", metavar="QUERY")
@click.argument("file", metavar="FILE", type=click.Path(dir_okay=False, path_type=str))
@click.option("--as", "loader", metavar="LOADER", default=None,
              help=f"The loader, as a spec's documents name it: {', '.join(LOADERS)} or an "
                   f"installed plug-in's (default: from FILE's extension: .json json, .jsonl "
                   f"jsonl, .csv csv, .sse sse, .prom prometheus).")
@click.option("--option", "-o", "options", multiple=True, callback=_option,
              metavar="KEY=VALUE",
              help="A loader option, as in a spec's documents `options:` (repeatable), "
                   "e.g. -o data_json=true -o terminator=END for sse.")
@click.option("--locations", is_flag=True,
              help='Print [{"location": ..., "value": ...}] instead of the values alone.')
def path(query, file, loader, options, locations):
    """Print what a JSONPath selects from a file, as a spec's rule would see it.

    QUERY is the selector of a rule's `given: "document:QUERY"` (flarespec's JSONPath, RFC
    9535's; docs/spec-language.md, "Path language"). FILE is read as a spec's document
    with that loader and those options would be, and the selected values are printed as
    one JSON array on stdout, in the order the rule visits them. `$` prints the whole
    document as the spec sees it.

    \b
    flarespec path '$.orders[?@.status == "open"].id' orders.json
    flarespec path '$.events[*].json.text' stream.sse -o data_json=true -o terminator=END
    flarespec path --locations '$..status' report.json

    Numbers are printed exactly (a Prometheus sample 0.1 prints 0.1); JSON has no NaN or
    infinity: those print as the strings "NaN", "+Inf", "-Inf". Exit 0 when the query
    compiled and the file loaded (even when nothing is selected: []); 2 when the query is
    refused (the message a spec's lint gives), the file does not load, or the selection
    holds more than 2^20 nodes or prints more than 64 MiB.
    """
    from flarespec.cli.formats import echo
    from flarespec.engine.paths import CompiledJsonPath, PathSyntaxError, json_text, shown_path
    from flarespec.loaders import LoadError
    from flarespec.loaders.by_name import load_file, loader_for
    from flarespec.loaders.limits import gc_paused
    from flarespec.output.visible import json_visible

    try:
        if loader is None:
            loader = loader_for(file)
        path = CompiledJsonPath(query)  # refused before the file is read
        document = load_file(file, loader, options)
        values = path.values(document)  # no match is made for a selection beyond the bounds
    except PathSyntaxError as refused:
        _fail(f"{refused} [spec.path-syntax]")
    except LoadError as problem:
        _fail(f"{file}: {problem}")
    except (ValueError, OSError) as problem:
        _fail(f"{file}: {problem}" if not str(problem).startswith("cannot tell")
              else f"{problem}; name it with --as {'|'.join(LOADERS)}")
    shown, printed = values, _printed_at_least(values)
    if locations and printed <= MAX_PRINTED:
        shown = []
        for match in gc_paused(path.find)(document):
            shown.append({"location": match.location, "value": match.value})
            printed += len(match.location) + 30  # its lines, the names, the quotes
            if printed > MAX_PRINTED:
                break
    if printed > MAX_PRINTED:
        _fail(f"{file}: what {shown_path(query)} selects ({len(values):,} nodes) prints more "
              f"than {MAX_PRINTED >> 20} MiB of JSON (a value's lines are indented once per "
              f"level it is nested): select less")
    echo(json_visible(json_text(shown)))  # a lone surrogate as \ud800, C1 and U+2028 escaped


def _fail(message: str):
    from flarespec.cli.formats import echo
    from flarespec.output.visible import visible

    echo(f"flarespec: {visible(message)}", err=True)
    sys.exit(EXIT_REFUSED)


def _printed_at_least(values: list) -> int:
    """At least the characters ``json_text`` prints for ``values`` (a line per value,
    indented two spaces a level it is nested, and its strings), counted no further than
    just beyond MAX_PRINTED."""
    pending, printed = [(values, 0)], 0
    while pending and printed <= MAX_PRINTED:
        value, level = pending.pop()
        printed += 2 * level + 1
        if isinstance(value, dict):
            printed += sum(len(str(key)) + 4 for key in value)
            pending += [(item, level + 1) for item in reversed(value.values())]
        elif isinstance(value, list):
            pending += [(item, level + 1) for item in reversed(value)]  # in printed order
        elif isinstance(value, str):
            printed += len(value) + 2
    return printed
