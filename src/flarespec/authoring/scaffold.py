"""``flarespec spec new``: the first draft of a child spec for a new revision of the input.

A new revision usually starts as "the same contract, pinned to another revision": the
scaffold is exactly that, marked ``draft: true`` (kept out of packet selection until it
is released; lint's one warning, ``spec.draft``, says so), so it lints without an error
as written, and its comments point at what usually changes. Everything is derived from
the parent, nothing from a particular contract:

- ``applies_to`` keeps the parent's ``given``; when the parent's ``equals`` reads a constant
  (``${source.revision}``) the scaffold keeps that reference and restates the whole
  top-level constant with the new revision (so the rules reading it follow); when it is a
  literal, the new revision is written instead.
- ``id`` is the parent id's family (everything before its last ``/``) plus the first 8
  characters of the revision; ``title``, ``description`` and ``limits`` (headers, not
  inherited) are the parent's with the old revision replaced.

The first line selects the spec's JSON Schema for editors that run yaml-language-server
(``# yaml-language-server: $schema=...``, see ``schema_reference``); the loader reads it as
the YAML comment it is.

The text is written here (a YAML emitter would drop the comments); each value goes through
PyYAML's safe representer so that quoting is always right.
"""

from __future__ import annotations

import copy
import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from flarespec.compiler.errors import SpecInvalid, SpecIssue
from flarespec.compiler.resolve import ResolvedSpec
from flarespec.compiler.tokens import Token, find_tokens
from flarespec.compiler.yamlmarks import plain

SCAFFOLD = "spec.scaffold"
SHORT_REVISION = 8
REVISION = re.compile(r"[A-Za-z0-9._-]+")  # safe in an id and in a file name
LONG_TEXT = 80  # characters: longer text is written as a folded block


@dataclass(frozen=True)
class Pin:
    """How the parent pins its revision: the applies_to condition (as written), and the
    constant its ``equals`` reads, if any (top-level name, member path below it)."""
    applies_to: dict
    constant: str | None
    members: tuple[str, ...]
    old_revision: str


SCHEMA_LINE = "# yaml-language-server: $schema="
# A scaffold is a draft (docs/editing-specs.md, step 1): never selected for a packet, nor
# the default spec of the writer, until the pull request that releases it removes these lines.
DRAFT_LINES = (
    "# A draft while you edit: never chosen for a packet (name it with --spec FILE) nor the",
    "# default spec of fixture write and demo. Remove these lines when the revision is released.",
    "draft: true",
)


def schema_reference(out: Path | None) -> str:
    """Where the draft's editor finds the spec schema shipped with this flarespec
    (authoring/schema.py): relative to the written file's directory, so that in a checkout
    (flarespec's own, or a project whose virtualenv is inside it) the line is the same for
    every clone and follows the installed version; without a file (stdout), or where no
    relative path exists (another drive), the absolute ``file://`` URI of this machine."""
    from flarespec.authoring.schema import shipped_path

    target = shipped_path("spec")
    if out is not None:
        try:
            return Path(os.path.relpath(target, Path(os.path.abspath(out)).parent)).as_posix()
        except ValueError:
            pass
    return target.as_uri()


def scaffold(parent: ResolvedSpec, revision: str, spec_id: str | None = None,
             schema: str | None = None) -> str:
    """The text of a child of ``parent`` pinned to ``revision``, its first line naming the
    JSON Schema ``schema`` (when given, see ``schema_reference``); SpecInvalid (code
    spec.scaffold) when the parent pins nothing or already covers that revision."""
    if not REVISION.fullmatch(revision):
        _refuse(f"revision {revision!r} is not a revision: one word of letters, digits, "
                f"'.', '_' or '-' (e.g. a commit SHA)")
    pin = _pin(parent)
    if str(pin.old_revision) == revision:
        _refuse(f"{parent.id} already applies to {revision!r}: a child must pin another "
                f"revision, or both specs would apply to the same packets")
    spec_id = spec_id or derived_id(parent.id, revision)
    header = _header(parent, str(pin.old_revision), revision)
    applies_to = dict(pin.applies_to)
    constants = {}
    if pin.constant is None:
        applies_to["equals"] = revision
    else:
        constants[pin.constant] = _restated(parent, pin, revision)
    text = _render(parent.id, {"flarespec": 1, "id": spec_id, **header, "extends": parent.id},
                   revision, applies_to, constants)
    return f"{SCHEMA_LINE}{schema}\n{text}" if schema else text


def derived_id(parent_id: str, revision: str) -> str:
    """``family/abcdef12``: the parent id's family and the revision's first characters."""
    family = parent_id.rpartition("/")[0]
    short = revision[:SHORT_REVISION]
    return f"{family}/{short}" if family else short


def _header(parent: ResolvedSpec, old: str, revision: str) -> dict:
    """The parent's title, description and limits (not inherited: a child states its own)
    with the old revision replaced, so that a review diff shows only what really changed."""
    header = {key: str(parent.data[key]).replace(old, revision)
              for key in ("title", "description", "limits") if key in parent.data}
    if header.get("title") == parent.data.get("title"):
        header["title"] = f"{parent.data.get('title', parent.id)} (revision {revision})"
    return header


def _pin(parent: ResolvedSpec) -> Pin:
    # applies_to is a header, not inherited: the parent's own file states it or nothing does
    own = plain(parent.chain[0].data).get("applies_to")
    if not isinstance(own, dict) or "equals" not in own:
        _refuse(f"{parent.id} has no applies_to with `equals`: there is no revision to "
                f"re-pin (write the child's applies_to by hand)")
    token = _whole_token(str(own["equals"]))
    if token is None:
        return Pin(own, None, (), own["equals"])
    name, *members = token.name.split(".")
    return Pin(own, name, tuple(members), parent.data["applies_to"]["equals"])


def _whole_token(text: str) -> Token | None:
    """The one ``${name.path}`` (no filter) that is all of ``text`` (compiler/tokens.py)."""
    tokens = list(find_tokens(text))
    if len(tokens) == 1 and tokens[0].text == text and tokens[0].filter is None:
        return tokens[0]
    return None


def _restated(parent: ResolvedSpec, pin: Pin, revision: str):
    value = copy.deepcopy(plain(parent.data["constants"][pin.constant]))
    if not pin.members:
        return revision
    holder = value
    for member in pin.members[:-1]:
        holder = holder[member]
    holder[pin.members[-1]] = revision
    return value


def _refuse(message: str) -> None:
    raise SpecInvalid([SpecIssue(message, None, SCAFFOLD)])


class _Dumper(yaml.SafeDumper):
    """safe_dump's values; long text as a folded block (``>``), as spec authors write it."""


def _text(dumper: yaml.SafeDumper, value: str):
    style = ">" if len(value) > LONG_TEXT else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def _dump(mapping: dict) -> str:
    """A mapping, one key per line in its order, block style at the top; below, innermost
    lists and maps in flow style (``symbols: [a, b]``), as a spec author writes them."""
    return "\n".join(
        yaml.dump({key: value}, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
                       default_flow_style=None if isinstance(value, (dict, list)) else False
                       ).rstrip("\n")
        for key, value in mapping.items())


def _indent(text: str, prefix: str = "  ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _render(parent_id: str, header: dict, revision: str, applies_to: dict,
            constants: dict) -> str:
    parts = [
        f"# A child of {parent_id} for revision {revision}.",
        "# Scaffolded by `flarespec spec new`: as written it is the parent's contract pinned to",
        "# the new revision. Edit what the revision changed, then:",
        "#   flarespec spec lint THIS_FILE           every issue at once (file:line:column)",
        "#   flarespec spec test THIS_FILE           the inherited cases, built from your constants",
        f"#   flarespec spec diff {parent_id} THIS_FILE   what changed, for the review",
        _dump(header),
        *DRAFT_LINES,
        "",
        "# Selects this spec for packets of the new revision (must not overlap the parent's).",
        _dump({"applies_to": applies_to}),
    ]
    if constants:
        parts += ["",
                  "# Constants: restate only what changed (a name given here replaces the",
                  "# parent's whole value). Usually: renamed names, sizes, formats, file names.",
                  "# A dotted name (a.b: value) replaces only that member of the parent's value.",
                  "constants:",
                  _indent(_dump(constants))]
    parts += ["",
              "# Documents the revision no longer keeps (lint names every rule still reading one):",
              "# drop_documents: [DOCUMENT_ID]",
              "# Inherited rules that no longer hold:",
              "# drop_rules: [RULE_ID]",
              "# Rules added, replaced (the inherited id and `replaces: true`) or renamed",
              "# (`renamed_from: OLD_ID` keeps the place and history of the inherited rule):",
              "# rules:",
              "#   - id: INHERITED_RULE_ID",
              "#     replaces: true",
              "#     ...",
              "#   - id: NEW_RULE_ID",
              "#     renamed_from: OLD_RULE_ID",
              "#     ...",
              "# Shapes change member by member (shapes: {DOCUMENT_SHAPE: {members: {NEW: integer}}},",
              "# drop_members: [OLD]); a document's shape is in the parent's shapes:",
              ""]
    return "\n".join(parts)
